// What every long-running nanotick program does the same way around its
// main loop: stop on SIGINT/SIGTERM without unsafe work in the handler (it
// only records the signal; the loop polls stop_signal()), ignore SIGPIPE (a
// peer that goes away is an I/O error, not a death), and log.
//
// Logging (docs/CONTRIBUTING.md "How the programs log"): one core::Logger per
// process (ProcessLog, made in main once the program's name is known, stopped
// when it goes out of scope) writes the lines to stderr on its own thread as
// "<program>: <text>" (LogLayout::kPlain; the demo and the tests read these
// lines). Every line of the programs comes from their main thread, so the
// lines keep the order they were logged in (one ring, first in first out):
// whatever is logged before "ready" is on stderr before it.
//   - log_line(text): start-up, status, shutdown and error lines. When the
//     ring is full it waits for room: never lost. Before the logger exists
//     (config errors) and after it stopped (the error that ends main) it
//     writes the line to stderr itself -- after the stop, so after every line
//     the logger took.
//   - a hot thread (the trader's engine loop) logs with
//     NT_LOG_WITH(process_logger(), level, core::LogFullPolicy::kDrop, ...):
//     it copies the values and never waits; a line that finds the ring full
//     is dropped and counted, and ~ProcessLog says how many were.
//
// Threads: the main thread calls all of these; the signal handler is the only
// other writer (of the stop flag).
#pragma once

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <string_view>

#include "core/logger.hpp"

namespace nanotick::apps {

namespace detail {
inline volatile std::sig_atomic_t stop_signal = 0;
inline std::string log_name = "nanotick";
inline core::Logger* logger = nullptr;  // the ProcessLog's while it runs
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

// The prefix of every log line (the program's name, e.g. "nanotick-trader[mm1]")
// written before the logger exists or after it stopped.
inline void set_log_name(std::string name) { detail::log_name = std::move(name); }

// The process's logger: started by the constructor, stopped (every line it
// accepted written) by the destructor. One at a time, made by the main thread.
class ProcessLog {
 public:
  // `name`: the program, e.g. "nanotick-trader[mm1]"; also set_log_name's.
  explicit ProcessLog(const std::string& name) : logger_(options(name)) {
    set_log_name(name);
    detail::logger = &logger_;
  }
  ~ProcessLog() {
    detail::logger = nullptr;
    logger_.stop();
    if (const std::uint64_t n = logger_.dropped(); n != 0)
      std::fprintf(stderr, "%s: log: %llu line(s) dropped (log ring full)\n", detail::log_name.c_str(),
                   static_cast<unsigned long long>(n));
  }
  ProcessLog(const ProcessLog&) = delete;
  ProcessLog& operator=(const ProcessLog&) = delete;

  core::Logger& logger() noexcept { return logger_; }

 private:
  static core::LoggerOptions options(const std::string& name) {
    core::LoggerOptions o;  // stderr, 1 MiB ring per logging thread
    o.layout = core::LogLayout::kPlain;
    o.line_prefix = name + ": ";
    o.full_policy = core::LogFullPolicy::kBlock;  // the call sites say otherwise where they must
    o.backend_name = "nt-log";
    // A few lines a second at most: the back end wakes every 5 ms rather than
    // every 100 us, leaving the CPUs to the critical threads.
    o.idle_sleep = std::chrono::milliseconds(5);
    return o;
  }

  core::Logger logger_;
};

// The running ProcessLog's logger (main thread; only while one exists).
inline core::Logger& process_logger() noexcept { return *detail::logger; }

// One line, "<program>: <text>", from the main thread's cold paths (see the
// header comment): through the logger, waiting for room; straight to stderr
// when no logger runs, or when it refused the line (longer than half its
// ring), then after the lines before it.
inline void log_line(std::string_view text) {
  if (core::Logger* log = detail::logger) {
    static constexpr core::LogSite kSite =
        decltype(core::log_detail::arg_list(text))::make_site(core::LogLevel::kInfo, "{}", __FILE__, __LINE__);
    if (log->log(core::LogFullPolicy::kBlock, kSite, text)) return;
    log->flush();
  }
  std::fprintf(stderr, "%s: %.*s\n", detail::log_name.c_str(), static_cast<int>(text.size()), text.data());
  std::fflush(stderr);
}

}  // namespace nanotick::apps
