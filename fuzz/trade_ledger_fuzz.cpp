// Fuzz target: a trades.ledger file with the input's bytes, as start-up
// (plan_trade_ledger, then TradeLedger) and `nanotick ledger verify|repair`
// read it. The reader must classify anything (a refusal, clean, torn tail,
// corrupt) without crashing; a refused plan must leave every byte as it was;
// an accepted one must open into a file that then reads back clean with the
// same good trades; a repair must leave a clean file holding the good part.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>

#include "exchange/ledger/ledger_repair.hpp"
#include "exchange/ledger/trade_ledger.hpp"

namespace nx = nanotick::exchange;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kFingerprint = 0x5eed;

const std::string& work_dir() {
  static const std::string dir = [] {
    const char* shm = fs::exists("/dev/shm") ? "/dev/shm" : "/tmp";
    return std::string(shm) + "/nanotick-fuzz-ledger-" + std::to_string(::getpid());
  }();
  return dir;
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

bool same_trades(const nx::LedgerContents& a, const nx::LedgerContents& b) {
  if (a.trades.size() != b.trades.size()) return false;
  return a.trades.empty() ||
         std::memcmp(a.trades.data(), b.trades.data(), a.trades.size() * sizeof(nx::TradeRecord)) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& dir = work_dir();
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = dir + "/trades.ledger";
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const std::string before = read_all(path);
  nx::LedgerContents read;
  bool readable = true;
  try {
    read = nx::read_trade_ledger(path);
  } catch (const std::runtime_error&) {
    readable = false;
  }
  nx::LedgerPlan plan;
  try {
    plan = nx::plan_trade_ledger(path, kFingerprint);
  } catch (const nx::LedgerError&) {
    if (read_all(path) != before) std::abort();  // a refusal changed the file
    if (readable && read.damage == nx::LedgerDamage::kCorrupt) {
      const nx::LedgerRepair r = nx::repair_trade_ledger(path, false);
      const nx::LedgerContents after = nx::read_trade_ledger(path);
      if (after.damage != nx::LedgerDamage::kNone || !same_trades(after, read)) std::abort();
      if (read_all(r.backup_path) != before) std::abort();  // the copy is not the damaged file
    }
    return 0;
  }
  if (!readable && !plan.missing) std::abort();  // accepted what the reader refuses
  if (readable && read.damage == nx::LedgerDamage::kCorrupt) std::abort();  // accepted damage in the middle
  {
    auto ring = std::make_unique<nx::LedgerRing>();
    nx::TradeLedger ledger(plan, kFingerprint, *ring);
    ledger.on_close();
  }
  const nx::LedgerContents after = nx::read_trade_ledger(path);
  if (after.damage != nx::LedgerDamage::kNone) std::abort();  // the cut left damage behind
  if (readable && !same_trades(after, read)) std::abort();    // the open lost or changed good trades
  return 0;
}
