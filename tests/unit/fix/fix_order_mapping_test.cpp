// The FIX <-> venue vocabulary: whole numbers, order types, sides and reasons.
#include "fix/fix_order_mapping.hpp"

#include <gtest/gtest.h>

#include <string>

namespace nanotick::fix {
namespace {

TEST(FixWholeNumber, ShouldAcceptOnlyWholeDecimals) {
  for (const auto& [text, value] : {std::pair<const char*, std::int64_t>{"100", 100},
                                    {"100.", 100},
                                    {"100.000", 100},
                                    {"+7", 7},
                                    {"-5", -5},
                                    {"0", 0},
                                    {"9223372036854775807", INT64_MAX}}) {
    ASSERT_TRUE(parse_whole_number(text).has_value()) << text;
    EXPECT_EQ(*parse_whole_number(text), value) << text;
  }
  for (const char* bad :
       {"", ".", "100.5", "100.0001", "1e3", "0x10", " 1", "1 ", "+-1", "++1", "9223372036854775808", "12a", "-", "+"})
    EXPECT_FALSE(parse_whole_number(bad).has_value()) << bad;
}

TEST(FixOrderType, ShouldMapOrdTypeAndTimeInForce) {
  std::string why;
  EXPECT_EQ(venue_order_type('2', 0, why), market::OrderType::kLimit);
  EXPECT_EQ(venue_order_type('2', '0', why), market::OrderType::kLimit);
  EXPECT_EQ(venue_order_type('2', '1', why), market::OrderType::kLimit);
  EXPECT_EQ(venue_order_type('2', '3', why), market::OrderType::kIoc);
  EXPECT_EQ(venue_order_type('2', '4', why), market::OrderType::kFok);
  EXPECT_EQ(venue_order_type('1', 0, why), market::OrderType::kMarket);
  EXPECT_EQ(venue_order_type('1', '3', why), market::OrderType::kMarket);
  for (const auto& [type, tif, words] :
       {std::tuple{'2', '6', "TimeInForce 6"}, {'1', '1', "market order"}, {'3', 0, "OrdType 3"}, {0, 0, "(absent)"}}) {
    why.clear();
    EXPECT_FALSE(venue_order_type(type, tif, why).has_value());
    EXPECT_NE(why.find(words), std::string::npos) << why;
  }
}

TEST(FixReasons, ShouldNameWhatTheVenueRefused) {
  EXPECT_EQ(venue_side('1'), market::Side::kBuy);
  EXPECT_EQ(venue_side('2'), market::Side::kSell);
  EXPECT_FALSE(venue_side('5').has_value());
  EXPECT_EQ(fix_side(market::Side::kSell), '2');
  EXPECT_EQ(fix_ord_rej_reason(market::RejectReason::kUnknownInstrument), ord_rej_reason::kUnknownSymbol);
  EXPECT_EQ(fix_ord_rej_reason(market::RejectReason::kInstrumentHalted), ord_rej_reason::kExchangeClosed);
  EXPECT_EQ(fix_ord_rej_reason(market::RejectReason::kInsufficientCash), ord_rej_reason::kOrderExceedsLimit);
  EXPECT_EQ(fix_ord_rej_reason(market::RejectReason::kPriceOffTick), ord_rej_reason::kOther);
  EXPECT_EQ(fix_cxl_rej_reason(market::RejectReason::kUnknownOrder), cxl_rej_reason::kUnknownOrder);
  EXPECT_EQ(fix_cxl_rej_reason(market::RejectReason::kTooLateToCancel), cxl_rej_reason::kTooLateToCancel);
  EXPECT_EQ(fix_cxl_rej_reason(market::RejectReason::kModifyNoChange), cxl_rej_reason::kOther);
  for (std::uint8_t r = 0; r <= 8; ++r) EXPECT_FALSE(cancel_reason_text(r).empty());
  EXPECT_NE(cancel_reason_text(6).find("cancel on disconnect"), std::string::npos);
}

}  // namespace
}  // namespace nanotick::fix
