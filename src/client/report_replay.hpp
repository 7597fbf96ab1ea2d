// Missed reports through the protocol (PROTOCOL.md §1.8), the client's side:
// asked for, a session's first message after its LogonAck is a
// ReportsRequest for this client's fills with exec_seq > after_exec_seq; the
// venue answers with each such fill again (ExecutionReport, flags
// kReportReplayed), then ReportsReplayed. What was asked moves on by itself:
// after a replay, to the highest exec_seq it covered; in a live session, to
// each fill's exec_seq. So a reconnect asks only for the fills this client
// has not yet been told of.
//
// A plain value the OrderEntryClient keeps (order_entry_client.hpp); no I/O.
// Not thread-safe: the session's thread only.
#pragma once

#include <cstdint>
#include <optional>

#include "proto/order_entry.hpp"

namespace nanotick::client {

class ReportReplay {
 public:
  // From the next logon on, ask for the fills after `after_exec_seq`.
  void ask_after(std::uint64_t after_exec_seq) noexcept {
    asked_ = true;
    after_ = after_exec_seq;
  }
  bool asked() const noexcept { return asked_; }
  // What the next logon asks for: the fills with a greater exec_seq.
  std::uint64_t after_exec_seq() const noexcept { return after_; }
  // A request went out and its ReportsReplayed has not come yet.
  bool pending() const noexcept { return pending_; }

  // A LogonAck: the ReportsRequest to send before anything else, when asked.
  std::optional<proto::ReportsRequest> on_logon() noexcept {
    pending_ = false;
    live_max_ = 0;
    if (!asked_) return std::nullopt;
    auto m = proto::make_message<proto::ReportsRequest>(0);
    m.after_exec_seq = after_;
    pending_ = true;
    return m;
  }

  // Every ExecutionReport, in the order the session delivers them. A replayed
  // fill moves the mark at once (the replay comes in exec_seq order); a live
  // one during a replay only once the replay is complete, so that a session
  // lost halfway through asks again for the fills it was not yet sent.
  void on_report(const proto::ExecutionReport& m) noexcept {
    if (m.exec_type != proto::ExecType::kFill) return;
    const bool replayed = (m.flags & proto::kReportReplayed) != 0;
    if (pending_ && !replayed) {
      if (m.exec_seq > live_max_) live_max_ = m.exec_seq;
    } else if (m.exec_seq > after_) {
      after_ = m.exec_seq;
    }
  }

  // A ReportsReplayed: false when this session asked for none (or its replay
  // was already complete), which the caller treats as a protocol error.
  bool on_replayed(const proto::ReportsReplayed& m) noexcept {
    if (!pending_) return false;
    pending_ = false;
    if (m.through_exec_seq > after_) after_ = m.through_exec_seq;
    if (live_max_ > after_) after_ = live_max_;
    return true;
  }

  // The session ended: a replay not complete is asked for again at the next logon.
  void on_disconnect() noexcept {
    pending_ = false;
    live_max_ = 0;
  }

 private:
  bool asked_ = false;
  bool pending_ = false;
  std::uint64_t after_ = 0;
  std::uint64_t live_max_ = 0;  // the highest live fill while a replay is pending
};

}  // namespace nanotick::client
