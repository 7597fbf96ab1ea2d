// Every account's balances, kept exactly as the engine's reports say
// (docs/CONTROLS.md "Accounts", "Settlement"). Part of the sequenced state:
// a pure function of the opening balances and the engine's outputs, so a
// journal replay rebuilds it bit for bit.
//
// Per account: cash; the cash its working orders hold (reserved_cash); per
// instrument the position and the quantity its working sell orders hold
// (reserved_sell); the number of working orders. A working order holds
//   cash: open_qty x max(p, 0) for a buy, open_qty x max(-p, 0) for a sell,
//   position: open_qty for a sell,
// where p is its limit price, or for a market order the band's end it may
// trade up to (max_price for a buy, min_price for a sell). A fill never
// trades beyond that price, so settling it at the trade price moves at most
// what was held: cash - reserved_cash >= 0 and position - reserved_sell >=
// -short_limit hold after every report (the pre-trade checks admit an order
// only if they still hold with it added).
//
// settle(report), in the order the engine emits them:
//   kAccepted   the order starts working: hold its whole quantity; +1 working
//   kFill       release last_qty of the hold; cash -/+ last_price x last_qty,
//               position +/- last_qty; leaves 0: -1 working
//   kCancelled  release what was still open (order_qty - cum_qty); -1 working
//   kModified   release what the order held before (note_modify(), taken by
//               the pre-trade check from the engine just before), hold the
//               new price x new open quantity
//   rejects     nothing
// Both sides of a trade get a kFill in the same engine step, so both settle
// in the step of the match.
//
// Not thread-safe: the engine's thread. settle() and the queries are
// noexcept and never allocate (every table is sized at construction).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "controls/account_limits.hpp"
#include "controls/controls_state.hpp"
#include "core/compiler.hpp"
#include "engine/book_views.hpp"
#include "engine/events.hpp"
#include "engine/request.hpp"

namespace nanotick::controls {

class Accounts {
 public:
  struct Holding {
    Qty position = 0;
    Qty reserved_sell = 0;
  };
  // What settle() touches first, on one cache line; the holdings of all
  // accounts are one array (account-major), the limits after.
  struct Account {
    Money cash = 0;
    Money reserved_cash = 0;
    std::uint32_t working_orders = 0;
    std::span<Holding> holdings;  // by InstrumentId, in Accounts' one array
    ClientLimits limits;
    std::vector<bool> permitted;  // by InstrumentId
  };

  // Throws what ControlsConfig::validate throws.
  Accounts(const engine::EngineConfig& engine, const ControlsConfig& config)
      : accounts_required_(config.accounts_required), slot_of_(engine::kMaxClientId + 1, kNoSlot) {
    config.validate(engine);
    for (const auto& in : engine.instruments) bands_.push_back({in.min_price, in.max_price});
    const std::size_t n = engine.instruments.size();
    holdings_.assign(config.clients.size() * n, Holding{});
    accounts_.reserve(config.clients.size());
    for (const ClientLimits& c : config.clients) {
      Account a;
      a.limits = c;
      a.cash = c.cash;
      a.holdings = std::span<Holding>(holdings_.data() + accounts_.size() * n, n);
      for (const OpeningPosition& p : c.positions) a.holdings[p.instrument].position = p.qty;
      a.permitted.assign(n, c.instruments.empty());
      for (const InstrumentId i : c.instruments) a.permitted[i] = true;
      slot_of_[c.client] = static_cast<std::uint32_t>(accounts_.size());
      accounts_.push_back(std::move(a));
    }
  }
  // The accounts point into holdings_: never copied or moved.
  Accounts(const Accounts&) = delete;
  Accounts& operator=(const Accounts&) = delete;

  bool accounts_required() const noexcept { return accounts_required_; }
  std::size_t instrument_count() const noexcept { return bands_.size(); }
  std::size_t size() const noexcept { return accounts_.size(); }
  const Account& at(std::size_t slot) const noexcept { return accounts_[slot]; }

  // The account of `client`, or nullptr (no account, or an id out of range).
  const Account* find(ClientId client) const noexcept {
    if (client > engine::kMaxClientId || slot_of_[client] == kNoSlot) return nullptr;
    return &accounts_[slot_of_[client]];
  }

  // Cash one unit of `side` at `price` holds (type: market orders hold at
  // the band's end). Instrument in range (the caller checked).
  Money cash_unit(InstrumentId instrument, engine::Side side, engine::OrderType type, Price price) const noexcept {
    if (type == engine::OrderType::kMarket)
      price = side == engine::Side::kBuy ? bands_[instrument].max_price : bands_[instrument].min_price;
    const Money p = side == engine::Side::kBuy ? Money{price} : -Money{price};  // a request's price may be any int64
    return p > 0 ? p : Money{0};
  }
  // The limit a market order is checked against (its band's end), else its price.
  Price reserve_price(InstrumentId instrument, engine::Side side, engine::OrderType type, Price price) const noexcept {
    if (type != engine::OrderType::kMarket) return price;
    return side == engine::Side::kBuy ? bands_[instrument].max_price : bands_[instrument].min_price;
  }

  // An admin's adjustment (docs/CONTROLS.md "Admin"): `delta` added to the
  // client's cash (instrument kAllInstruments) or to its position in
  // `instrument`. Refused, changing nothing, when the client has no account
  // (kNoAccount), when cash would fall below what its working orders hold
  // (kInsufficientCash), when the position would fall below its working
  // sells less the short limit (kInsufficientPosition), or when a position
  // would overflow (kQuantityTooLarge), or when cash would leave the int64
  // range (kCashOutOfRange): Money's 128 bits would hold it, but no honest
  // deposit comes near, and an adjustment's operand is an int64 -- a cash past
  // it is a mistake to refuse, not to carry. The instrument is known (the
  // caller checked).
  engine::RejectReason adjust(ClientId client, InstrumentId instrument, std::int64_t delta) noexcept {
    if (client > engine::kMaxClientId || slot_of_[client] == kNoSlot) return engine::RejectReason::kNoAccount;
    Account& a = accounts_[slot_of_[client]];
    if (instrument == engine::kAllInstruments) {
      const Money after = a.cash + delta;
      if (after > Money{std::numeric_limits<std::int64_t>::max()} ||
          after < Money{std::numeric_limits<std::int64_t>::min()})
        return engine::RejectReason::kCashOutOfRange;
      if (after < a.reserved_cash) return engine::RejectReason::kInsufficientCash;
      a.cash += delta;
      return engine::RejectReason::kNone;
    }
    Holding& h = a.holdings[instrument];
    Qty after = 0;
    if (__builtin_add_overflow(h.position, delta, &after)) return engine::RejectReason::kQuantityTooLarge;
    if (Money{after} - h.reserved_sell < -Money{a.limits.short_limit})
      return engine::RejectReason::kInsufficientPosition;
    h.position = after;
    return engine::RejectReason::kNone;
  }

  // What the order being modified held before, read from the engine by the
  // pre-trade check just before the modify runs (consumed by its kModified).
  void note_modify(Money cash_held, Qty sell_held) noexcept {
    modify_cash_held_ = cash_held;
    modify_sell_held_ = sell_held;
  }

  // Snapshots: the balances (cash, positions) of every account.
  ControlsState export_balances() const {
    ControlsState st;
    for (const Account& a : accounts_) {
      ControlsState::Account out;
      out.client = a.limits.client;
      out.cash = a.cash;
      for (const Holding& h : a.holdings) out.positions.push_back(h.position);
      st.accounts.push_back(std::move(out));
    }
    return st;
  }
  // Restores the balances of `st` into fresh accounts and works out what the
  // working orders of `engine` (a MatchingEngine: for_each_order) hold.
  // Throws std::invalid_argument when `st` is not of these accounts.
  template <typename Engine>
  void import_balances(const ControlsState& st, const Engine& engine) {
    if (st.accounts.size() != accounts_.size())
      throw std::invalid_argument("accounts: " + std::to_string(st.accounts.size()) + " accounts for " +
                                  std::to_string(accounts_.size()) + " configured");
    for (std::size_t i = 0; i < accounts_.size(); ++i) {
      Account& a = accounts_[i];
      const ControlsState::Account& in = st.accounts[i];
      if (in.client != a.limits.client || in.positions.size() != a.holdings.size())
        throw std::invalid_argument("accounts: entry " + std::to_string(i) + " is client " + std::to_string(in.client) +
                                    " with " + std::to_string(in.positions.size()) + " positions, not client " +
                                    std::to_string(a.limits.client));
      a.cash = in.cash;
      a.reserved_cash = 0;
      a.working_orders = 0;
      for (std::size_t k = 0; k < a.holdings.size(); ++k) a.holdings[k] = Holding{in.positions[k], 0};
    }
    for (InstrumentId inst = 0; inst < bands_.size(); ++inst) {
      for (const engine::Side side : {engine::Side::kBuy, engine::Side::kSell}) {
        engine.for_each_order(inst, side, [&](const engine::OrderView& o) {
          if (o.client > engine::kMaxClientId || slot_of_[o.client] == kNoSlot) return;
          Account& a = accounts_[slot_of_[o.client]];
          ++a.working_orders;
          a.reserved_cash += cash_unit(inst, side, engine::OrderType::kLimit, o.price) * o.open_qty;
          if (side == engine::Side::kSell) a.holdings[inst].reserved_sell += o.open_qty;
        });
      }
    }
  }

  NT_ALWAYS_INLINE void settle(const engine::ExecReport& r) noexcept {
    using engine::ReportType;
    // Rejects and admin answers move nothing: out before any lookup.
    constexpr unsigned kMoves =
        (1u << static_cast<unsigned>(ReportType::kAccepted)) | (1u << static_cast<unsigned>(ReportType::kFill)) |
        (1u << static_cast<unsigned>(ReportType::kCancelled)) | (1u << static_cast<unsigned>(ReportType::kModified));
    if (((kMoves >> static_cast<unsigned>(r.type)) & 1u) == 0) return;
    if (r.client > engine::kMaxClientId || r.instrument >= bands_.size()) [[unlikely]]
      return;
    const std::uint32_t slot = slot_of_[r.client];
    if (slot == kNoSlot) return;
    Account& a = accounts_[slot];
    Holding& h = a.holdings[r.instrument];
    const bool sell = r.side == engine::Side::kSell;
    const Money unit = cash_unit(r.instrument, r.side, r.order_type, r.price);
    switch (r.type) {
      case ReportType::kFill: {
        const Money value = static_cast<Money>(r.last_price) * r.last_qty;
        a.reserved_cash -= unit * r.last_qty;
        if (sell) {
          h.reserved_sell -= r.last_qty;
          h.position -= r.last_qty;
          a.cash += value;
        } else {
          h.position += r.last_qty;
          a.cash -= value;
        }
        if (r.leaves_qty == 0) --a.working_orders;
        break;
      }
      case ReportType::kAccepted:
        ++a.working_orders;
        a.reserved_cash += unit * r.order_qty;
        if (sell) h.reserved_sell += r.order_qty;
        break;
      case ReportType::kCancelled: {
        const Qty open = r.order_qty - r.cum_qty;
        a.reserved_cash -= unit * open;
        if (sell) h.reserved_sell -= open;
        --a.working_orders;
        break;
      }
      default: {  // kModified
        const Qty open = r.order_qty - r.cum_qty;
        a.reserved_cash += unit * open - modify_cash_held_;
        if (sell) h.reserved_sell += open - modify_sell_held_;
        break;
      }
    }
  }

 private:
  static constexpr std::uint32_t kNoSlot = 0xFFFF'FFFF;
  struct Band {
    Price min_price;
    Price max_price;
  };

  bool accounts_required_;
  std::vector<std::uint32_t> slot_of_;  // by ClientId
  std::vector<Holding> holdings_;  // account-major: [slot * instruments + instrument]
  std::vector<Account> accounts_;
  std::vector<Band> bands_;
  Money modify_cash_held_ = 0;
  Qty modify_sell_held_ = 0;
};

}  // namespace nanotick::controls
