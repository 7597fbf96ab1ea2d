#include "workload/workload_file.hpp"

#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace nanotick::workload {

namespace {

static_assert(std::endian::native == std::endian::little,
              "the file codec below stores native integers: little-endian hosts only");

// Little-endian byte writer/reader over a buffer.
class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
    out_.insert(out_.end(), p, p + sizeof(T));
  }
  void put_bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    out_.insert(out_.end(), p, p + n);
  }

 private:
  std::vector<std::uint8_t>& out_;
};

class Reader {
 public:
  Reader(std::span<const std::uint8_t> bytes, std::size_t offset) : bytes_(bytes), offset_(offset) {}
  template <typename T>
  T get() {
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  std::size_t offset() const { return offset_; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t offset_;
};

[[noreturn]] void fail(const std::string& name, std::size_t offset, const std::string& problem) {
  throw std::runtime_error("workload file '" + name + "': offset " + std::to_string(offset) + ": " + problem);
}

constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr auto kCrcTable = make_crc_table();

}  // namespace

std::uint32_t crc32(std::span<const std::uint8_t> bytes) noexcept {
  std::uint32_t c = 0xFFFFFFFFu;
  for (const std::uint8_t b : bytes) c = kCrcTable[(c ^ b) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::vector<std::uint8_t> encode_workload(const Workload& workload) {
  const auto& instruments = workload.config.instruments;
  if (instruments.size() > kMaxInstruments)
    throw std::invalid_argument("workload has " + std::to_string(instruments.size()) +
                                " instruments; the file format holds at most " + std::to_string(kMaxInstruments));
  std::vector<std::uint8_t> out;
  out.reserve(kHeaderSize + instruments.size() * kInstrumentRecordSize + workload.requests.size() * kRequestRecordSize +
              kTrailerSize);
  Writer w(out);
  w.put_bytes(kFileMagic, sizeof kFileMagic);
  w.put<std::uint32_t>(kFileVersion);
  w.put<std::uint8_t>(static_cast<std::uint8_t>(workload.kind));
  w.put_bytes("\0\0\0", 3);
  w.put<std::uint64_t>(workload.seed);
  w.put<double>(workload.scale);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(instruments.size()));
  w.put<std::uint32_t>(static_cast<std::uint32_t>(kRequestRecordSize));
  w.put<std::uint64_t>(workload.requests.size());
  for (const auto& in : instruments) {
    if (in.symbol.size() > kMaxSymbolLength || in.symbol.find('\0') != std::string::npos)
      throw std::invalid_argument("instrument symbol '" + in.symbol + "' does not fit the file (at most " +
                                  std::to_string(kMaxSymbolLength) + " bytes, no NUL)");
    char symbol[kMaxSymbolLength] = {};
    std::memcpy(symbol, in.symbol.data(), in.symbol.size());
    w.put_bytes(symbol, sizeof symbol);
    w.put<std::int64_t>(in.tick_size);
    w.put<std::int64_t>(in.min_price);
    w.put<std::int64_t>(in.max_price);
    w.put<std::int64_t>(in.collar);
    w.put<std::int64_t>(in.max_order_qty);
    w.put<std::uint32_t>(in.max_orders);
    w.put<std::uint32_t>(in.max_levels);
  }
  for (const auto& r : workload.requests) {
    w.put<std::uint8_t>(static_cast<std::uint8_t>(r.type));
    w.put<std::uint8_t>(static_cast<std::uint8_t>(r.side));
    w.put<std::uint8_t>(static_cast<std::uint8_t>(r.order_type));
    w.put<std::uint8_t>(static_cast<std::uint8_t>(r.stp));
    w.put<std::uint32_t>(r.instrument);
    w.put<std::uint32_t>(r.client);
    w.put<std::uint32_t>(r.reserved);
    w.put<std::uint64_t>(r.client_order_id);
    w.put<std::int64_t>(r.price);
    w.put<std::int64_t>(r.qty);
    w.put<std::uint64_t>(r.event_id);
  }
  w.put<std::uint32_t>(crc32(out));
  return out;
}

Workload decode_workload(std::span<const std::uint8_t> bytes, const std::string& name) {
  if (bytes.size() < kHeaderSize + kTrailerSize)
    fail(name, bytes.size(),
         "short file: " + std::to_string(bytes.size()) + " bytes, a workload file has at least " +
             std::to_string(kHeaderSize + kTrailerSize) + " (header and checksum)");
  if (std::memcmp(bytes.data(), kFileMagic, sizeof kFileMagic) != 0)
    fail(name, 0, "bad magic: not a nanotick workload file (expected 'NTWORKLD')");
  Reader r(bytes, sizeof kFileMagic);
  const auto version = r.get<std::uint32_t>();
  if (version != kFileVersion)
    fail(name, 8,
         "unsupported version " + std::to_string(version) + " (this build reads version " +
             std::to_string(kFileVersion) + ")");
  Workload wl;
  const auto kind = r.get<std::uint8_t>();
  if (kind > static_cast<std::uint8_t>(WorkloadKind::kLast))
    fail(name, 12, "unknown workload kind " + std::to_string(kind));
  wl.kind = static_cast<WorkloadKind>(kind);
  for (int i = 0; i < 3; ++i)
    if (r.get<std::uint8_t>() != 0) fail(name, r.offset() - 1, "reserved header byte is not zero");
  wl.seed = r.get<std::uint64_t>();
  wl.scale = r.get<double>();
  const auto instrument_count = r.get<std::uint32_t>();
  const auto record_size = r.get<std::uint32_t>();
  const auto request_count = r.get<std::uint64_t>();
  if (instrument_count == 0 || instrument_count > kMaxInstruments)
    fail(name, 32,
         "instrument count " + std::to_string(instrument_count) + " is outside [1, " + std::to_string(kMaxInstruments) +
             "]");
  if (record_size != kRequestRecordSize)
    fail(name, 36,
         "request record size " + std::to_string(record_size) + " (version 1 records are " +
             std::to_string(kRequestRecordSize) + " bytes)");
  const std::uint64_t body = bytes.size() - kHeaderSize - kTrailerSize;
  const std::uint64_t table = std::uint64_t{instrument_count} * kInstrumentRecordSize;
  if (request_count > (std::numeric_limits<std::uint64_t>::max() - table) / kRequestRecordSize ||
      table + request_count * kRequestRecordSize > body) {
    fail(name, bytes.size(),
         "truncated: the header declares " + std::to_string(instrument_count) + " instruments and " +
             std::to_string(request_count) + " requests, but the file holds only " + std::to_string(bytes.size()) +
             " bytes");
  }
  if (table + request_count * kRequestRecordSize < body) {
    const std::uint64_t extra = body - table - request_count * kRequestRecordSize;
    fail(name, kHeaderSize + table + request_count * kRequestRecordSize,
         "counts do not match the file size: " + std::to_string(extra) + " bytes beyond the declared " +
             std::to_string(request_count) + " requests");
  }
  const std::size_t crc_offset = bytes.size() - kTrailerSize;
  std::uint32_t stored = 0;
  std::memcpy(&stored, bytes.data() + crc_offset, sizeof stored);
  const std::uint32_t computed = crc32(bytes.first(crc_offset));
  if (stored != computed) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "checksum mismatch: stored CRC-32 %08x, contents give %08x", stored, computed);
    fail(name, crc_offset, msg);
  }
  wl.config.instruments.resize(instrument_count);
  for (auto& in : wl.config.instruments) {
    const std::size_t at = r.offset();
    char symbol[kMaxSymbolLength];
    std::memcpy(symbol, bytes.data() + at, sizeof symbol);
    r = Reader(bytes, at + sizeof symbol);
    in.symbol.assign(symbol, strnlen(symbol, sizeof symbol));
    for (std::size_t i = in.symbol.size(); i < sizeof symbol; ++i)
      if (symbol[i] != '\0') fail(name, at + i, "instrument symbol has bytes after its NUL padding");
    in.tick_size = r.get<std::int64_t>();
    in.min_price = r.get<std::int64_t>();
    in.max_price = r.get<std::int64_t>();
    in.collar = r.get<std::int64_t>();
    in.max_order_qty = r.get<std::int64_t>();
    in.max_orders = r.get<std::uint32_t>();
    in.max_levels = r.get<std::uint32_t>();
  }
  try {
    wl.config.validate();
  } catch (const std::invalid_argument& e) {
    fail(name, kHeaderSize, std::string("invalid instrument table: ") + e.what());
  }
  // Request contents are not validated: replaying malformed requests is how the
  // engine's rejects are exercised. The records are copied field by field.
  wl.requests.resize(request_count);
  for (auto& q : wl.requests) {
    q.type = static_cast<engine::RequestType>(r.get<std::uint8_t>());
    q.side = static_cast<engine::Side>(r.get<std::uint8_t>());
    q.order_type = static_cast<engine::OrderType>(r.get<std::uint8_t>());
    q.stp = static_cast<engine::StpMode>(r.get<std::uint8_t>());
    q.instrument = r.get<std::uint32_t>();
    q.client = r.get<std::uint32_t>();
    q.reserved = r.get<std::uint32_t>();
    q.client_order_id = r.get<std::uint64_t>();
    q.price = r.get<std::int64_t>();
    q.qty = r.get<std::int64_t>();
    q.event_id = r.get<std::uint64_t>();
  }
  return wl;
}

void write_workload(const Workload& workload, const std::string& path) {
  const auto bytes = encode_workload(workload);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("workload file '" + path + "': cannot open for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) throw std::runtime_error("workload file '" + path + "': write failed (disk full?)");
}

Workload read_workload(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("workload file '" + path + "': cannot open for reading");
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0) throw std::runtime_error("workload file '" + path + "': cannot determine its size");
  in.seekg(0, std::ios::beg);
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!in) throw std::runtime_error("workload file '" + path + "': read failed");
  return decode_workload(bytes, path);
}

}  // namespace nanotick::workload
