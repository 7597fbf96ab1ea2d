#include "access/client_table.hpp"

#include <map>
#include <set>
#include <stdexcept>

#include "market/types.hpp"
#include "venue/venue_config.hpp"

namespace nanotick::access {

namespace {

using config::TableReader;

// Instrument ids by symbol, for the keys that name instruments.
using SymbolIds = std::map<std::string, std::uint32_t, std::less<>>;

ClientAccount read_account(TableReader t, const SymbolIds& symbols) {
  constexpr std::int64_t kMoneyLimit = std::int64_t{1} << 62;
  ClientAccount a;
  a.cash = t.integer("cash", 0, 0, kMoneyLimit);
  for (const auto& [symbol, qty] : t.integer_table("positions", -kMoneyLimit, kMoneyLimit)) {
    const auto it = symbols.find(symbol);
    if (it == symbols.end()) t.fail("positions." + symbol, "no instrument with this symbol");
    a.positions.emplace_back(it->second, qty);
  }
  for (const std::string& symbol : t.string_array("instruments")) {
    const auto it = symbols.find(symbol);
    if (it == symbols.end()) t.fail("instruments", "no instrument \"" + symbol + "\"");
    a.instruments.push_back(it->second);
  }
  a.max_order_qty = t.integer("max_order_qty", 0, 0, kMoneyLimit);
  a.max_notional = t.integer("max_notional", 0, 0, kMoneyLimit);
  a.collar = t.integer("collar", 0, 0, kMoneyLimit);
  a.short_limit = t.integer("short_limit", 0, 0, kMoneyLimit);
  a.max_open_orders = t.u32("max_open_orders", 0, 0);
  for (const auto& [instrument, qty] : a.positions)
    if (qty < -a.short_limit)
      t.fail("positions", "a position of " + std::to_string(qty) + " is below -short_limit (" +
                              std::to_string(-a.short_limit) + ")");
  t.finish();
  return a;
}

ClientConfig read_client(TableReader t, std::set<std::uint32_t>& ids, const SymbolIds& symbols) {
  ClientConfig c;
  c.id = static_cast<std::uint32_t>(t.required_integer("id", 1, market::kMaxClientId));
  if (!ids.insert(c.id).second) t.fail("id", "duplicate client id " + std::to_string(c.id));
  c.name = t.string("name", "client-" + std::to_string(c.id));
  const std::string credential = t.required_string("credential");
  try {
    c.credential = CredentialHash::parse(credential);
  } catch (const std::invalid_argument& e) {
    t.fail("credential", e.what());
  }
  c.rate_limit_per_s = t.u32("rate_limit_per_s", c.rate_limit_per_s, 1, 100'000'000);
  c.rate_burst = t.u32("rate_burst", c.rate_burst, 1, 100'000'000);
  c.cancel_on_disconnect = t.boolean("cancel_on_disconnect", c.cancel_on_disconnect);
  const std::string role = t.string("role", "trader");
  if (role != "trader" && role != "admin") t.fail("role", "must be \"trader\" or \"admin\", got \"" + role + "\"");
  c.admin = role == "admin";
  if (auto account = t.table("account")) c.account = read_account(*account, symbols);
  t.finish();
  return c;
}

}  // namespace

const ClientConfig* ClientTable::find_client(std::uint32_t id) const noexcept {
  for (const auto& c : clients)
    if (c.id == id) return &c;
  return nullptr;
}

ClientTable read_client_table(TableReader& root, const market::InstrumentTable& instruments) {
  ClientTable table;
  SymbolIds ids_by_symbol;
  for (std::uint32_t i = 0; i < instruments.instruments.size(); ++i)
    ids_by_symbol.emplace(instruments.instruments[i].symbol, i);
  if (auto accounts = root.table("accounts")) {
    table.accounts_required = accounts->boolean("required", false);
    accounts->finish();
  }
  std::set<std::uint32_t> ids;
  for (auto& t : root.tables("clients")) table.clients.push_back(read_client(t, ids, ids_by_symbol));
  if (table.clients.empty()) root.fail("clients", "at least one [[clients]] table is required");
  return table;
}

ClientTable load_client_table(const std::string& path) {
  const toml::table root_table = config::parse_toml(config::read_config_file(path), path);
  TableReader root(root_table, path, "");
  const venue::VenueConfig venue = venue::read_venue(root);
  ClientTable table = read_client_table(root, venue.instruments);
  (void)root.table("journal");
  (void)root.table("threads");
  root.finish();
  return table;
}

}  // namespace nanotick::access
