// Fuzz target: one direction of a shared-memory session's byte ring
// (src/ipc/shm_byte_ring.hpp) between an honest side and a peer that writes
// whatever it likes into the shared words. Each input is a script of steps:
//   0 w n      the honest writer writes n bytes (a counting pattern)
//   1 r n      the honest reader reads up to n bytes
//   2 x8       the peer stores x into the tail word (as a hostile producer)
//   3 x8       the peer stores x into the head word (as a hostile consumer)
//   4          the reader discards what is published
// The ring's buffer is a heap block of exactly its capacity, so ASan reports
// any access outside it. Oracles beyond "no crash, no sanitizer report":
// counts never exceed what was asked or the capacity; until the peer has
// tampered, every byte read is the next byte written (order and content);
// a broken view stays broken and moves no byte.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "ipc/shm_byte_ring.hpp"

namespace ni = nanotick::ipc;

namespace {

constexpr std::uint64_t kCap = 256;

[[noreturn]] void fail() { std::abort(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ni::ShmByteRingWords words{};
  auto buffer = std::make_unique<std::uint8_t[]>(kCap);  // exactly the capacity: ASan guards both ends
  ni::ShmByteRingWriter writer(&words, buffer.get(), kCap);
  ni::ShmByteRingReader reader(&words, buffer.get(), kCap);
  std::uint8_t next_written = 0;
  std::uint8_t next_read = 0;
  bool tampered = false;
  std::vector<std::uint8_t> scratch(2 * kCap);
  std::size_t i = 0;
  auto byte = [&]() -> std::uint8_t { return i < size ? data[i++] : 0; };
  auto u64 = [&]() {
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= std::uint64_t{byte()} << (8 * k);
    return v;
  };
  while (i < size) {
    switch (byte() % 5) {
      case 0: {
        const std::size_t n = byte() * 2u;  // up to 510: more than the ring holds
        for (std::size_t k = 0; k < n; ++k) scratch[k] = static_cast<std::uint8_t>(next_written + k);
        const bool was_broken = writer.broken();
        const std::size_t wrote = writer.write({scratch.data(), n});
        if (wrote > n || wrote > kCap || (was_broken && wrote != 0)) fail();
        next_written = static_cast<std::uint8_t>(next_written + wrote);
        break;
      }
      case 1: {
        const std::size_t n = byte() * 2u;
        const bool was_broken = reader.broken();
        const std::size_t got = reader.read({scratch.data(), n});
        if (got > n || got > kCap || (was_broken && got != 0)) fail();
        for (std::size_t k = 0; k < got; ++k) {
          if (!tampered && scratch[k] != next_read) fail();  // honest peers: the stream, in order
          ++next_read;
        }
        break;
      }
      case 2:
        words.tail = u64();
        tampered = true;
        break;
      case 3:
        words.head = u64();
        tampered = true;
        break;
      case 4: {
        const bool was_broken = reader.broken();
        const std::uint64_t before = reader.consumed();
        reader.discard();
        if (was_broken && reader.consumed() != before) fail();
        if (!tampered) next_read = static_cast<std::uint8_t>(reader.consumed());
        break;
      }
    }
    if (!tampered && (writer.broken() || reader.broken())) fail();  // honest sides never break
  }
  return 0;
}
