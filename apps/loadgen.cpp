// nanotick-loadgen: drives the exchange open-loop at a fixed offered rate
// (docs/BENCHMARKS.md "Latency against offered load"; ./nanotick loadtest
// runs it over a sweep of rates). Message k of the run is due at
// t0 + k / rate, whatever happened before it: a message sent late -- the
// exchange or this process stalled, the socket's buffer was full -- is still
// measured from the time it was due, so a stall shows in the latency rather
// than being hidden by the sender waiting (no coordinated omission).
//
// The messages go round-robin over N sessions (the real trading client's
// OrderEntryClient: logon, heartbeats, sequence numbers), over TCP
// (--exchange) or the exchange's shared-memory sessions (--shm). Each session
// alternates a NewOrder (a buy limit below any seller: it rests, one
// Accepted report) and the CancelOrder of that order (one Cancelled
// report), so the book stays at most one order a session deep. A message's
// latency is from its due time to its first answer read (the report quoting
// its seq as ref_seq), on this host's TSC clock.
//
// Output: one JSON object on stdout (offered and achieved rates, counts,
// nearest-rank p50/p90/p99/p99.9/max in ns of the messages due after the
// warm-up). Exit status: 0 measured, 1 the run failed (a session could not
// log on or ended), 2 bad command line or sessions file.
//
// One thread, busy-polling every session: it needs a CPU of its own to
// measure the exchange rather than itself.
#include <sched.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/order_entry_client.hpp"
#include "core/tsc_clock.hpp"
#include "net/socket_address.hpp"
#include "proto/order_entry.hpp"
#include "venue/api_key.hpp"
#include "venue/key_file.hpp"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Credentials {
  std::uint32_t client_id;
  std::string key;
};

// "client_id api_key" per line; blank lines and # comments skipped.
std::vector<Credentials> read_sessions(const std::string& path) {
  std::istringstream in;
  try {
    in.str(nanotick::venue::read_private_file(path));  // API keys: refused unless the owner's alone
  } catch (const nanotick::venue::KeyFileError& e) {
    throw UsageError(std::string("--sessions ") + e.what());
  }
  std::vector<Credentials> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    long long id = -1;
    std::string key, extra;
    if (!(fields >> id >> key) || (fields >> extra) || id < 1 || id > 65535 || key.size() < 16 || key.size() > 32)
      throw UsageError(path + ":" + std::to_string(n) +
                       ": expected 'client_id api_key' (id 1..65535, key 16..32 "
                       "characters)");
    if (const std::string_view demo = nanotick::venue::demo_key_name(key); !demo.empty())
      std::fprintf(stderr, "nanotick-loadgen: %s\n",
                   nanotick::venue::demo_credential_warning(path + ":" + std::to_string(n), demo).c_str());
    out.push_back({static_cast<std::uint32_t>(id), key});
  }
  if (out.empty()) throw UsageError(path + ": no sessions");
  return out;
}

// One session's callbacks: each answer closes its message's latency.
struct LoadHandler {
  const nanotick::core::TscClock* clock = nullptr;
  std::vector<std::uint64_t> due_ns;  // by session seq: when the message was due (0: none pending)
  std::vector<std::uint64_t>* latencies = nullptr;
  std::uint64_t warm_until_ns = 0;
  std::uint64_t answered = 0;
  std::uint64_t rejected = 0;  // answers that were refusals (order or session rejects)
  bool logged_on = false;
  std::optional<nanotick::client::Disconnect> ended;

  void answer(std::uint32_t ref_seq, bool refused) {
    if (ref_seq == 0 || ref_seq >= due_ns.size() || due_ns[ref_seq] == 0) return;
    const std::uint64_t now = clock->now_ns();
    if (due_ns[ref_seq] >= warm_until_ns) latencies->push_back(now > due_ns[ref_seq] ? now - due_ns[ref_seq] : 0);
    due_ns[ref_seq] = 0;
    ++answered;
    rejected += refused ? 1 : 0;
  }
  void on_logon(const nanotick::proto::LogonAck&) { logged_on = true; }
  void on_execution_report(const nanotick::proto::ExecutionReport& r) {
    answer(r.ref_seq, r.exec_type == nanotick::proto::ExecType::kRejected);
  }
  void on_cancel_reject(const nanotick::proto::OrderReject& r) { answer(r.ref_seq, true); }
  void on_modify_reject(const nanotick::proto::OrderReject& r) { answer(r.ref_seq, true); }
  void on_session_reject(const nanotick::proto::SessionReject& r) { answer(r.ref_seq, true); }
  void on_disconnected(const nanotick::client::Disconnect& d) { ended = d; }
  void on_order_written(std::uint32_t, std::uint64_t) {}
};

using Session = nanotick::client::OrderEntryClient<LoadHandler>;

// Nearest rank, as the report: the sample of rank ceil(p/100 * n).
double percentile(const std::vector<std::uint64_t>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n - 1e-9));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return static_cast<double>(sorted[rank - 1]);
}

struct Options {
  std::string exchange;
  std::string shm_path;  // non-empty: shared-memory sessions at this UNIX socket path instead of TCP
  std::string sessions_file;
  double rate = 1000.0;
  double duration_s = 3.0;
  double warmup_s = 0.5;
  double drain_s = 2.0;
  std::uint32_t instrument = 0;
  std::int64_t price = 1000;
  bool yield = false;  // sched_yield() after a pass with nothing to do: share the CPU (fewer CPUs than spinners)
};

int run(const Options& o) {
  const auto& clock = nanotick::core::TscClock::global();
  const std::vector<Credentials> creds = read_sessions(o.sessions_file);
  nanotick::net::SocketAddress exchange;
  if (o.shm_path.empty()) {
    try {
      exchange = nanotick::net::parse_socket_address(o.exchange);
    } catch (const std::exception& e) {
      throw UsageError("--exchange: " + std::string(e.what()));
    }
  }
  const std::uint64_t total = static_cast<std::uint64_t>(o.rate * o.duration_s);
  if (total < 2) throw UsageError("rate x duration gives fewer than 2 messages");
  const std::size_t n = creds.size();
  std::vector<std::uint64_t> latencies;
  latencies.reserve(static_cast<std::size_t>(total));

  std::vector<std::unique_ptr<LoadHandler>> handlers;
  std::vector<std::unique_ptr<Session>> sessions;
  for (const Credentials& c : creds) {
    nanotick::client::OrderEntryClientConfig oc;
    oc.exchange = exchange;
    if (!o.shm_path.empty()) {
      oc.transport = nanotick::ipc::Transport::kShm;
      oc.shm_path = o.shm_path;
    }
    oc.client_id = c.client_id;
    oc.api_key = c.key;
    oc.heartbeat_ms = 1000;
    oc.output_buffer_bytes = 1 << 20;
    auto h = std::make_unique<LoadHandler>();
    h->clock = &clock;
    h->latencies = &latencies;
    h->due_ns.assign(total / n + 16, 0);  // seq 1 is the Logon: order messages from 2
    sessions.push_back(std::make_unique<Session>(oc, *h));
    handlers.push_back(std::move(h));
  }
  // Every session logged on, within 5 s.
  const std::uint64_t logon_deadline = clock.now_ns() + 5'000'000'000ull;
  for (;;) {
    bool all = true;
    for (std::size_t i = 0; i < n; ++i) {
      (void)sessions[i]->poll();
      if (handlers[i]->ended && !handlers[i]->logged_on) {
        std::fprintf(stderr, "nanotick-loadgen: client %u could not log on to %s: %s\n", creds[i].client_id,
                     o.shm_path.empty() ? o.exchange.c_str() : o.shm_path.c_str(),
                     std::string(nanotick::client::to_string(handlers[i]->ended->reason)).c_str());
        return kExitFailed;
      }
      all = all && handlers[i]->logged_on;
    }
    if (all) break;
    if (clock.now_ns() > logon_deadline) {
      std::fprintf(stderr, "nanotick-loadgen: not every session logged on to %s within 5 s\n", o.exchange.c_str());
      return kExitFailed;
    }
  }

  const double interval_ns = 1e9 / o.rate;
  const std::uint64_t t0 = clock.now_ns() + 1'000'000;  // 1 ms from now
  for (auto& h : handlers) h->warm_until_ns = t0 + static_cast<std::uint64_t>(o.warmup_s * 1e9);
  const auto due = [&](std::uint64_t k) {
    return t0 + static_cast<std::uint64_t>(static_cast<double>(k) * interval_ns);
  };
  const std::uint64_t end_ns = due(total) + static_cast<std::uint64_t>(o.drain_s * 1e9);
  std::uint64_t next = 0, sent = 0, max_send_lag = 0;
  std::uint64_t answered = 0;
  for (;;) {
    const std::uint64_t now = clock.now_ns();
    for (auto& s : sessions) s->cork();
    while (next < total && due(next) <= now) {
      const std::size_t i = next % n;
      const std::uint64_t j = next / n;  // this session's j-th message: new (even), its cancel (odd)
      const auto id = static_cast<nanotick::market::ClientOrderId>(j / 2 + 1);
      const auto r = j % 2 == 0 ? sessions[i]->send_new_order(id, o.instrument, nanotick::market::Side::kBuy,
                                                              nanotick::market::OrderType::kLimit,
                                                              nanotick::market::StpMode::kNone, o.price, 1)
                                : sessions[i]->send_cancel(id, o.instrument);
      if (r.status != nanotick::client::SendStatus::kSent) break;  // output full: due still, sent later
      if (r.seq < handlers[i]->due_ns.size()) handlers[i]->due_ns[r.seq] = due(next);
      max_send_lag = std::max(max_send_lag, now - due(next));
      ++next;
      ++sent;
    }
    for (auto& s : sessions) s->uncork();
    const std::uint64_t sent_before = sent;
    answered = 0;
    int work = 0;
    for (std::size_t i = 0; i < n; ++i) {
      work += sessions[i]->poll();
      answered += handlers[i]->answered;
      if (handlers[i]->ended) {
        std::fprintf(stderr, "nanotick-loadgen: client %u's session ended: %s (detail %u)\n", creds[i].client_id,
                     std::string(nanotick::client::to_string(handlers[i]->ended->reason)).c_str(),
                     unsigned(handlers[i]->ended->detail));
        return kExitFailed;
      }
    }
    if (next == total && answered == sent) break;
    if (now > end_ns) break;
    if (o.yield && work == 0 && sent == sent_before) sched_yield();
  }
  const std::uint64_t finished = clock.now_ns();
  for (auto& s : sessions) s->logout();
  for (int k = 0; k < 1000; ++k)
    for (auto& s : sessions) (void)s->poll();

  std::uint64_t rejected = 0;
  for (auto& h : handlers) rejected += h->rejected;
  std::sort(latencies.begin(), latencies.end());
  const double ran_s = static_cast<double>(finished - t0) / 1e9;
  std::printf("{\"offered_per_s\": %.1f, \"sessions\": %zu, \"duration_s\": %.3f, \"scheduled\": %" PRIu64
              ", \"sent\": %" PRIu64 ", \"answered\": %" PRIu64 ", \"unanswered\": %" PRIu64 ", \"rejected\": %" PRIu64
              ", \"achieved_per_s\": %.1f, \"measured\": %zu, \"p50_ns\": %.0f, \"p90_ns\": %.0f, \"p99_ns\": %.0f, "
              "\"p99_9_ns\": %.0f, \"max_ns\": %.0f, \"max_send_lag_ns\": %" PRIu64 "}\n",
              o.rate, n, o.duration_s, total, sent, answered, total - answered, rejected,
              ran_s > 0 ? static_cast<double>(answered) / ran_s : 0.0, latencies.size(), percentile(latencies, 50),
              percentile(latencies, 90), percentile(latencies, 99), percentile(latencies, 99.9),
              latencies.empty() ? 0.0 : static_cast<double>(latencies.back()), max_send_lag);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nanotick-loadgen: open-loop order load at a fixed rate, latency from each message's due time"};
  Options o;
  auto* tcp = app.add_option("--exchange", o.exchange, "the exchange's order-entry address ip:port (TCP sessions)");
  auto* shm =
      app.add_option("--shm", o.shm_path, "the exchange's server.shm_path: shared-memory sessions instead of TCP");
  tcp->excludes(shm);
  shm->excludes(tcp);
  app.add_option("--sessions", o.sessions_file, "file of 'client_id api_key' lines, one per session")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--rate", o.rate, "messages per second offered, all sessions together")
      ->check(CLI::Range(1.0, 10'000'000.0));
  app.add_option("--duration", o.duration_s, "seconds of messages")->check(CLI::Range(0.1, 3600.0));
  app.add_option("--warmup", o.warmup_s, "seconds at the start not measured")->check(CLI::Range(0.0, 600.0));
  app.add_option("--drain", o.drain_s, "seconds after the last due time to wait for answers")
      ->check(CLI::Range(0.1, 600.0));
  app.add_option("--instrument", o.instrument, "instrument index the orders go to");
  app.add_flag("--yield", o.yield,
               "give the CPU away (sched_yield) after a pass with nothing to do: for machines with fewer CPUs "
               "than busy threads");
  app.add_option("--price", o.price, "the resting buy orders' price (below any seller)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  if (o.exchange.empty() == o.shm_path.empty()) {
    std::fprintf(stderr, "nanotick-loadgen: give --exchange ip:port or --shm PATH\n");
    return kExitUsage;
  }
  if (o.warmup_s >= o.duration_s) {
    std::fprintf(stderr, "nanotick-loadgen: --warmup must be shorter than --duration\n");
    return kExitUsage;
  }
  try {
    return run(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "nanotick-loadgen: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nanotick-loadgen: %s\n", e.what());
    return kExitFailed;
  }
}
