#include "fix/fix_gateway.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <thread>
#include <utility>

#include "client/venue_address.hpp"
#include "fix/fix_listen_socket.hpp"

namespace nanotick::fix {

namespace {

std::string order_map_file(const std::string& store_dir, const FixSessionConfig& s) {
  return (std::filesystem::path(store_dir) / (s.sender_comp_id + "-" + s.target_comp_id + ".orders")).string();
}

// QuickFIX's stores and message logs hold every message of the sessions:
// readable by the gateway's user only. The process's umask (077, set by
// nanotick-fix-gateway) covers files made from now on; this covers those an
// older gateway (or another umask) left group- or world-readable.
void owner_only(const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return;
  (void)::chmod(dir.c_str(), 0700);
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file(ec)) (void)::chmod(entry.path().c_str(), 0600);
}

}  // namespace

FixGateway::FixGateway(const FixGatewayConfig& config, FixGatewayOptions options, LogFn log)
    : config_(config), options_(std::move(options)), log_(std::move(log)) {
  std::filesystem::create_directories(config.store_dir);
  for (std::size_t i = 0; i < config.sessions.size(); ++i) {
    const FixSessionConfig& s = config.sessions[i];
    client::OrderEntryClientConfig c;
    c.transport = options_.transport;
    if (c.transport == ipc::Transport::kShm) {
      c.shm_path = config.venue.server.shm_path;
      if (c.shm_path.empty()) throw std::runtime_error("--transport shm: the venue config has no server.shm_path");
    } else {
      try {
        c.exchange = options_.exchange ? *options_.exchange : client::venue_order_entry_address(config.venue.server);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(config.exchange_config + ": " + e.what() +
                                 ": give the running exchange's address with --exchange");
      }
    }
    c.client_id = s.client_id;
    c.api_key = s.api_key;
    sessions_.push_back(
        std::make_unique<FixOrderSession>(i, s, config.venue, std::move(c), order_map_file(config.store_dir, s), log_));
  }
}

FixGateway::~FixGateway() = default;

void FixGateway::start() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.logon_wait_ms);
  for (;;) {
    bool all = true;
    for (auto& s : sessions_) {
      (void)s->poll();
      if (s->client().stopped())
        throw std::runtime_error("client " + std::to_string(s->client().config().client_id) +
                                 ": the venue refused the logon (" +
                                 std::string(client::to_string(s->client().last_disconnect().reason)) + ")");
      all = all && s->venue_up();
    }
    if (all) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (auto& s : sessions_) {
        if (s->client().logged_on() && !s->venue_up())
          throw std::runtime_error("client " + std::to_string(s->client().config().client_id) +
                                   ": the venue did not finish replaying the missed fills (ReportsRequest) within " +
                                   std::to_string(options_.logon_wait_ms) + " ms");
        if (!s->client().logged_on())
          throw std::runtime_error("client " + std::to_string(s->client().config().client_id) +
                                   ": no venue logon within " + std::to_string(options_.logon_wait_ms) + " ms (last: " +
                                   std::string(client::to_string(s->client().last_disconnect().reason)) +
                                   "); is the exchange running at its order-entry address?");
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  FixSessionLayerConfig lc;
  lc.port = config_.listen.port;
  lc.store_dir = config_.store_dir;
  lc.data_dictionary = config_.data_dictionary;
  lc.message_log_dir = options_.message_log_dir;
  for (const auto& s : config_.sessions) lc.sessions.push_back({s.sender_comp_id, s.target_comp_id});
  layer_ = std::make_unique<FixSessionLayer>(lc, *this);
  // QuickFIX listens on every interface; 0.0.0.0 is what allow_remote asks for, anything else is narrowed.
  if (config_.listen.ip.value != 0) narrow_listener(config_.listen);
  owner_only(config_.store_dir);
  owner_only(options_.message_log_dir);
  // Answers made while the venue sessions came up (the fills the last run
  // missed, the Canceled of the orders it left open) go out first.
  for (auto& s : sessions_) s->attach(*layer_);
}

int FixGateway::poll_venue() noexcept {
  int work = 0;
  for (auto& s : sessions_) work += s->poll();
  return work;
}

// How the runner's idle strategy and QuickFIX's wait combine. QuickFIX's
// sockets are its own: no runner can sleep on them, only QuickFIX's select()
// can, so that wait stays here, in the duty cycle. With spin it is never
// taken (select with timeout 0 each cycle) and the runner spins. With backoff,
// for the first spin_us with nothing to do the runner's BackoffIdle paces the
// cycles (spin, yield, sleeps of a few us); after that the cycle itself waits
// in select() for up to idle_wait_us, which FIX input ends at once, and counts
// the wait as work, so that the runner does not sleep on top of it (a sleep no
// FIX input could end). No wait while a request to the venue is unanswered.
int FixGateway::do_work() {
  bool awaiting = false;
  for (const auto& s : sessions_) awaiting = awaiting || s->awaiting_answers();
  const std::uint64_t now = clock_.now_ns();
  const bool wait = !options_.spin && !awaiting && now - last_work_ns_ >= std::uint64_t{options_.spin_us} * 1000;
  layer_->poll(wait ? static_cast<double>(options_.idle_wait_us) / 1e6 : 0.0);
  // QuickFIX's poll says nothing of what it did: only the venue sessions'
  // work counts, and a FIX message ends the wait at once anyway.
  const int work = poll_venue();
  if (work != 0) last_work_ns_ = clock_.now_ns();
  for (auto& s : sessions_)
    if (failure_.empty() && !s->orders().failure().empty()) failure_ = s->orders().failure();
  // Ends the runner's loop; on_close() then logs the sessions out.
  if (!failure_.empty()) throw std::runtime_error(failure_);
  return work != 0 || wait ? std::max(work, 1) : 0;
}

// The venue sessions first: their end reports each open order Canceled
// (cancel on disconnect), and QuickFIX must still be there to store and send
// those answers. Then the FIX sessions log out.
void FixGateway::stop() {
  for (auto& s : sessions_) s->logout();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (;;) {
    bool all = true;
    if (layer_) layer_->poll(0.0);
    for (auto& s : sessions_) {
      (void)s->poll();
      all = all && s->client().stopped();
    }
    if (all || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (layer_) {
    layer_->poll(0.0);
    layer_->stop();
  }
}

// The password first: the venue's state is nobody's business before it.
std::string FixGateway::on_logon_request(const FixLogonRequest& logon) {
  const FixSessionConfig& s = config_.sessions.at(logon.session);
  std::string refusal;
  if (!logon.has_password) {
    ++logon_counters_.no_password;
    refusal = "no Password (554) on the Logon: session " + s.sender_comp_id + " needs its password";
  } else if (!s.password.matches(std::span<const char>(logon.password.data(), logon.password.size()))) {
    ++logon_counters_.wrong_password;
    refusal = "wrong Password (554) for session " + s.sender_comp_id;
  } else if (refusal = sessions_.at(logon.session)->logon_refusal(); !refusal.empty()) {
    ++logon_counters_.venue_down;
  }
  if (!refusal.empty()) log_("FIX logon of " + s.sender_comp_id + " refused: " + refusal);
  return refusal;
}

void FixGateway::on_connection_dropped(const std::string& why) { log_("FIX connection dropped: " + why); }

void FixGateway::on_logon(std::size_t session) {
  ++logon_counters_.accepted;
  log_("FIX session " + config_.sessions.at(session).sender_comp_id + " logged on");
}

void FixGateway::on_logout(std::size_t session) {
  log_("FIX session " + config_.sessions.at(session).sender_comp_id + " logged out");
}

void FixGateway::on_request(const FixOrderRequest& request) {
  // QuickFIX's callback may throw only its own exceptions: a failure of ours
  // (std::bad_alloc) stops the gateway through failure() instead.
  try {
    sessions_.at(request.session)->on_request(request);
  } catch (const std::exception& e) {
    if (failure_.empty()) failure_ = std::string("handling a FIX request: ") + e.what();
  }
}

}  // namespace nanotick::fix
