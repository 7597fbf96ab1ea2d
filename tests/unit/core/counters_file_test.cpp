#include "core/counters_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace nc = nanotick::core;
namespace L = nanotick::core::counters_layout;

namespace {

class TempPath {
 public:
  TempPath() {
    char dir[] = "/tmp/nanotick-counters-XXXXXX";
    if (::mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = dir;
  }
  ~TempPath() { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What another process sees: the file's bytes decoded by the documented layout alone.
struct Seen {
  std::uint32_t count = 0;
  std::uint32_t state = 0;
  std::vector<std::pair<std::string, std::uint64_t>> counters;  // label, value (padding skipped)
};

Seen decode(const std::vector<char>& bytes) {
  Seen s;
  L::Header h;
  std::memcpy(static_cast<void*>(&h), bytes.data(), sizeof h);
  EXPECT_EQ(std::memcmp(&h.magic, L::kMagic, 8), 0);
  EXPECT_EQ(h.version, L::kVersion);
  s.count = h.count.load();
  s.state = h.state.load();
  EXPECT_EQ(bytes.size(), h.values_offset + 8 * std::size_t{h.capacity});
  for (std::uint32_t i = 0; i < s.count; ++i) {
    L::Metadata m;
    std::memcpy(&m, bytes.data() + h.metadata_offset + std::size_t{i} * L::kMetadataBytes, sizeof m);
    if (m.kind == 0) continue;
    EXPECT_EQ(m.id, i);
    std::uint64_t v;
    std::memcpy(&v, bytes.data() + h.values_offset + 8 * std::size_t{i}, 8);
    s.counters.emplace_back(std::string(m.label, m.label_length), v);
  }
  return s;
}

TEST(CountersFile, PlacedCountersKeepTheirValueAndWriteIntoTheFile) {
  TempPath tmp;
  const std::string path = tmp.file("p.counters");
  nc::CountersFile file({.path = path, .process = "unit", .capacity = 64});
  nc::Counter a, b;
  a.add(5);  // before placing: carried over
  EXPECT_FALSE(a.placed());
  EXPECT_EQ(file.place(a, "a.total"), 0u);
  EXPECT_EQ(file.place(b, "b.level", nc::CounterKind::kGauge), 1u);
  EXPECT_TRUE(a.placed());
  a.add(2);
  b.set(static_cast<std::uint64_t>(std::int64_t{-3}));
  const Seen s = decode(read_bytes(path));
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.state, static_cast<std::uint32_t>(nc::CountersState::kRunning));
  ASSERT_EQ(s.counters.size(), 2u);
  EXPECT_EQ(s.counters[0], (std::pair<std::string, std::uint64_t>{"a.total", 7}));
  EXPECT_EQ(static_cast<std::int64_t>(s.counters[1].second), -3);
  EXPECT_EQ(file.text_report(), "a.total 7\nb.level -3\n");
  file.mark_stopped();
  EXPECT_EQ(decode(read_bytes(path)).state, static_cast<std::uint32_t>(nc::CountersState::kStopped));
}

TEST(CountersFile, EachGroupStartsOnItsOwnCacheLine) {
  nc::CountersFile file({.path = "", .process = "unit", .capacity = 64});
  nc::Counter c[4];
  EXPECT_EQ(file.place(c[0], "g1.a"), 0u);
  file.begin_group();
  EXPECT_EQ(file.place(c[1], "g2.a"), 8u);
  EXPECT_EQ(file.place(c[2], "g2.b"), 9u);
  file.begin_group();
  file.begin_group();  // an empty group adds nothing
  EXPECT_EQ(file.place(c[3], "g3.a"), 16u);
  EXPECT_EQ(file.size(), 17u);
  std::vector<std::uint32_t> ids;
  file.for_each([&](const nc::CountersFile::Entry& e) { ids.push_back(e.id); });
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{0, 8, 9, 16}));
}

TEST(CountersFile, RealsKeepADoublesBits) {
  nc::CountersFile file({.path = "", .process = "unit", .capacity = 8});
  nc::Counter pnl;
  file.place(pnl, "pnl.total", nc::CounterKind::kReal);
  pnl.set_real(-12.5);
  EXPECT_EQ(pnl.get_real(), -12.5);
  EXPECT_EQ(file.text_report(), "pnl.total -12.500000\n");
}

TEST(CountersFile, RejectsBadLabelsAndAFullFile) {
  nc::CountersFile file({.path = "", .process = "unit", .capacity = 2});
  nc::Counter c[4];
  EXPECT_THROW(file.place(c[0], ""), std::invalid_argument);
  EXPECT_THROW(file.place(c[0], std::string(L::kMaxLabelBytes + 1, 'x')), std::invalid_argument);
  EXPECT_THROW(file.place(c[0], " padded"), std::invalid_argument);
  EXPECT_THROW(file.place(c[0], "padded "), std::invalid_argument);
  EXPECT_THROW(file.place(c[0], "tab\there"), std::invalid_argument);
  EXPECT_THROW(file.place(c[0], std::string("nul\0byte", 8)), std::invalid_argument);
  EXPECT_THROW(file.place(c[0], "ok", static_cast<nc::CounterKind>(0)), std::invalid_argument);
  EXPECT_FALSE(c[0].placed());
  file.place(c[0], std::string(L::kMaxLabelBytes, 'x'));
  EXPECT_THROW(file.place(c[1], std::string(L::kMaxLabelBytes, 'x')), std::invalid_argument);  // twice
  file.place(c[1], "two");
  EXPECT_THROW(file.place(c[2], "three"), std::length_error);
  EXPECT_THROW(nc::CountersFile({.path = "", .process = "unit", .capacity = 0}), std::invalid_argument);
  EXPECT_THROW(nc::CountersFile({.path = "", .process = std::string(64, 'p'), .capacity = 1}), std::invalid_argument);
}

TEST(CountersFile, IsOwnerOnlyOneProcessAtATimeAndStartsFromZero) {
  TempPath tmp;
  const std::string path = tmp.file("x.counters");
  {
    nc::CountersFile first({.path = path, .process = "first", .capacity = 8});
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    nc::Counter c;
    first.place(c, "c");
    c.add(41);
    try {
      nc::CountersFile second({.path = path, .process = "second", .capacity = 8});
      ADD_FAILURE() << "a second writer was allowed";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
    }
    EXPECT_EQ(decode(read_bytes(path)).counters.at(0).second, 41u);  // the refusal touched nothing
  }
  // The file outlives its writer with the last values; the next writer starts it afresh.
  EXPECT_EQ(decode(read_bytes(path)).counters.at(0).second, 41u);
  nc::CountersFile again({.path = path, .process = "again", .capacity = 4});
  const Seen s = decode(read_bytes(path));
  EXPECT_EQ(s.count, 0u);
  EXPECT_TRUE(s.counters.empty());
  EXPECT_THROW(nc::CountersFile({.path = tmp.file("no/such/dir/c.counters"), .process = "p"}), std::runtime_error);
}

// Another process reads a value while this one writes it: through the file, nothing else shared.
TEST(CountersFile, AnotherProcessSeesTheValuesLive) {
  TempPath tmp;
  const std::string path = tmp.file("live.counters");
  nc::CountersFile file({.path = path, .process = "writer", .capacity = 8});
  nc::Counter progress;
  file.place(progress, "progress");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The reader: maps the file read-only, waits (bounded) until it sees 1000.
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) ::_exit(2);
    const std::size_t bytes = static_cast<std::size_t>(::lseek(fd, 0, SEEK_END));
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) ::_exit(3);
    const auto* h = static_cast<const L::Header*>(p);
    const auto* v = reinterpret_cast<const std::atomic<std::uint64_t>*>(static_cast<const char*>(p) + h->values_offset);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (v[0].load(std::memory_order_relaxed) < 1000)
      if (std::chrono::steady_clock::now() > end) ::_exit(4);
    ::_exit(0);
  }
  for (int i = 0; i < 1000; ++i) {
    progress.add();
    if (i % 100 == 0) ::usleep(1000);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
