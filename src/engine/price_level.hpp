// One price level: a FIFO queue of orders (intrusive doubly linked list) with
// its aggregate open quantity and order count. Not thread-safe: the engine's
// thread owns it.
#pragma once

#include <cstdint>

#include "core/compiler.hpp"
#include "engine/order.hpp"
#include "engine/types.hpp"

namespace nanotick::engine {

struct PriceLevel {
  Price price = 0;
  Qty qty = 0;               // sum of the orders' open quantities
  std::uint32_t orders = 0;  // number of orders queued
  LevelIndex next_free = kNoLevel;  // free-list link while the level is unused
  Order* head = nullptr;     // oldest: trades first
  Order* tail = nullptr;     // newest

  bool empty() const noexcept { return head == nullptr; }

  // Appends at the back (time priority: last).
  NT_ALWAYS_INLINE void push_back(Order* o) noexcept {
    o->prev = tail;
    o->next = nullptr;
    if (tail != nullptr) {
      tail->next = o;
    } else {
      head = o;
    }
    tail = o;
    qty += o->open_qty();
    ++orders;
  }

  // Unlinks `o` from anywhere in the queue; the others keep their order.
  // `o`'s open quantity must be what push_back/reduce accounted for.
  NT_ALWAYS_INLINE void unlink(Order* o) noexcept {
    if (o->prev != nullptr) {
      o->prev->next = o->next;
    } else {
      head = o->next;
    }
    if (o->next != nullptr) {
      o->next->prev = o->prev;
    } else {
      tail = o->prev;
    }
    o->prev = o->next = nullptr;
    qty -= o->open_qty();
    --orders;
  }
};

}  // namespace nanotick::engine
