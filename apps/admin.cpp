// nanotick-admin: the venue's admin session on the command line
// (docs/CONTROLS.md "Admin"). Logs on as a client whose role is "admin" in
// the exchange's config, sends one action, prints each answer and logs out:
//   halt SYMBOL / resume SYMBOL       stop or restart trading in an instrument
//   block CLIENT / unblock CLIENT     refuse or allow a client's new orders
//   cancel-all CLIENT [--instrument SYMBOL]   cancel the client's orders
//   kill CLIENT                       block, then cancel all its orders
//   adjust CLIENT DELTA [--instrument SYMBOL]   add DELTA to the client's
//                                     cash, or to its position in SYMBOL
// CLIENT is a client id or a client's name in the config. The API key is read
// from --key-file or the NANOTICK_ADMIN_KEY environment variable, never from
// the command line (where every user of the machine could read it).
// Exit codes: 0 every request done; 1 a request refused; 2 bad usage or
// config; 3 no answer (could not connect or log on, timed out, disconnected).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "access/client_table.hpp"
#include "client/order_entry_client.hpp"
#include "client/venue_address.hpp"
#include "market/reject_reason.hpp"
#include "net/socket_address.hpp"
#include "proto/order_entry.hpp"
#include "venue/api_key.hpp"
#include "venue/key_file.hpp"
#include "venue/venue_config.hpp"

namespace {

using nanotick::proto::AdminAction;
using nanotick::venue::VenueConfig;

constexpr int kExitRefused = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoAnswer = 3;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Step {
  AdminAction action;
  std::uint32_t instrument = 0;
  std::uint32_t target = 0;
  std::string what;  // for the printed line, e.g. "halt NTK1"
  std::int64_t amount = 0;
};

std::uint32_t instrument_id(const VenueConfig& cfg, const std::string& symbol) {
  const auto& list = cfg.instruments.instruments;
  for (std::uint32_t i = 0; i < list.size(); ++i)
    if (list[i].symbol == symbol) return i;
  throw UsageError("no instrument '" + symbol + "' in the exchange's config");
}

// By id or name, from the exchange config's client table: the admin is the
// venue's operator, on the venue's host (the one client program that reads it).
std::uint32_t client_id(const nanotick::access::ClientTable& clients, const std::string& arg) {
  for (const auto& c : clients.clients)
    if (c.name == arg || std::to_string(c.id) == arg) return c.id;
  throw UsageError("no client '" + arg + "' (an id or a name) in the exchange's config");
}

std::string read_key(const std::string& key_file) {
  std::string key;
  if (!key_file.empty()) {
    try {
      key = nanotick::venue::read_key_file(key_file);  // refused unless the owner's alone
    } catch (const nanotick::venue::KeyFileError& e) {
      throw UsageError(std::string("--key-file ") + e.what());
    }
  } else if (const char* env = std::getenv("NANOTICK_ADMIN_KEY")) {
    key = env;
  } else {
    throw UsageError("no API key: give --key-file FILE or set NANOTICK_ADMIN_KEY");
  }
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ')) key.pop_back();
  if (const std::string_view demo = nanotick::venue::demo_key_name(key); !demo.empty())
    std::fprintf(
        stderr, "nanotick-admin: %s\n",
        nanotick::venue::demo_credential_warning(key_file.empty() ? "$NANOTICK_ADMIN_KEY" : key_file, demo).c_str());
  return key;
}

// The session's callbacks: collects the admin answers; everything else an
// admin session may be sent is counted and otherwise ignored.
struct AdminHandler {
  std::vector<nanotick::proto::AdminResponse> answers;
  std::optional<nanotick::client::Disconnect> ended;
  bool logged_on = false;
  std::uint64_t other_messages = 0;
  std::uint16_t session_reject = 0;

  void on_logon(const nanotick::proto::LogonAck&) { logged_on = true; }
  void on_execution_report(const nanotick::proto::ExecutionReport&) { ++other_messages; }
  void on_cancel_reject(const nanotick::proto::OrderReject&) { ++other_messages; }
  void on_modify_reject(const nanotick::proto::OrderReject&) { ++other_messages; }
  void on_session_reject(const nanotick::proto::SessionReject& r) { session_reject = r.reason; }
  void on_disconnected(const nanotick::client::Disconnect& d) { ended = d; }
  void on_order_written(std::uint32_t, std::uint64_t) {}
  void on_admin_response(const nanotick::proto::AdminResponse& r) { answers.push_back(r); }
};

int run(const VenueConfig& cfg, const std::string& address, std::uint32_t admin_id, const std::string& key,
        const std::vector<Step>& steps, std::uint32_t timeout_ms) {
  using Clock = std::chrono::steady_clock;
  nanotick::client::OrderEntryClientConfig oc;
  oc.exchange = address.empty() ? nanotick::client::venue_order_entry_address(cfg.server)
                                : nanotick::net::parse_socket_address(address);
  oc.client_id = admin_id;
  oc.api_key = key;
  oc.heartbeat_ms = 0;  // the exchange's default: always within its bounds
  oc.connect_timeout_ms = std::min<std::uint32_t>(timeout_ms, 60'000);  // the client's bound
  oc.logon_timeout_ms = timeout_ms;
  oc.reconnect_initial_ms = timeout_ms;  // one attempt: a second would outlive the deadline
  oc.reconnect_max_ms = timeout_ms;
  AdminHandler h;
  nanotick::client::OrderEntryClient<AdminHandler> session(oc, h);
  // Each wait (the logon, each answer, the logout) has timeout_ms of its own.
  auto deadline = Clock::now();
  const auto wait_for = [&](auto done) {
    deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!done()) {
      if (h.ended || Clock::now() >= deadline) return false;
      if (session.poll() == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  };
  if (!wait_for([&] { return h.logged_on; })) {
    std::fprintf(stderr, "nanotick-admin: no logon to %s as client %u%s\n",
                 (address.empty() ? cfg.server.order_entry : address).c_str(), admin_id,
                 h.ended ? (std::string(": ") + std::string(nanotick::client::to_string(h.ended->reason)) +
                            " (detail " + std::to_string(h.ended->detail) + ")")
                               .c_str()
                         : ": timed out");
    return kExitNoAnswer;
  }
  int exit_code = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const auto sent = session.send_admin_request(i + 1, s.action, s.instrument, s.target, s.amount);
    if (sent.status != nanotick::client::SendStatus::kSent) {
      std::fprintf(stderr, "nanotick-admin: %s: not sent (%s)\n", s.what.c_str(),
                   std::string(nanotick::client::to_string(sent.status)).c_str());
      return kExitNoAnswer;
    }
    if (!wait_for([&] { return h.answers.size() > i || h.session_reject != 0; })) {
      std::fprintf(stderr, "nanotick-admin: %s: no answer within %u ms\n", s.what.c_str(), timeout_ms);
      return kExitNoAnswer;
    }
    if (h.session_reject != 0) {
      std::fprintf(
          stderr, "nanotick-admin: %s: the session refused it (SessionReject %s)\n", s.what.c_str(),
          std::string(nanotick::proto::to_string(static_cast<nanotick::proto::SessionRejectReason>(h.session_reject)))
              .c_str());
      return kExitRefused;
    }
    const nanotick::proto::AdminResponse& a = h.answers[i];
    if (a.reason != 0) {
      std::printf(
          "%s: refused: %s (%u)\n", s.what.c_str(),
          std::string(nanotick::market::to_string(static_cast<nanotick::market::RejectReason>(a.reason))).c_str(),
          unsigned(a.reason));
      exit_code = kExitRefused;
      break;
    }
    if (s.action == AdminAction::kCancelAll)
      std::printf("%s: done, %u order(s) cancelled (exec_seq %" PRIu64 ")\n", s.what.c_str(), a.orders_cancelled,
                  a.exec_seq);
    else std::printf("%s: done (exec_seq %" PRIu64 ")\n", s.what.c_str(), a.exec_seq);
  }
  session.logout();
  (void)wait_for([&] { return false; });  // until the exchange's Logout closes it, or the deadline
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nanotick-admin: halt/resume an instrument, block/unblock a client, cancel a client's orders"};
  std::string config_path, key_file, client, instrument_filter, address;
  std::uint32_t admin_id = 0, timeout_ms = 5000;
  app.add_option("--config", config_path, "the exchange's config (address, instruments, clients)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--exchange", address, "the order-entry address ip:port (default: the config's server.order_entry)");
  app.add_option("--admin-id", admin_id, "this session's client id (its role must be \"admin\")")->required();
  app.add_option("--key-file", key_file, "file holding the admin's API key (else $NANOTICK_ADMIN_KEY)");
  app.add_option("--timeout-ms", timeout_ms, "logon and each answer must come within this")
      ->check(CLI::Range(1u, 600'000u));
  std::string symbol;
  auto* halt = app.add_subcommand("halt", "halt an instrument: no new orders or modifies, cancels pass");
  halt->add_option("SYMBOL", symbol)->required();
  auto* resume = app.add_subcommand("resume", "resume a halted instrument");
  resume->add_option("SYMBOL", symbol)->required();
  auto* block = app.add_subcommand("block", "block a client: its new orders and modifies are refused");
  block->add_option("CLIENT", client, "id or name")->required();
  auto* unblock = app.add_subcommand("unblock", "unblock a client");
  unblock->add_option("CLIENT", client, "id or name")->required();
  auto* cancel_all = app.add_subcommand("cancel-all", "cancel every working order of a client");
  cancel_all->add_option("CLIENT", client, "id or name")->required();
  cancel_all->add_option("--instrument", instrument_filter, "only this instrument's");
  auto* kill = app.add_subcommand("kill", "the kill switch: block a client, then cancel all its orders");
  kill->add_option("CLIENT", client, "id or name")->required();
  std::int64_t delta = 0;
  auto* adjust = app.add_subcommand("adjust", "add DELTA to a client's cash, or with --instrument to its position");
  adjust->add_option("CLIENT", client, "id or name")->required();
  adjust->add_option("DELTA", delta, "signed amount (price units for cash)")->required();
  adjust->add_option("--instrument", instrument_filter, "the position's instrument (default: the cash)");
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }
  try {
    const VenueConfig cfg = nanotick::venue::load_venue_config(config_path);
    const nanotick::access::ClientTable clients = nanotick::access::load_client_table(config_path);
    std::vector<Step> steps;
    if (halt->parsed() || resume->parsed()) {
      const AdminAction a = halt->parsed() ? AdminAction::kHaltInstrument : AdminAction::kResumeInstrument;
      steps.push_back({a, instrument_id(cfg, symbol), 0, (halt->parsed() ? "halt " : "resume ") + symbol});
    } else {
      const std::uint32_t target = client_id(clients, client);
      const std::string who = "client " + std::to_string(target);
      if (block->parsed() || kill->parsed()) steps.push_back({AdminAction::kBlockClient, 0, target, "block " + who});
      if (unblock->parsed()) steps.push_back({AdminAction::kUnblockClient, 0, target, "unblock " + who});
      if (adjust->parsed()) {
        const std::uint32_t inst =
            instrument_filter.empty() ? nanotick::proto::kAllInstruments : instrument_id(cfg, instrument_filter);
        steps.push_back({AdminAction::kAdjust, inst, target,
                         "adjust " + who + (instrument_filter.empty() ? " cash" : " " + instrument_filter) + " by " +
                             std::to_string(delta),
                         delta});
      }
      if (cancel_all->parsed() || kill->parsed()) {
        const std::uint32_t inst =
            instrument_filter.empty() ? nanotick::proto::kAllInstruments : instrument_id(cfg, instrument_filter);
        steps.push_back({AdminAction::kCancelAll, inst, target,
                         "cancel-all " + who + (instrument_filter.empty() ? "" : " on " + instrument_filter)});
      }
    }
    return run(cfg, address, admin_id, read_key(key_file), steps, timeout_ms);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "nanotick-admin: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nanotick-admin: %s\n", e.what());
    return kExitUsage;
  }
}
