// The keys of an instrument's recently finished orders, to tell a late
// cancel/modify (kTooLateToCancel) from one naming an order never seen
// (kUnknownOrder); see docs/MATCHING.md "Finished orders". Not thread-safe:
// the engine's thread owns it.
//
// Two generations of `capacity` finishes each: the current one collects the
// keys of finished orders; once it has collected `capacity` finishes, the
// next add() makes it the previous one (forgetting the one before) and starts
// an empty current one. A key is finished while either generation has it, so
// it is remembered for at least `capacity` and fewer than 2 x `capacity`
// further finishes of the instrument.
//
// Why generations and not the exact last-`capacity` keys: every finished
// order costs an add(), on the engine's hottest path. Forgetting exactly the
// oldest key needs a ring of keys plus a counted set and, per add, a second
// random probe and a deletion (the profile put ~25% of the engine's time
// there on the crash and cancel-heavy workloads). Here an add is ONE probe
// into the current generation's table, and forgetting a whole generation is
// O(1): each table carries a generation tag and a slot is occupied only
// while its tag equals its table's, so bumping the tag empties the table
// without touching it. Nothing is ever deleted inside a generation, so the
// stale slots are simply empty ones to both probes and inserts.
//
// Each generation is a linear-probing set at load <= 1/2 with the murmur3
// finaliser (keys come from clients: a weak hash would let them build
// clusters). All storage is allocated and pre-faulted in the constructor.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/compiler.hpp"
#include "core/int_hash_map.hpp"

namespace nanotick::engine {

class FinishedOrders {
  struct Slot {
    std::uint64_t key;
    std::uint32_t tag;  // occupied while == its table's tag (0: never written)
    std::uint32_t pad;
  };
  struct Table {
    std::unique_ptr<Slot[]> slots;
    std::uint32_t tag = 1;
    std::uint32_t distinct = 0;  // occupied slots
  };

 public:
  explicit FinishedOrders(std::uint32_t capacity)
      : capacity_(capacity),
        table_size_(table_size_for(capacity)),
        mask_(static_cast<std::uint32_t>(table_size_ - 1)),
        shift_(static_cast<unsigned>(64 - std::countr_zero(table_size_))) {
    if (capacity == 0) throw std::invalid_argument("FinishedOrders: capacity must be at least 1");
    for (Table& t : tables_) t.slots = std::make_unique<Slot[]>(table_size_);  // value-initialised: written
  }

  // Remembers `key`; when the current generation is full, it becomes the
  // previous one first (the one before is forgotten).
  NT_ALWAYS_INLINE void add(std::uint64_t key) noexcept {
    if (current_adds_ == capacity_) [[unlikely]]
      start_generation();
    ++current_adds_;
    Table& t = tables_[current_];
    std::uint32_t i = home_of(key);
    while (t.slots[i].tag == t.tag) {
      if (t.slots[i].key == key) return;
      i = (i + 1) & mask_;
    }
    t.slots[i] = Slot{key, t.tag, 0};  // distinct keys <= capacity <= half the table: never full
    ++t.distinct;
  }

  NT_ALWAYS_INLINE bool contains(std::uint64_t key) const noexcept {
    return in(tables_[current_], key) || in(tables_[current_ ^ 1], key);
  }

  // Starts loading the slot the next add(key) will probe first, so the cache
  // miss overlaps the caller's work.
  NT_ALWAYS_INLINE void prefetch_add(std::uint64_t key) const noexcept {
    __builtin_prefetch(&tables_[current_].slots[home_of(key)], 1);
  }

  // The state, for snapshots: the previous generation's keys, the current
  // one's, and how many add()s the current one has taken (>= its keys:
  // a key finished twice in a generation is stored once).
  std::vector<std::uint64_t> previous_keys() const { return keys_of(tables_[current_ ^ 1]); }
  std::vector<std::uint64_t> current_keys() const { return keys_of(tables_[current_]); }
  std::uint32_t current_adds() const noexcept { return current_adds_; }

  // Loads a state saved from a memory of the same capacity into this fresh
  // one (nothing added yet). Throws std::invalid_argument naming the first
  // inconsistency: a generation with more keys than `capacity`, a key listed
  // twice in one generation, more current keys than current adds, more adds
  // than `capacity`.
  void restore(const std::vector<std::uint64_t>& previous, const std::vector<std::uint64_t>& current,
               std::uint32_t current_adds) {
    if (current_adds_ != 0 || tables_[0].distinct != 0 || tables_[1].distinct != 0)
      throw std::invalid_argument("finished orders: restore into a memory already in use");
    if (previous.size() > capacity_ || current.size() > capacity_)
      throw std::invalid_argument("finished orders: a generation holds more keys than the capacity");
    if (current_adds > capacity_ || current.size() > current_adds)
      throw std::invalid_argument("finished orders: current generation count out of range");
    if (!previous.empty() && current_adds == 0)
      throw std::invalid_argument("finished orders: a previous generation but no current one");
    for (const std::uint64_t key : previous) insert_new(tables_[current_], key, "previous");
    if (!previous.empty()) start_generation();  // `previous` becomes the previous generation
    for (const std::uint64_t key : current) insert_new(tables_[current_], key, "current");
    current_adds_ = current_adds;
  }

  // For invariant checks: what is inconsistent, or nullptr. Walks both tables.
  const char* inconsistency() const noexcept {
    if (current_adds_ > capacity_) return "finished-order generation took more adds than its capacity";
    for (const Table& t : tables_) {
      std::uint64_t occupied = 0;
      for (std::uint64_t i = 0; i < table_size_; ++i) occupied += t.slots[i].tag == t.tag ? 1 : 0;
      if (occupied != t.distinct) return "finished-order key count differs from the table";
      if (t.distinct > capacity_) return "finished-order generation holds more keys than its capacity";
    }
    if (tables_[current_].distinct > current_adds_) return "more current finished-order keys than adds";
    return nullptr;
  }

  std::uint32_t capacity() const noexcept { return capacity_; }

  static std::size_t bytes_for(std::uint32_t capacity) noexcept { return 2 * table_size_for(capacity) * sizeof(Slot); }

 private:
  static std::uint64_t table_size_for(std::uint32_t capacity) noexcept {
    return std::bit_ceil(std::max<std::uint64_t>(2 * std::uint64_t{capacity}, 16));
  }
  NT_ALWAYS_INLINE std::uint32_t home_of(std::uint64_t key) const noexcept {
    return static_cast<std::uint32_t>(core::mix64(key) >> shift_);
  }
  NT_ALWAYS_INLINE bool in(const Table& t, std::uint64_t key) const noexcept {
    std::uint32_t i = home_of(key);
    while (t.slots[i].tag == t.tag) {
      if (t.slots[i].key == key) return true;
      i = (i + 1) & mask_;
    }
    return false;
  }

  // The previous generation is forgotten; its table, emptied by a new tag,
  // becomes the current one.
  NT_COLD void start_generation() noexcept {
    current_ ^= 1;
    Table& t = tables_[current_];
    if (++t.tag == 0) {  // after 2^32 generations: really clear, so no stale slot can match
      for (std::uint64_t i = 0; i < table_size_; ++i) t.slots[i].tag = 0;
      t.tag = 1;
    }
    t.distinct = 0;
    current_adds_ = 0;
  }

  void insert_new(Table& t, std::uint64_t key, const char* which) {
    if (in(t, key))
      throw std::invalid_argument(std::string("finished orders: a key listed twice in the ") + which + " generation");
    std::uint32_t i = home_of(key);
    while (t.slots[i].tag == t.tag) i = (i + 1) & mask_;
    t.slots[i] = Slot{key, t.tag, 0};
    ++t.distinct;
  }

  std::vector<std::uint64_t> keys_of(const Table& t) const {
    std::vector<std::uint64_t> keys;
    keys.reserve(t.distinct);
    for (std::uint64_t i = 0; i < table_size_; ++i)
      if (t.slots[i].tag == t.tag) keys.push_back(t.slots[i].key);
    std::sort(keys.begin(), keys.end());  // a canonical order: equal memories export equal lists
    return keys;
  }

  std::uint32_t capacity_;
  std::uint32_t current_adds_ = 0;  // add()s into the current generation, <= capacity_
  std::uint32_t current_ = 0;       // index of the current generation's table
  std::uint64_t table_size_;
  std::uint32_t mask_;
  unsigned shift_;  // 64 - log2(table_size_)
  Table tables_[2];
};

}  // namespace nanotick::engine
