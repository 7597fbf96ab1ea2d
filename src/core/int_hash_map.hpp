// Fixed-capacity hash map for integer keys (order ids, instrument ids, ...).
//
// Not thread-safe: one owning thread does every operation.
//
// Open addressing with linear probing in a power-of-two table of {key, value}
// slots, sized once at construction to hold `max_elements` at a load factor of
// at most 1/2. Storage is allocated and written (pre-faulted) in the
// constructor; no operation allocates afterwards. insert() beyond max_elements
// returns InsertResult::kFull instead of growing.
//
// Every key value is usable, 0 and the type's min/max included: occupancy is
// kept in a separate bitmap (one bit per slot, 1/128 of the slot array for
// 64-bit keys and values), never in a reserved "empty" key.
//
// erase() uses backward-shift deletion: the entries after the hole that could
// live earlier are moved back, so there are no tombstones. Whatever the history
// of inserts and erases, the occupied slots and the total displacement are
// exactly those of a fresh table holding the same keys (the tests check this),
// so probe lengths stay those of a load-1/2 table under any amount of churn.
//
// Hash: a functor mapping a key to a uint64_t whose HIGH bits pick the home
// slot. The default, IntMixHash, is murmur3's fmix64 finalizer: every output
// bit depends on every key bit, so sequential ids, ids that differ only in
// their low bits and ids that differ only in their high bits all spread like
// random keys. IntFibonacciHash (one multiply) is an option for trusted,
// mostly sequential keys such as venue-assigned order ids: it spreads an
// arithmetic sequence more evenly than random (fewer collisions, shorter
// probes) and is cheaper, but keys with a crafted stride all collide, so do not
// use it for keys an outsider chooses. Tests also plug in deliberately bad
// hashes to force long clusters and wrap-around.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/compiler.hpp"

namespace nanotick::core {

// murmur3's 64-bit finalizer: a bijection on uint64_t with full avalanche.
NT_ALWAYS_INLINE constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

struct IntMixHash {
  template <typename Key>
  NT_ALWAYS_INLINE constexpr std::uint64_t operator()(Key key) const noexcept {
    // Signed keys: reinterpret as the same-width unsigned value, then widen.
    return mix64(static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<Key>>(key)));
  }
};

// Knuth's multiplicative (Fibonacci) hashing: key * 2^64/phi; the map uses the
// product's high bits. See the header comment for when to prefer it.
struct IntFibonacciHash {
  template <typename Key>
  NT_ALWAYS_INLINE constexpr std::uint64_t operator()(Key key) const noexcept {
    return static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<Key>>(key)) * 0x9e3779b97f4a7c15ULL;
  }
};

enum class InsertResult : std::uint8_t {
  kInserted,        // the key was absent and is now mapped to the given value
  kAlreadyPresent,  // the key was present; its value is unchanged
  kFull,            // the key was absent and the map holds max_elements already
};

template <typename Key, typename Value, typename Hash = IntMixHash>
class IntHashMap {
  static_assert(std::is_integral_v<Key> && !std::is_same_v<Key, bool>, "IntHashMap: Key must be an integer type");
  static_assert(std::is_nothrow_move_constructible_v<Value> && std::is_nothrow_destructible_v<Value>,
                "IntHashMap: Value must be nothrow move-constructible (entries move on erase)");

  struct Slot {
    Key key;
    union {
      Value value;  // constructed only while the slot is occupied
    };
    Slot() noexcept {}
    ~Slot() {}
  };

 public:
  struct ProbeStats {
    std::size_t entries = 0;
    std::uint64_t total_displacement = 0;  // sum over entries of (slot - home slot)
    std::size_t max_displacement = 0;
    // Average number of slots a successful find() inspects.
    double mean_probe_length() const noexcept {
      return entries ? 1.0 + static_cast<double>(total_displacement) / static_cast<double>(entries) : 0.0;
    }
  };

  // Sizes the table for `max_elements` entries at load factor <= 1/2 and
  // pre-faults it. Start-up only: throws std::invalid_argument for 0 and
  // std::length_error if the table would not fit in memory.
  explicit IntHashMap(std::size_t max_elements) : max_elements_(max_elements) {
    if (max_elements == 0)
      throw std::invalid_argument("IntHashMap: max_elements must be at least 1 (check the map size in the config)");
    if (max_elements > (SIZE_MAX / 2) / sizeof(Slot))
      throw std::length_error("IntHashMap: max_elements " + std::to_string(max_elements) +
                              " is too large for the address space");
    table_size_ = std::bit_ceil(std::max<std::size_t>(2 * max_elements, 16));
    mask_ = table_size_ - 1;
    shift_ = static_cast<unsigned>(64 - std::countr_zero(table_size_));
    slots_ = std::make_unique<Slot[]>(table_size_);
    words_ = std::make_unique<std::uint64_t[]>(word_count());  // zeroed: all empty
    // Touch every page of the slot array now rather than on the hot path.
    for (std::size_t i = 0; i < table_size_; ++i) slots_[i].key = Key{};
  }

  IntHashMap(const IntHashMap&) = delete;
  IntHashMap& operator=(const IntHashMap&) = delete;
  IntHashMap(IntHashMap&&) = delete;
  IntHashMap& operator=(IntHashMap&&) = delete;

  ~IntHashMap() { destroy_all(); }

  // Maps `key` to a Value built from `args` unless the key is present or the
  // map is full; see InsertResult. Never allocates.
  template <typename... Args>
  [[nodiscard]] InsertResult emplace(Key key,
                                     Args&&... args) noexcept(std::is_nothrow_constructible_v<Value, Args...>) {
    std::size_t i = home(key);
    while (occupied(i)) {
      if (slots_[i].key == key) return InsertResult::kAlreadyPresent;
      i = (i + 1) & mask_;
    }
    if (size_ == max_elements_) [[unlikely]]
      return InsertResult::kFull;
    ::new (static_cast<void*>(std::addressof(slots_[i].value))) Value(std::forward<Args>(args)...);
    slots_[i].key = key;
    set_occupied(i);
    ++size_;
    return InsertResult::kInserted;
  }
  [[nodiscard]] InsertResult insert(Key key, const Value& value) noexcept(std::is_nothrow_copy_constructible_v<Value>) {
    return emplace(key, value);
  }
  [[nodiscard]] InsertResult insert(Key key, Value&& value) noexcept { return emplace(key, std::move(value)); }

  // The value mapped to `key`, or nullptr. The pointer stays valid until the
  // next erase() or clear() (erase may move other entries).
  [[nodiscard]] NT_ALWAYS_INLINE Value* find(Key key) noexcept {
    std::size_t i = home(key);
    while (occupied(i)) {
      if (slots_[i].key == key) return std::addressof(slots_[i].value);
      i = (i + 1) & mask_;
    }
    return nullptr;
  }
  [[nodiscard]] NT_ALWAYS_INLINE const Value* find(Key key) const noexcept {
    return const_cast<IntHashMap*>(this)->find(key);
  }
  [[nodiscard]] bool contains(Key key) const noexcept { return find(key) != nullptr; }

  // Removes `key` if present; returns whether it was. Backward-shift deletion:
  // later entries of the cluster move back into the hole, so no tombstones.
  [[nodiscard]] bool erase(Key key) noexcept {
    std::size_t hole = home(key);
    while (true) {
      if (!occupied(hole)) return false;
      if (slots_[hole].key == key) break;
      hole = (hole + 1) & mask_;
    }
    slots_[hole].value.~Value();
    // Walk the rest of the cluster. An entry at j whose home is not cyclically
    // within (hole, j] may legally sit at `hole`: move it there and continue
    // with the hole it leaves behind.
    std::size_t j = hole;
    while (true) {
      j = (j + 1) & mask_;
      if (!occupied(j)) break;
      const std::size_t from_home = (j - home(slots_[j].key)) & mask_;
      const std::size_t from_hole = (j - hole) & mask_;
      if (from_home >= from_hole) {
        slots_[hole].key = slots_[j].key;
        ::new (static_cast<void*>(std::addressof(slots_[hole].value))) Value(std::move(slots_[j].value));
        slots_[j].value.~Value();
        hole = j;
      }
    }
    clear_occupied(hole);
    --size_;
    return true;
  }

  // Removes every entry. O(table_size / 64) for trivially destructible values.
  void clear() noexcept {
    destroy_all();
    std::memset(words_.get(), 0, word_count() * sizeof(std::uint64_t));
    size_ = 0;
  }

  // Calls fn(key, value) for every entry, in table order.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t i = 0; i < table_size_; ++i)
      if (occupied(i)) fn(slots_[i].key, static_cast<const Value&>(slots_[i].value));
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  // Maximum number of entries (the constructor's max_elements).
  std::size_t capacity() const noexcept { return max_elements_; }
  // Number of slots in the table: a power of two >= 2 * capacity().
  std::size_t table_size() const noexcept { return table_size_; }

  // Number of slots find(key) inspects: 1 + displacement for a present key;
  // for an absent key, the slots up to and including the first empty one.
  std::size_t probe_length(Key key) const noexcept {
    std::size_t i = home(key);
    std::size_t n = 1;
    while (occupied(i) && slots_[i].key != key) {
      i = (i + 1) & mask_;
      ++n;
    }
    return n;
  }

  // Displacement statistics over all entries (O(table_size); for tests and reports).
  ProbeStats probe_stats() const noexcept {
    ProbeStats s;
    for (std::size_t i = 0; i < table_size_; ++i) {
      if (!occupied(i)) continue;
      const std::size_t d = (i - home(slots_[i].key)) & mask_;
      ++s.entries;
      s.total_displacement += d;
      if (d > s.max_displacement) s.max_displacement = d;
    }
    return s;
  }

 private:
  NT_ALWAYS_INLINE std::size_t home(Key key) const noexcept { return static_cast<std::size_t>(Hash{}(key) >> shift_); }
  std::size_t word_count() const noexcept { return (table_size_ + 63) / 64; }
  NT_ALWAYS_INLINE bool occupied(std::size_t i) const noexcept { return (words_[i >> 6] >> (i & 63)) & 1u; }
  NT_ALWAYS_INLINE void set_occupied(std::size_t i) noexcept { words_[i >> 6] |= std::uint64_t{1} << (i & 63); }
  NT_ALWAYS_INLINE void clear_occupied(std::size_t i) noexcept { words_[i >> 6] &= ~(std::uint64_t{1} << (i & 63)); }
  void destroy_all() noexcept {
    if constexpr (!std::is_trivially_destructible_v<Value>) {
      for (std::size_t i = 0; i < table_size_; ++i)
        if (occupied(i)) slots_[i].value.~Value();
    }
  }

  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<std::uint64_t[]> words_;  // occupancy bitmap, bit i = slot i
  std::size_t mask_ = 0;
  std::size_t table_size_ = 0;
  unsigned shift_ = 0;  // 64 - log2(table_size_): home slot = hash >> shift_
  std::size_t size_ = 0;
  std::size_t max_elements_;
};

}  // namespace nanotick::core
