#include "market/instrument_table.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

using nanotick::market::InstrumentConfig;
using nanotick::market::InstrumentTable;

namespace {

InstrumentTable one_instrument(const std::function<void(InstrumentConfig&)>& tweak) {
  InstrumentConfig in;
  in.symbol = "ABC";
  tweak(in);
  return InstrumentTable{{in}};
}

// Expects validate() to throw a message naming the instrument and `fragment`.
void expect_rejected(const std::function<void(InstrumentConfig&)>& tweak, const std::string& fragment) {
  try {
    one_instrument(tweak).validate();
    ADD_FAILURE() << "accepted a config that should fail with: " << fragment;
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("instrument 0"), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

}  // namespace

TEST(InstrumentTable, ShouldAcceptTheDefaults) {
  EXPECT_NO_THROW(one_instrument([](auto&) {}).validate());
}

TEST(InstrumentTable, ShouldRejectAnEmptyInstrumentTable) {
  EXPECT_THROW(InstrumentTable{}.validate(), std::invalid_argument);
}

TEST(InstrumentTable, ShouldNameTheFieldThatIsWrong) {
  expect_rejected([](auto& in) { in.tick_size = 0; }, "tick_size");
  expect_rejected(
      [](auto& in) {
        in.min_price = 10;
        in.max_price = 5;
      },
      "min_price must be <= max_price");
  expect_rejected(
      [](auto& in) {
        in.tick_size = 5;
        in.min_price = 3;
      },
      "multiples of tick_size");
  expect_rejected([](auto& in) { in.max_price = (nanotick::market::Price{1} << 61) + 1; }, "2^61");
  expect_rejected([](auto& in) { in.collar = -1; }, "collar");
  expect_rejected([](auto& in) { in.collar = (nanotick::market::Price{1} << 62) + 1; }, "collar");
  expect_rejected([](auto& in) { in.max_order_qty = 0; }, "max_order_qty");
  expect_rejected([](auto& in) { in.max_orders = 0; }, "max_orders");
  expect_rejected([](auto& in) { in.max_levels = 0; }, "max_levels");
  expect_rejected([](auto& in) { in.symbol.clear(); }, "symbol");
}

TEST(InstrumentTable, ShouldKeepSumsOfOpenQuantityInsideInt64) {
  expect_rejected(
      [](auto& in) {
        in.max_orders = 1u << 26;
        in.max_order_qty = nanotick::market::Qty{1} << 40;
      },
      "max_orders * max_order_qty");
  EXPECT_NO_THROW(one_instrument([](auto& in) {
                    in.max_orders = 1u << 22;
                    in.max_order_qty = nanotick::market::Qty{1} << 40;
                  }).validate());
}

TEST(InstrumentTable, ShouldRejectDuplicateSymbols) {
  InstrumentConfig a;
  a.symbol = "X";
  EXPECT_THROW((InstrumentTable{{a, a}}.validate()), std::invalid_argument);
}
