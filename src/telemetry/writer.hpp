// Writer: owns a process's recorders and the background thread that drains
// them into one telemetry file (format: file_format.hpp, docs/TELEMETRY.md).
//
// Thread-safety: the owning thread calls create_recorder(), start(), stop()
// and the destructor; records_written() and dropped() may be called from any
// thread; error() after stop(). Recording threads touch only their own
// Recorder (through a ThreadBinding), never the Writer.
//
// Life cycle:
//   Writer w({.path = ".../telemetry/exchange.ntt", .process_name = "exchange"});
//   Recorder& r = w.create_recorder("engine");   // one per recording thread
//   w.start();                                   // header written, back end running
//   ... threads bind their recorder and record ...
//   w.stop();                                    // after the recording threads stopped
//
// Start-up (constructor, create_recorder, start) allocates and throws with
// the reason and the fix. After start() the back end allocates nothing: it
// copies records from the rings into one pre-allocated buffer and writes it
// with write(2) once 64 KiB are waiting or 50 ms have passed. It drains every
// drain_period (1 ms by default) and at once again when a pass filled the
// buffer, so a ring absorbs any burst shorter than its 64 Ki records.
//
// stop() drains every record published before it was called, writes the
// trailer (end time, per-recorder records and drops) and the footer, and
// closes the file. A failed write is counted and ends the file's writing
// (error() says why): the file then has no footer, which readers report as a
// file cut short, rather than a file whose trailer disagrees with its records.
// The Writer must outlive every ThreadBinding of its recorders.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tsc_clock.hpp"
#include "telemetry/recorder.hpp"

namespace nanotick::telemetry {

struct WriterOptions {
  std::string path;          // file to create (an existing one is truncated); its directory must exist
  std::string process_name;  // written in the header: 1..63 printable ASCII bytes
  std::chrono::microseconds drain_period{1000};  // back-end period, 1 us .. 1 s
  int cpu = -1;              // pin the back-end thread; -1 = don't pin
  std::string thread_name = "nt-telemetry";
  const core::TscClock* clock = nullptr;  // must outlive the writer; nullptr = TscClock::global()
};

class WriterBackend;

class Writer {
 public:
  // Validates the options and creates the file. Throws std::invalid_argument
  // (bad option) or std::runtime_error (the file cannot be created).
  explicit Writer(WriterOptions options);
  ~Writer();  // stop()

  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // A new recorder for one recording thread, owned by the writer. Before
  // start() only (std::logic_error after); std::invalid_argument for a bad or
  // duplicate name.
  Recorder& create_recorder(std::string name);

  // Writes the header and point table and starts the back-end thread. Throws
  // std::logic_error if called twice or after stop(), std::runtime_error if
  // the header cannot be written or the thread cannot be pinned to `cpu`.
  void start();

  // Drains, writes the trailer and footer, closes the file. Idempotent. Call
  // it once the recording threads have stopped recording: a record made
  // after stop() began may or may not be in the file (then it is in neither
  // the file nor the drop count). Without start(), writes a valid file with
  // no records.
  void stop();

  std::uint64_t records_written() const noexcept;  // records copied out of the rings so far
  std::uint64_t dropped() const noexcept;          // sum of the recorders' drops so far
  std::uint64_t write_errors() const noexcept;     // failed writes (the first ends the file)
  // After stop(): empty, or why the file is incomplete.
  std::string error() const;
  const std::string& path() const noexcept { return options_.path; }
  const core::TscClock& clock() const noexcept { return *clock_; }

 private:
  WriterOptions options_;
  const core::TscClock* clock_;
  std::vector<std::unique_ptr<Recorder>> recorders_;
  std::unique_ptr<WriterBackend> backend_;  // holds the file from construction on
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace nanotick::telemetry
