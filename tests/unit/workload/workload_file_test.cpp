// The binary workload file: round trip, and every malformed file rejected with
// a specific error naming the file and the offset.
#include "workload/workload_file.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "workload/generators.hpp"

namespace nanotick::workload {
namespace {

using engine::OrderType;
using engine::Side;

Workload small_workload() {
  Workload wl;
  wl.kind = WorkloadKind::kCustom;
  wl.seed = 42;
  wl.scale = 0.5;
  engine::InstrumentConfig a;
  a.symbol = "AAAA";
  engine::InstrumentConfig b;
  b.symbol = "SIXTEEN_BYTES_XX";
  b.tick_size = 5;
  b.min_price = -1000;
  b.max_price = 5000;
  b.collar = 50;
  b.max_orders = 77;
  b.max_levels = 9;
  wl.config.instruments = {a, b};
  wl.requests.push_back(engine::make_new(0, 3, 1, Side::kBuy, OrderType::kLimit, 100, 10));
  wl.requests.push_back(engine::make_new(1, 4, 2, Side::kSell, OrderType::kIoc, -995, 1));
  wl.requests.push_back(engine::make_modify(0, 3, 1, 101, 20));
  wl.requests.push_back(engine::make_cancel(0, 3, 1));
  auto odd = engine::make_new(7, 99999, ~0ull, Side::kBuy, OrderType::kMarket, -5, -7);
  odd.reserved = 0xDEADBEEF;  // malformed requests are data, kept as they are
  odd.event_id = 123456789;
  wl.requests.push_back(odd);
  return wl;
}

std::string error_of(const std::vector<std::uint8_t>& bytes) {
  try {
    (void)decode_workload(bytes, "test.bin");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

void put_u32(std::vector<std::uint8_t>& bytes, std::size_t at, std::uint32_t v) {
  std::memcpy(bytes.data() + at, &v, sizeof v);
}
void put_u64(std::vector<std::uint8_t>& bytes, std::size_t at, std::uint64_t v) {
  std::memcpy(bytes.data() + at, &v, sizeof v);
}
void fix_crc(std::vector<std::uint8_t>& bytes) {
  const std::size_t at = bytes.size() - kTrailerSize;
  put_u32(bytes, at, crc32(std::span(bytes).first(at)));
}

TEST(WorkloadFile, ShouldRoundTripEveryFieldInMemoryAndOnDisk) {
  const Workload wl = small_workload();
  const auto bytes = encode_workload(wl);
  EXPECT_EQ(bytes.size(), kHeaderSize + 2 * kInstrumentRecordSize + 5 * kRequestRecordSize + kTrailerSize);
  EXPECT_EQ(decode_workload(bytes, "mem"), wl);

  const auto path = (std::filesystem::temp_directory_path() / "nanotick_wl_roundtrip.bin").string();
  write_workload(wl, path);
  const Workload back = read_workload(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back, wl);
  EXPECT_EQ(back.config.instruments[1].symbol, "SIXTEEN_BYTES_XX");
  EXPECT_EQ(back.requests[4].reserved, 0xDEADBEEFu);
  EXPECT_EQ(back.requests[4].client_order_id, ~0ull);
}

TEST(WorkloadFile, ShouldRoundTripAGeneratedWorkload) {
  const Workload wl = generate({WorkloadKind::kMixed, 3, 0.01});
  EXPECT_EQ(decode_workload(encode_workload(wl), "mem"), wl);
}

TEST(WorkloadFile, ShouldComputeTheStandardCrc32) {
  const char* text = "123456789";
  EXPECT_EQ(crc32(std::span(reinterpret_cast<const std::uint8_t*>(text), 9)), 0xCBF43926u);
}

TEST(WorkloadFile, ShouldRejectAShortFile) {
  auto bytes = encode_workload(small_workload());
  bytes.resize(20);
  EXPECT_NE(error_of(bytes).find("short file"), std::string::npos) << error_of(bytes);
  EXPECT_NE(error_of({}).find("short file: 0 bytes"), std::string::npos);
}

TEST(WorkloadFile, ShouldRejectBadMagicNamingFileAndOffset) {
  auto bytes = encode_workload(small_workload());
  bytes[0] = 'X';
  EXPECT_EQ(error_of(bytes),
            "workload file 'test.bin': offset 0: bad magic: not a nanotick workload file (expected 'NTWORKLD')");
}

TEST(WorkloadFile, ShouldRejectAnUnsupportedVersion) {
  auto bytes = encode_workload(small_workload());
  put_u32(bytes, 8, 2);
  EXPECT_NE(error_of(bytes).find("offset 8: unsupported version 2"), std::string::npos) << error_of(bytes);
}

TEST(WorkloadFile, ShouldRejectABadChecksum) {
  auto bytes = encode_workload(small_workload());
  bytes[kHeaderSize + 2 * kInstrumentRecordSize + 17] ^= 0x01;  // a request's price bit
  EXPECT_NE(error_of(bytes).find("checksum mismatch"), std::string::npos) << error_of(bytes);
  auto trailer = encode_workload(small_workload());
  trailer.back() ^= 0x80;
  EXPECT_NE(error_of(trailer).find("checksum mismatch"), std::string::npos);
}

TEST(WorkloadFile, ShouldRejectTruncatedRecords) {
  auto bytes = encode_workload(small_workload());
  bytes.resize(bytes.size() - kRequestRecordSize / 2);
  EXPECT_NE(error_of(bytes).find("truncated"), std::string::npos) << error_of(bytes);
}

TEST(WorkloadFile, ShouldRejectACountThatDoesNotMatchTheRecords) {
  auto more = encode_workload(small_workload());
  put_u64(more, 40, 6);  // declares one request more than the file holds
  fix_crc(more);
  EXPECT_NE(error_of(more).find("truncated: the header declares 2 instruments and 6 requests"), std::string::npos)
      << error_of(more);
  auto fewer = encode_workload(small_workload());
  put_u64(fewer, 40, 4);
  fix_crc(fewer);
  EXPECT_NE(error_of(fewer).find("counts do not match the file size: 48 bytes beyond the declared 4"),
            std::string::npos)
      << error_of(fewer);
  auto huge = encode_workload(small_workload());
  put_u64(huge, 40, ~0ull);
  EXPECT_NE(error_of(huge).find("truncated"), std::string::npos) << error_of(huge);
  auto instruments = encode_workload(small_workload());
  put_u32(instruments, 32, 0);
  EXPECT_NE(error_of(instruments).find("offset 32: instrument count 0"), std::string::npos);
}

TEST(WorkloadFile, ShouldRejectAWrongRecordSizeOrKind) {
  auto bytes = encode_workload(small_workload());
  put_u32(bytes, 36, 40);
  EXPECT_NE(error_of(bytes).find("offset 36: request record size 40"), std::string::npos) << error_of(bytes);
  auto kind = encode_workload(small_workload());
  kind[12] = static_cast<std::uint8_t>(WorkloadKind::kLast) + 1;
  EXPECT_NE(error_of(kind).find("offset 12: unknown workload kind 10"), std::string::npos);
}

TEST(WorkloadFile, ShouldRejectAnInvalidInstrumentTableEvenWithAGoodChecksum) {
  auto bytes = encode_workload(small_workload());
  put_u64(bytes, kHeaderSize + 16, 0);  // instrument 0 tick_size = 0
  fix_crc(bytes);
  EXPECT_NE(error_of(bytes).find("invalid instrument table: instrument 0 ('AAAA'): tick_size must be > 0"),
            std::string::npos)
      << error_of(bytes);
}

TEST(WorkloadFile, ShouldNameTheFileWhenItCannotBeOpened) {
  try {
    (void)read_workload("/nonexistent/dir/x.bin");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "workload file '/nonexistent/dir/x.bin': cannot open for reading");
  }
}

TEST(WorkloadFile, ShouldRefuseASymbolThatDoesNotFit) {
  Workload wl = small_workload();
  wl.config.instruments[0].symbol = "SEVENTEEN_BYTES_X";
  EXPECT_THROW((void)encode_workload(wl), std::invalid_argument);
}

}  // namespace
}  // namespace nanotick::workload
