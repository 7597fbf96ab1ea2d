// Missed reports through the protocol (PROTOCOL.md §1.8), the client's side:
// ReportReplay's mark on its own, then OrderEntryClient against a scripted
// exchange on loopback TCP whose every byte is written and read with the
// wire codec (proto::write_message, proto::next_frame): the ReportsRequest
// is the session's first message after the LogonAck and carries the mark;
// replayed reports reach the handler flagged, ReportsReplayed ends the replay
// and moves the mark; one nobody asked for is a protocol error; the next
// session asks again from where the last one got.
#include "client/report_replay.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/order_entry_client.hpp"
#include "net/socket_address.hpp"
#include "net/tcp.hpp"
#include "proto/order_entry.hpp"
#include "proto/order_entry_codec.hpp"

namespace nc = nanotick::client;
namespace np = nanotick::proto;
namespace nn = nanotick::net;

namespace {

np::ExecutionReport fill(std::uint64_t exec_seq, bool replayed) {
  auto m = np::make_message<np::ExecutionReport>(0);
  m.exec_seq = exec_seq;
  m.exec_type = np::ExecType::kFill;
  m.last_qty = 1;
  m.flags = replayed ? np::kReportReplayed : 0;
  return m;
}

np::ReportsReplayed replayed_end(std::uint64_t count, std::uint64_t through) {
  auto m = np::make_message<np::ReportsReplayed>(0);
  m.count = count;
  m.through_exec_seq = through;
  return m;
}

TEST(ReportReplay, NothingIsAskedUnlessAsked) {
  nc::ReportReplay r;
  EXPECT_FALSE(r.on_logon().has_value());
  EXPECT_FALSE(r.pending());
  EXPECT_FALSE(r.on_replayed(replayed_end(0, 10)));  // an answer nobody asked for
}

TEST(ReportReplay, TheMarkMovesWithTheReplayAndTheLiveFills) {
  nc::ReportReplay r;
  r.ask_after(41);
  const auto rq = r.on_logon();
  ASSERT_TRUE(rq.has_value());
  EXPECT_EQ(rq->header.type, np::MsgType::kReportsRequest);
  EXPECT_EQ(rq->after_exec_seq, 41u);
  EXPECT_TRUE(r.pending());
  r.on_report(fill(45, true));
  EXPECT_EQ(r.after_exec_seq(), 45u);  // a replayed fill at once: the replay comes in order
  r.on_report(fill(70, false));
  EXPECT_EQ(r.after_exec_seq(), 45u);  // a live one only once the replay is complete
  auto accepted = fill(90, true);
  accepted.exec_type = np::ExecType::kAccepted;
  r.on_report(accepted);  // not a fill: no mark
  EXPECT_TRUE(r.on_replayed(replayed_end(1, 60)));
  EXPECT_FALSE(r.pending());
  EXPECT_EQ(r.after_exec_seq(), 70u);  // the live fill, beyond what the replay covered
  r.on_report(fill(75, false));
  EXPECT_EQ(r.after_exec_seq(), 75u);
  EXPECT_FALSE(r.on_replayed(replayed_end(0, 80)));  // a second answer
}

TEST(ReportReplay, ASessionLostHalfwayAsksAgainForWhatItWasNotSent) {
  nc::ReportReplay r;
  r.ask_after(10);
  (void)r.on_logon();
  r.on_report(fill(12, true));
  r.on_report(fill(30, false));  // live, during the replay
  r.on_disconnect();
  EXPECT_FALSE(r.pending());
  const auto again = r.on_logon();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->after_exec_seq, 12u);
}

// ---- OrderEntryClient against a scripted exchange ------------------------------------------

struct Handler {
  std::vector<np::ExecutionReport> reports;
  std::vector<np::ReportsReplayed> replays;
  std::optional<nc::Disconnect> ended;
  int logons = 0;
  void on_logon(const np::LogonAck&) { ++logons; }
  void on_execution_report(const np::ExecutionReport& m) { reports.push_back(m); }
  void on_cancel_reject(const np::OrderReject&) {}
  void on_modify_reject(const np::OrderReject&) {}
  void on_session_reject(const np::SessionReject&) {}
  void on_disconnected(const nc::Disconnect& d) { ended = d; }
  void on_order_written(std::uint32_t, std::uint64_t) {}
  void on_reports_replayed(const np::ReportsReplayed& m) { replays.push_back(m); }
};

using Client = nc::OrderEntryClient<Handler>;

// The exchange's end of one session: messages out numbered from 1, messages
// in framed by the codec as the exchange frames them.
class ScriptedExchange {
 public:
  explicit ScriptedExchange(nn::TcpStream stream) : stream_(std::move(stream)) {}

  template <typename M>
  void send(M m) {
    m.header.seq = next_seq_++;
    std::vector<std::uint8_t> bytes(sizeof(M));
    ASSERT_EQ(np::write_message(m, bytes.data()), sizeof(M));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const nn::IoResult r = stream_.write_some(std::span(bytes).subspan(done));
      ASSERT_NE(r.status, nn::IoStatus::kError);
      done += r.bytes;
    }
  }

  // The next message from the client, polling it meanwhile (it writes on poll()).
  np::Frame next(Client& client, std::vector<std::uint8_t>& message) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < end) {
      const np::Frame f = np::next_frame(in_, np::Direction::kFromClient);
      if (f.status == np::FrameStatus::kMessage) {
        message.assign(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(f.length));
        in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(f.length));
        return f;
      }
      EXPECT_EQ(f.status, np::FrameStatus::kNeedMore);
      (void)client.poll();
      std::uint8_t buf[512];
      const nn::IoResult r = stream_.read_some(buf);
      if (r.status == nn::IoStatus::kOk) in_.insert(in_.end(), buf, buf + r.bytes);
    }
    ADD_FAILURE() << "no message from the client within 2 s";
    return {};
  }

 private:
  nn::TcpStream stream_;
  std::uint32_t next_seq_ = 1;
  std::vector<std::uint8_t> in_;
};

class ClientReplayTest : public ::testing::Test {
 protected:
  ClientReplayTest() : listener_(nn::parse_socket_address("127.0.0.1:0", nn::PortZero::kAllowed)) {
    config_.client_id = 7;
    config_.api_key = "replay-test-key-0123";
    config_.exchange = listener_.local_address();
    config_.reconnect_initial_ms = 1;
    config_.reconnect_max_ms = 1;
  }

  // Connects `client` and takes its Logon; the session is then logged on
  // with the next message the test lets the exchange send.
  ScriptedExchange accept(Client& client) {
    std::optional<nn::TcpStream> s;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!s && std::chrono::steady_clock::now() < end) {
      (void)client.poll();
      s = listener_.accept();
    }
    EXPECT_TRUE(s.has_value()) << "the client did not connect";
    ScriptedExchange x(std::move(*s));
    std::vector<std::uint8_t> logon;
    EXPECT_EQ(x.next(client, logon).header.type, np::MsgType::kLogon);
    auto ack = np::make_message<np::LogonAck>(0);
    ack.client_id = 7;
    ack.heartbeat_ms = 1000;
    x.send(ack);
    return x;
  }

  template <typename Done>
  void poll_until(Client& client, Done done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!done() && std::chrono::steady_clock::now() < end) (void)client.poll();
    EXPECT_TRUE(done());
  }

  nn::TcpListener listener_;
  nc::OrderEntryClientConfig config_;
  Handler handler_;
};

TEST_F(ClientReplayTest, AsksFirstAfterTheLogonAndHearsTheReplayComplete) {
  Client client(config_, handler_);
  client.request_reports_after(41);
  ScriptedExchange x = accept(client);
  std::vector<std::uint8_t> bytes;
  const np::Frame f = x.next(client, bytes);  // the first message after the LogonAck
  ASSERT_EQ(f.header.type, np::MsgType::kReportsRequest);
  EXPECT_EQ(np::read_message<np::ReportsRequest>(bytes.data()).after_exec_seq, 41u);
  EXPECT_EQ(handler_.logons, 1);
  EXPECT_TRUE(client.replaying());

  x.send(fill(45, true));
  x.send(fill(50, true));
  x.send(replayed_end(2, 60));
  poll_until(client, [&] { return !handler_.replays.empty(); });
  ASSERT_EQ(handler_.reports.size(), 2u);
  EXPECT_EQ(handler_.reports[0].flags & np::kReportReplayed, np::kReportReplayed);
  EXPECT_EQ(handler_.reports[1].exec_seq, 50u);
  EXPECT_EQ(handler_.replays[0].count, 2u);
  EXPECT_FALSE(client.replaying());
  EXPECT_EQ(client.reports_after_exec_seq(), 60u);
  EXPECT_EQ(client.counters().reports_requests.get(), 1u);
  EXPECT_EQ(client.counters().replayed_reports.get(), 2u);
  EXPECT_EQ(client.counters().replays_completed.get(), 1u);

  // A second ReportsReplayed answers nothing this session asked: a protocol error.
  x.send(replayed_end(0, 60));
  poll_until(client, [&] { return handler_.ended.has_value(); });
  EXPECT_EQ(handler_.ended->reason, nc::DisconnectReason::kProtocolError);
  EXPECT_EQ(handler_.ended->detail, static_cast<std::uint16_t>(nc::ProtocolError::kUnexpectedMessage));

  // The next session asks for what came after the last one's replay.
  ScriptedExchange again = accept(client);
  ASSERT_EQ(again.next(client, bytes).header.type, np::MsgType::kReportsRequest);
  EXPECT_EQ(np::read_message<np::ReportsRequest>(bytes.data()).after_exec_seq, 60u);
}

TEST_F(ClientReplayTest, WithoutARequestTheFirstMessageIsTheCallersAndAReplayEndIsAnError) {
  Client client(config_, handler_);
  ScriptedExchange x = accept(client);
  poll_until(client, [&] { return client.logged_on(); });
  EXPECT_FALSE(client.replaying());
  ASSERT_TRUE(client.send_cancel(1, 0).sent());
  std::vector<std::uint8_t> bytes;
  EXPECT_EQ(x.next(client, bytes).header.type, np::MsgType::kCancelOrder);
  x.send(replayed_end(0, 0));
  poll_until(client, [&] { return handler_.ended.has_value(); });
  EXPECT_EQ(handler_.ended->reason, nc::DisconnectReason::kProtocolError);
  EXPECT_EQ(client.counters().reports_requests.get(), 0u);
}

}  // namespace
