// FixOrderMap: what a restarted gateway reads back is what it wrote; a record
// cut short by a crash is dropped, anything else that does not parse is
// refused rather than guessed at.
#include "fix/fix_order_map.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace nanotick::fix {
namespace {

namespace fs = std::filesystem;

class FixOrderMapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("nanotick-fix-orders-" + std::to_string(::getpid()) + "-" +
                                          ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                .string();
    fs::remove(path_);
  }
  void TearDown() override { fs::remove(path_); }

  std::string text() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void write(const std::string& t) const { std::ofstream(path_, std::ios::binary | std::ios::trunc) << t; }

  static FixOrder order(const std::string& cl, std::int64_t qty) {
    FixOrder o;
    o.cl_ord_id = cl;
    o.instrument = 1;
    o.side = '1';
    o.ord_type = '2';
    o.price = 100;
    o.qty = qty;
    return o;
  }

  std::string path_;
};

TEST_F(FixOrderMapTest, ShouldReadBackEveryOrderAndNameAfterARestart) {
  {
    FixOrderMap map(path_);
    FixOrder& a = map.add(order("A1", 10));
    EXPECT_EQ(a.number, 1u);
    a.status = ord_status::kPartiallyFilled;
    a.order_id = 77;
    a.cum_qty = 4;
    a.notional = 400;
    a.after_exec_seq = 1234;
    map.save(a);
    map.rename(a, "A2");  // a replace: A1 and A2 both name order 1
    FixOrder& b = map.add(order("B 1|=\x01\n", 5));  // any byte FIX allows, a newline too
    b.status = ord_status::kCanceled;
    map.save(b);
    FixOrder refused = order("", 1);  // a number spent on an order refused before it had a name
    refused.status = ord_status::kRejected;
    map.add(refused);
  }
  FixOrderMap map(path_);
  ASSERT_EQ(map.size(), 3u);
  const FixOrder* a = map.find("A1");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, map.find("A2"));
  EXPECT_EQ(a->cl_ord_id, "A2");
  EXPECT_EQ(a->status, ord_status::kPartiallyFilled);
  EXPECT_EQ(a->order_id, 77u);
  EXPECT_EQ(a->cum_qty, 4);
  EXPECT_EQ(a->after_exec_seq, 1234u);
  EXPECT_EQ(a->leaves_qty(), 6);
  EXPECT_DOUBLE_EQ(a->avg_px(), 100.0);
  ASSERT_NE(map.find("B 1|=\x01\n"), nullptr);
  EXPECT_FALSE(map.find("B 1|=\x01\n")->open());
  ASSERT_EQ(map.open_orders().size(), 1u);
  EXPECT_EQ(map.open_orders()[0]->number, 1u);
  EXPECT_EQ(map.add(order("C1", 1)).number, 4u);  // numbers go on after the highest, never reused
}

TEST_F(FixOrderMapTest, ShouldDropARecordCutShortAndAppendAfterIt) {
  {
    FixOrderMap map(path_);
    map.add(order("A1", 10));
  }
  const std::string whole = text();
  for (std::size_t cut = 1; cut < whole.size(); ++cut) {
    write(whole + whole.substr(0, cut));  // a second record of the same order, cut at every byte
    FixOrderMap map(path_);
    EXPECT_EQ(map.size(), 1u) << "cut at " << cut;
    EXPECT_EQ(text(), whole) << "cut at " << cut << ": the unfinished record is removed";
  }
  {
    FixOrderMap map(path_);
    map.add(order("B1", 1));
  }
  FixOrderMap map(path_);
  EXPECT_NE(map.find("B1"), nullptr);
}

// It holds every order of the session: owner-only when made, and made so
// when an older gateway left it readable by others.
TEST_F(FixOrderMapTest, ShouldBeTheOwnersAlone) {
  const auto mode = [this] { return fs::status(path_).permissions() & fs::perms::all; };
  {
    FixOrderMap map(path_);
    map.add(order("A1", 10));
  }
  EXPECT_EQ(mode(), fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(path_,
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  FixOrderMap again(path_);
  EXPECT_EQ(mode(), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_NE(again.find("A1"), nullptr);
}

TEST_F(FixOrderMapTest, ShouldRefuseAFileItCannotTrust) {
  {
    FixOrderMap map(path_);
    map.add(order("A1", 10));
  }
  const std::string good = text();
  for (const std::string& bad : {
           std::string("X 1 0 0 1 1 2 - 100 10 0 0 0 2:A1\n"),   // unknown record kind
           std::string("O 0 0 0 1 1 2 - 100 10 0 0 0 2:A1\n"),   // number 0
           std::string("O 2 Z 0 1 1 2 - 100 10 0 0 0 2:A1\n"),   // no such status
           std::string("O 2 0 0 1 1 2 - 100 10 11 0 0 2:A1\n"),  // filled more than its quantity
           std::string("O 2 0 x 1 1 2 - 100 10 0 0 0 2:A1\n"),   // not a number
           std::string("O 2 0 0 1 1 2 - 100 10 0 0 0 3:A1\nO"),  // the length does not end at a newline
           std::string("O 2 0 0 1 1 2 - 100 10 0 0 -1 2:A1\n"),  // a negative exec_seq
           std::string("A 9 2:Z9\n"),                          // a name for an order never recorded
           std::string("A 1 0:\n"),                            // an empty name
       }) {
    write(good + bad + good);
    try {
      FixOrderMap map(path_);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("corrupt record at byte " + std::to_string(good.size())), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace nanotick::fix
