// Child processes for the benches: a temp dir that cleans up after itself,
// and a process of the build tree (nanotick-exchange, nanotick-trader, ...)
// as a benchmark subject: spawned with its stdout and stderr in files, waited on
// for a line in its log, signalled, reaped with a deadline, and sampled for
// what the scheduler did to its main thread. Start-up and shutdown code only:
// it allocates and throws, naming the process and what failed. Not
// thread-safe: owned by the benchmark's main thread, which must not be pinned
// when it spawns (a child inherits the caller's CPU affinity; the subjects
// pin themselves from their configs).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace nanotick::bench {

// A directory under $TMPDIR (else /tmp) removed with everything in it on
// destruction. The journal lives here, so it is on a real file system unless
// $TMPDIR points at a tmpfs (then fdatasync costs nothing: the header says).
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/nanotick-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a temp dir from '" + pattern + "': " + std::strerror(errno) +
                               " (set TMPDIR to a writable directory)");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);  // best effort: a leftover dir in /tmp is harmless
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// build/<preset>/bench/<this binary> -> build/<preset>/bin/<name>; `target`
// is the CMake target that builds it (for the message when it is missing).
inline std::filesystem::path find_build_binary(std::string_view name, std::string_view target) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot read /proc/self/exe to find " + std::string(name) + ": " + ec.message());
  const std::filesystem::path exe = self.parent_path().parent_path() / "bin" / std::string(name);
  if (::access(exe.c_str(), X_OK) != 0)
    throw std::runtime_error("cannot find " + std::string(name) + " at " + exe.string() +
                             " (build it: cmake --build build/release --target " + std::string(target) + ")");
  return exe;
}

// "key value" lines (how the exchange and the trader print their counters
// and summaries); lines without a space are skipped. Values stay text: some
// are reals ("pnl.total 12.500000").
inline std::map<std::string, std::string> parse_key_values(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t space = line.rfind(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size()) continue;
    out[line.substr(0, space)] = line.substr(space + 1);
  }
  return out;
}

class ChildProcess {
 public:
  // What the scheduler did to one of its threads so far.
  struct Sched {
    std::uint64_t involuntary_switches = 0;  // /proc/<pid>/task/<tid>/status nonvoluntary_ctxt_switches
    double cpu_seconds = 0;                  // utime + stime of /proc/<pid>/task/<tid>/stat
  };

  // Starts `binary args...` with stdout in <log_stem>.stdout and stderr in
  // <log_stem>.stderr. `label` names it in every message.
  ChildProcess(std::string label, const std::filesystem::path& binary, std::vector<std::string> args,
               const std::filesystem::path& log_stem)
      : label_(std::move(label)),
        stdout_path_(log_stem.string() + ".stdout"),
        stderr_path_(log_stem.string() + ".stderr") {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    args.insert(args.begin(), binary.string());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
      throw std::runtime_error("cannot start " + label_ + " (" + binary.string() + "): " + std::strerror(rc));
  }

  ~ChildProcess() { kill_now(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& label() const noexcept { return label_; }
  std::string out() const { return read_file(stdout_path_); }
  std::string err() const { return read_file(stderr_path_); }

  // False once it has exited (reaped here; exit_status() then tells how).
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      status_ = status;
      return false;
    }
    return true;
  }

  // Polls its stderr until a line contains `marker`; returns the rest of
  // that line after the marker. Throws, with its log, if it exits first or
  // the marker does not appear within `timeout`.
  std::string wait_for_log(std::string_view marker, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const std::string text = err();
      if (const std::size_t at = text.find(marker); at != std::string::npos) {
        const std::size_t from = at + marker.size();
        const std::size_t end = text.find('\n', from);
        if (end != std::string::npos) return text.substr(from, end - from);
      }
      if (!running())
        throw std::runtime_error(label_ + " exited (status " + std::to_string(status_) + ") before logging '" +
                                 std::string(marker) + "'; its log:\n" + text);
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(label_ + " did not log '" + std::string(marker) + "' within " +
                                 std::to_string(timeout.count()) + " ms; its log:\n" + text);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  void signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }

  // Waits for the exit (after signal()) and requires exit code 0; throws,
  // with its log, on a deadline, a non-zero exit or a death by signal.
  void wait_clean_exit(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (running()) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(label_ + " did not exit within " + std::to_string(timeout.count()) +
                                 " ms of being told to stop; its log:\n" + err());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!WIFEXITED(status_) || WEXITSTATUS(status_) != 0)
      throw std::runtime_error(label_ + " did not exit cleanly (wait status " + std::to_string(status_) +
                               "); its log:\n" + err());
  }

  // What the scheduler did to its main thread (the trader's compact loop
  // runs on it), or to its thread named `thread_name` ("nt-critical",
  // "nt-aux": the exchange names its threads). Zeros once it has exited or
  // if there is no such thread.
  Sched main_thread_sched() const {
    if (pid_ <= 0) return Sched{};
    return sched_of("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(pid_));
  }
  Sched thread_sched(std::string_view thread_name) const {
    if (pid_ <= 0) return Sched{};
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/task", ec)) {
      std::string comm = read_file(task.path() / "comm");
      while (!comm.empty() && comm.back() == '\n') comm.pop_back();
      if (comm == thread_name) return sched_of(task.path());
    }
    return Sched{};
  }

 private:
  static Sched sched_of(const std::filesystem::path& task) {
    Sched s;
    std::istringstream status(read_file(task / "status"));
    for (std::string line; std::getline(status, line);) {
      static constexpr std::string_view kKey = "nonvoluntary_ctxt_switches:";
      if (line.rfind(kKey, 0) == 0) s.involuntary_switches = std::stoull(line.substr(kKey.size()));
    }
    // stat: "tid (comm) state ..." with utime and stime the 12th and 13th
    // fields after the ")" (the comm may contain spaces).
    const std::string stat = read_file(task / "stat");
    const std::size_t paren = stat.rfind(')');
    if (paren == std::string::npos) return s;
    std::istringstream fields(stat.substr(paren + 1));
    std::string field;
    std::uint64_t ticks = 0;
    for (int i = 1; i <= 13 && fields >> field; ++i)
      if (i >= 12) ticks += std::stoull(field);
    s.cpu_seconds = static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
    return s;
  }

  void kill_now() noexcept {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  std::string label_;
  std::filesystem::path stdout_path_;
  std::filesystem::path stderr_path_;
  pid_t pid_ = -1;
  int status_ = 0;  // wait status once reaped
};

}  // namespace nanotick::bench
