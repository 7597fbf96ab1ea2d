// What every long-running nanotick program does the same way around its
// main loop: stop on SIGINT/SIGTERM without unsafe work in the handler (it
// only records the signal; the loop polls stop_signal()), ignore SIGPIPE (a
// peer that goes away is an I/O error, not a death), and log one line at a
// time to stderr as "<program>: <text>" (the demo and the tests read these
// lines). One main thread calls these; the handler is the only other writer.
#pragma once

#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>

namespace nanotick::apps {

namespace detail {
inline volatile std::sig_atomic_t stop_signal = 0;
inline std::string log_name = "nanotick";
extern "C" inline void on_stop_signal(int sig) { stop_signal = sig; }
}  // namespace detail

// Installs the handlers; call once, before starting threads.
inline void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = detail::on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

// The signal that asked the program to stop, 0 while none has.
inline int stop_signal() noexcept { return detail::stop_signal; }
inline const char* stop_signal_name() noexcept {
  return detail::stop_signal == SIGINT ? "SIGINT" : detail::stop_signal == SIGTERM ? "SIGTERM" : "no signal";
}

// The prefix of every log line (the program's name, e.g. "nanotick-trader[mm1]").
inline void set_log_name(std::string name) { detail::log_name = std::move(name); }

inline void log_line(std::string_view text) {
  std::fprintf(stderr, "%s: %.*s\n", detail::log_name.c_str(), static_cast<int>(text.size()), text.data());
  std::fflush(stderr);
}

}  // namespace nanotick::apps
