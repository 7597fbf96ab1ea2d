// Fixed-capacity object pool with an intrusive free list.
//
// Not thread-safe: a pool belongs to one owning thread, which does every
// allocate() and release(). (Objects may be read by other threads only through
// the project's usual hand-off mechanisms; the pool itself is never shared.)
//
// All storage is allocated once, in the constructor, and written end to end
// there so that every page is faulted in before the hot path runs. After
// construction the pool never allocates. allocate() pops the head of a singly
// linked free list whose link lives inside the unused slot (a union with the
// object's storage), release() pushes it back: both O(1), a handful of
// instructions, no branches besides "is the list empty". Exhaustion is an
// explicit outcome: allocate() returns nullptr and exhausted_count() goes up.
//
// Checking: in debug and sanitizer builds (no NDEBUG) release() verifies via
// NT_DEBUG_ASSERT that the pointer is one of this pool's slots and that the
// slot is live (a per-slot state byte catches double release); under
// AddressSanitizer free slots are also poisoned, so a use after release is
// reported. Release builds carry none of this: no state bytes, no checks.
// The class layout therefore differs between NDEBUG and non-NDEBUG builds; do
// not mix the two in one program (a build does not, by construction).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/compiler.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define NT_POOL_POISON(addr, size) ASAN_POISON_MEMORY_REGION(addr, size)
#define NT_POOL_UNPOISON(addr, size) ASAN_UNPOISON_MEMORY_REGION(addr, size)
#else
#define NT_POOL_POISON(addr, size) ((void)(addr), (void)(size))
#define NT_POOL_UNPOISON(addr, size) ((void)(addr), (void)(size))
#endif

namespace nanotick::core {

template <typename T>
class ObjectPool {
  static_assert(std::is_object_v<T> && !std::is_array_v<T> && !std::is_const_v<T>,
                "ObjectPool<T>: T must be a non-const, non-array object type");

  // A slot holds either a live T or, while free, the link to the next free slot.
  union Slot {
    Slot* next;
    alignas(T) std::byte storage[sizeof(T)];
  };
  static constexpr std::size_t kSlotAlign = alignof(Slot) > kCacheLine ? alignof(Slot) : kCacheLine;

 public:
  // Allocates and pre-faults storage for `capacity` objects. Start-up only:
  // throws std::invalid_argument for a zero capacity, std::length_error if the
  // storage size would overflow, std::bad_alloc if memory is short.
  explicit ObjectPool(std::size_t capacity) : capacity_(capacity) {
    if (capacity == 0)
      throw std::invalid_argument("ObjectPool: capacity must be at least 1 (check the pool size in the config)");
    if (capacity > SIZE_MAX / sizeof(Slot))
      throw std::length_error("ObjectPool: capacity " + std::to_string(capacity) + " of " +
                              std::to_string(sizeof(Slot)) + "-byte slots overflows the address space");
    const std::size_t bytes = capacity * sizeof(Slot);
    void* raw = ::operator new(bytes, std::align_val_t{kSlotAlign});
    // Write every byte once: all pages are faulted in here, not on the hot path.
    std::memset(raw, 0, bytes);
    slots_ = static_cast<Slot*>(raw);
    for (std::size_t i = 0; i < capacity; ++i) {
      ::new (static_cast<void*>(&slots_[i])) Slot;
      slots_[i].next = (i + 1 < capacity) ? &slots_[i + 1] : nullptr;
    }
    free_head_ = slots_;
#if !defined(NDEBUG)
    state_ = std::make_unique<std::uint8_t[]>(capacity);  // all kFree (0)
#endif
    NT_POOL_POISON(slots_, bytes);
  }

  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;
  ObjectPool(ObjectPool&&) = delete;
  ObjectPool& operator=(ObjectPool&&) = delete;

  // Destroys any objects still live, then frees the storage.
  ~ObjectPool() {
    NT_POOL_UNPOISON(slots_, capacity_ * sizeof(Slot));
    if constexpr (!std::is_trivially_destructible_v<T>) {
      if (in_use_ != 0) destroy_live_objects();
    }
    ::operator delete(static_cast<void*>(slots_), std::align_val_t{kSlotAlign});
  }

  // Constructs a T in a free slot from `args`. Returns nullptr (and counts it)
  // when every slot is in use. If T's constructor throws, the slot goes back to
  // the free list and the exception propagates.
  template <typename... Args>
  [[nodiscard]] NT_ALWAYS_INLINE T* allocate(Args&&... args) noexcept(std::is_nothrow_constructible_v<T, Args...>) {
    Slot* slot = free_head_;
    if (slot == nullptr) [[unlikely]] {
      ++exhausted_count_;
      return nullptr;
    }
    NT_POOL_UNPOISON(slot, sizeof(Slot));
    free_head_ = slot->next;
#if !defined(NDEBUG)
    state_[index_of(slot)] = kLive;
#endif
    ++in_use_;
    if constexpr (std::is_nothrow_constructible_v<T, Args...>) {
      return ::new (static_cast<void*>(slot->storage)) T(std::forward<Args>(args)...);
    } else {
      try {
        return ::new (static_cast<void*>(slot->storage)) T(std::forward<Args>(args)...);
      } catch (...) {
        push_free(slot);
        throw;
      }
    }
  }

  // Destroys *obj and returns its slot to the pool. `obj` must come from this
  // pool's allocate() and not have been released since (checked in debug builds).
  NT_ALWAYS_INLINE void release(T* obj) noexcept {
    NT_DEBUG_ASSERT(owns(obj), "ObjectPool::release: pointer does not belong to this pool");
    Slot* slot = slot_of(obj);
#if !defined(NDEBUG)
    NT_DEBUG_ASSERT(state_[index_of(slot)] == kLive, "ObjectPool::release: double release (slot is already free)");
#endif
    obj->~T();
    push_free(slot);
  }

  // True if `p` points at the start of one of this pool's slots (live or free).
  bool owns(const T* p) const noexcept {
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    const auto base = reinterpret_cast<std::uintptr_t>(slots_);
    return addr >= base && addr < base + capacity_ * sizeof(Slot) && (addr - base) % sizeof(Slot) == 0;
  }

  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t in_use() const noexcept { return in_use_; }
  std::size_t available() const noexcept { return capacity_ - in_use_; }
  // Number of allocate() calls that returned nullptr because the pool was full.
  std::uint64_t exhausted_count() const noexcept { return exhausted_count_; }
  // Bytes of object storage (excluding debug state), for sizing reports.
  static constexpr std::size_t slot_size() noexcept { return sizeof(Slot); }

 private:
  static constexpr std::uint8_t kFree = 0;
  static constexpr std::uint8_t kLive = 1;

  NT_ALWAYS_INLINE std::size_t index_of(const Slot* slot) const noexcept {
    return static_cast<std::size_t>(slot - slots_);
  }
  // Maps an object pointer back to its slot through the slot array, so the
  // result is derived from slots_ (no cast from T* to the union).
  NT_ALWAYS_INLINE Slot* slot_of(const T* obj) const noexcept {
    const auto offset = reinterpret_cast<std::uintptr_t>(obj) - reinterpret_cast<std::uintptr_t>(slots_);
    return slots_ + offset / sizeof(Slot);
  }
  NT_ALWAYS_INLINE void push_free(Slot* slot) noexcept {
    slot->next = free_head_;
    free_head_ = slot;
    --in_use_;
#if !defined(NDEBUG)
    state_[index_of(slot)] = kFree;
#endif
    NT_POOL_POISON(slot, sizeof(Slot));
  }

  NT_COLD void destroy_live_objects() noexcept {
#if !defined(NDEBUG)
    for (std::size_t i = 0; i < capacity_; ++i)
      if (state_[i] == kLive) std::launder(reinterpret_cast<T*>(slots_[i].storage))->~T();
#else
    // Release builds keep no per-slot state: find the free slots by walking the
    // free list once (cold path, only when objects are still live at teardown).
    std::vector<bool> is_free(capacity_, false);
    for (const Slot* s = free_head_; s != nullptr; s = s->next) is_free[index_of(s)] = true;
    for (std::size_t i = 0; i < capacity_; ++i)
      if (!is_free[i]) std::launder(reinterpret_cast<T*>(slots_[i].storage))->~T();
#endif
  }

  Slot* slots_ = nullptr;
  Slot* free_head_ = nullptr;
  std::size_t capacity_;
  std::size_t in_use_ = 0;
  std::uint64_t exhausted_count_ = 0;
#if !defined(NDEBUG)
  std::unique_ptr<std::uint8_t[]> state_;  // per slot: kFree or kLive (debug builds only)
#endif
};

}  // namespace nanotick::core

#undef NT_POOL_POISON
#undef NT_POOL_UNPOISON
