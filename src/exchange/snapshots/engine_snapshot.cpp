#include "exchange/snapshots/engine_snapshot.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/crc32c.hpp"
#include "exchange/sequencing/journal_format.hpp"

namespace nanotick::exchange {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'N', 'T', 'S', 'N', 'A', 'P', '0', '1'};
// 2: the finished-order memory as two generations (1: a ring, oldest first).
// 3: the accounts' balances after the books (docs/CONTROLS.md); 4: then the
// halted instruments and blocked clients. 2 and 3 are still read.
constexpr std::uint32_t kVersion = 4;
constexpr std::uint32_t kOldestReadable = 2;
constexpr std::size_t kOrderBytes = 8 + 4 + 8 + 1 + 1 + 8 + 8 + 8;

class Writer {
 public:
  template <typename T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof v);
  }
  std::vector<std::uint8_t> bytes;
};

class Reader {
 public:
  Reader(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  template <typename T>
  T get(const char* what) {
    if (n_ - at_ < sizeof(T)) throw std::runtime_error(std::string("truncated in ") + what);
    T v;
    std::memcpy(&v, p_ + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  // A count whose items need at least `item_bytes` each: bounded by what is left.
  std::uint64_t count(const char* what, std::size_t item_bytes) {
    const auto c = get<std::uint64_t>(what);
    if (item_bytes != 0 && c > (n_ - at_) / item_bytes)
      throw std::runtime_error(std::string("count of ") + what + " larger than the file");
    return c;
  }
  std::size_t remaining() const { return n_ - at_; }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
  std::size_t at_ = 0;
};

std::vector<std::pair<std::uint64_t, std::string>> list_snapshots(const std::string& dir) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::uint64_t seq = 0;
    if (e.is_regular_file() && parse_numbered_name(e.path().filename().string(), "snapshot-", ".snap", seq))
      out.emplace_back(seq, e.path().string());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first > b.first; });  // newest first
  return out;
}

}  // namespace

std::string snapshot_file_name(std::uint64_t journal_seq) {
  char name[64];
  std::snprintf(name, sizeof name, "snapshot-%020llu.snap", static_cast<unsigned long long>(journal_seq));
  return name;
}

std::vector<std::uint8_t> encode_engine_snapshot(std::uint64_t journal_seq, std::uint64_t fingerprint,
                                                 const engine::EngineState& s,
                                                 const controls::ControlsState& controls) {
  Writer w;
  for (const char c : kMagic) w.put(c);
  w.put(kVersion);
  w.put(std::uint32_t{0});
  w.put(journal_seq);
  w.put(fingerprint);
  w.put(s.requests);
  w.put(s.report_seq);
  w.put(s.md_seq);
  w.put(s.next_order_id);
  w.put(static_cast<std::uint64_t>(s.books.size()));
  for (const auto& b : s.books) {
    w.put(static_cast<std::uint8_t>(b.has_last_trade));
    w.put(b.last_trade);
    w.put(b.md_seq);
    w.put(static_cast<std::uint64_t>(b.orders.size()));
    for (const auto& o : b.orders) {
      w.put(o.order_id);
      w.put(o.client);
      w.put(o.client_order_id);
      w.put(static_cast<std::uint8_t>(o.side));
      w.put(static_cast<std::uint8_t>(o.stp));
      w.put(o.price);
      w.put(o.order_qty);
      w.put(o.cum_qty);
    }
    for (const auto* keys : {&b.finished_previous, &b.finished_current}) {
      w.put(static_cast<std::uint64_t>(keys->size()));
      for (const std::uint64_t k : *keys) w.put(k);
    }
    w.put(b.finished_current_adds);
  }
  w.put(static_cast<std::uint64_t>(controls.accounts.size()));
  for (const auto& a : controls.accounts) {
    w.put(a.client);
    const auto cash = static_cast<controls::UnsignedMoney>(a.cash);
    w.put(static_cast<std::uint64_t>(cash >> 64));
    w.put(static_cast<std::uint64_t>(cash));
    w.put(static_cast<std::uint64_t>(a.positions.size()));
    for (const engine::Qty q : a.positions) w.put(q);
  }
  w.put(static_cast<std::uint64_t>(controls.halted.size()));
  for (const engine::InstrumentId i : controls.halted) w.put(i);
  w.put(static_cast<std::uint64_t>(controls.blocked.size()));
  for (const engine::ClientId c : controls.blocked) w.put(c);
  w.put(core::crc32c(0, w.bytes.data(), w.bytes.size()));
  return std::move(w.bytes);
}

LoadedSnapshot decode_engine_snapshot(const std::vector<std::uint8_t>& bytes, std::uint64_t fingerprint) {
  if (bytes.size() < sizeof kMagic + 4) throw std::runtime_error("too short to be a snapshot");
  std::uint32_t stored_crc;
  std::memcpy(&stored_crc, bytes.data() + bytes.size() - 4, 4);
  if (core::crc32c(0, bytes.data(), bytes.size() - 4) != stored_crc)
    throw std::runtime_error("CRC mismatch (torn or corrupt file)");
  Reader r(bytes.data(), bytes.size() - 4);
  for (const char c : kMagic)
    if (r.get<char>("magic") != c) throw std::runtime_error("not a nanotick engine snapshot (bad magic)");
  const auto version = r.get<std::uint32_t>("version");
  if (version < kOldestReadable || version > kVersion)
    throw std::runtime_error("unsupported snapshot version " + std::to_string(version));
  (void)r.get<std::uint32_t>("reserved");
  LoadedSnapshot out;
  out.journal_seq = r.get<std::uint64_t>("journal seq");
  if (const auto fp = r.get<std::uint64_t>("fingerprint"); fp != fingerprint)
    throw std::runtime_error("written for another instrument table (fingerprint " + std::to_string(fp) + ")");
  engine::EngineState& s = out.state;
  s.requests = r.get<std::uint64_t>("counters");
  s.report_seq = r.get<std::uint64_t>("counters");
  s.md_seq = r.get<std::uint64_t>("counters");
  s.next_order_id = r.get<std::uint64_t>("counters");
  const std::uint64_t nbooks = r.count("books", 1 + 8 + 8 + 8 + 8);
  s.books.resize(nbooks);
  for (auto& b : s.books) {
    const auto has = r.get<std::uint8_t>("book");
    if (has > 1) throw std::runtime_error("bad last-trade flag");
    b.has_last_trade = has == 1;
    b.last_trade = r.get<std::int64_t>("book");
    b.md_seq = r.get<std::uint64_t>("book");
    b.orders.resize(r.count("orders", kOrderBytes));
    for (auto& o : b.orders) {
      o.order_id = r.get<std::uint64_t>("order");
      o.client = r.get<std::uint32_t>("order");
      o.client_order_id = r.get<std::uint64_t>("order");
      o.side = static_cast<engine::Side>(r.get<std::uint8_t>("order"));
      o.stp = static_cast<engine::StpMode>(r.get<std::uint8_t>("order"));
      o.price = r.get<std::int64_t>("order");
      o.order_qty = r.get<std::int64_t>("order");
      o.cum_qty = r.get<std::int64_t>("order");
    }
    for (auto* keys : {&b.finished_previous, &b.finished_current}) {
      keys->resize(r.count("finished orders", 8));
      for (auto& k : *keys) k = r.get<std::uint64_t>("finished order");
    }
    b.finished_current_adds = r.get<std::uint32_t>("finished orders");
  }
  if (version >= 3) {
    out.controls.accounts.resize(r.count("accounts", 4 + 8 + 8 + 8));
    for (auto& a : out.controls.accounts) {
      a.client = r.get<std::uint32_t>("account");
      const auto hi = r.get<std::uint64_t>("account");
      const auto lo = r.get<std::uint64_t>("account");
      a.cash = static_cast<controls::Money>((static_cast<controls::UnsignedMoney>(hi) << 64) | lo);
      a.positions.resize(r.count("positions", 8));
      for (auto& q : a.positions) q = r.get<std::int64_t>("position");
    }
  }
  if (version >= 4) {
    out.controls.halted.resize(r.count("halted instruments", 4));
    for (auto& i : out.controls.halted) i = r.get<std::uint32_t>("halted instrument");
    out.controls.blocked.resize(r.count("blocked clients", 4));
    for (auto& c : out.controls.blocked) c = r.get<std::uint32_t>("blocked client");
  }
  if (r.remaining() != 0) throw std::runtime_error("trailing bytes after the last book");
  return out;
}

void write_engine_snapshot(const std::string& dir, std::uint64_t journal_seq, std::uint64_t fingerprint,
                           const engine::EngineState& state, const controls::ControlsState& controls) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("snapshot: cannot create " + dir + ": " + ec.message());
  const std::vector<std::uint8_t> bytes = encode_engine_snapshot(journal_seq, fingerprint, state, controls);
  const std::string final_path = dir + "/" + snapshot_file_name(journal_seq);
  const std::string tmp = final_path + ".tmp";
  // Owner only: a snapshot holds every client's working orders and balances.
  // fchmod too: a .tmp a crash left behind keeps its old mode through O_TRUNC.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("snapshot: cannot create " + tmp + ": " + std::strerror(errno));
  if (::fchmod(fd, 0600) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error("snapshot: cannot make " + tmp + " mode 0600: " + std::strerror(err));
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error("snapshot: cannot write " + tmp + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("snapshot: cannot sync " + tmp + ": " + std::strerror(errno));
  }
  if (::rename(tmp.c_str(), final_path.c_str()) != 0)
    throw std::runtime_error("snapshot: cannot rename " + tmp + ": " + std::strerror(errno));
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  const auto all = list_snapshots(dir);
  for (std::size_t i = 2; i < all.size(); ++i) fs::remove(all[i].second, ec);
}

std::optional<LoadedSnapshot> load_latest_snapshot(const std::string& dir, std::uint64_t fingerprint,
                                                   std::vector<std::string>& problems) {
  for (const auto& [seq, path] : list_snapshots(dir)) {
    std::ifstream in(path, std::ios::binary);
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      problems.push_back(path + ": cannot read");
      continue;
    }
    try {
      LoadedSnapshot s = decode_engine_snapshot(bytes, fingerprint);
      if (s.journal_seq != seq) throw std::runtime_error("file name and contents disagree on the journal seq");
      s.path = path;
      return s;
    } catch (const std::exception& e) {
      problems.push_back(path + ": " + e.what());
    }
  }
  return std::nullopt;
}

}  // namespace nanotick::exchange
