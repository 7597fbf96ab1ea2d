// Fd owns a descriptor: closes it exactly once, moves hand over ownership,
// release() gives it up.
#include "net/fd.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace nn = nanotick::net;

namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

struct Pipe {
  int read_end = -1;
  int write_end = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_end = fds[0];
    write_end = fds[1];
  }
};

TEST(Fd, ShouldCloseOnDestruction) {
  Pipe p;
  {
    nn::Fd a(p.read_end);
    nn::Fd b(p.write_end);
    EXPECT_TRUE(a.valid());
    EXPECT_EQ(a.get(), p.read_end);
  }
  EXPECT_FALSE(is_open(p.read_end));
  EXPECT_FALSE(is_open(p.write_end));
}

TEST(Fd, ShouldHandOverOnMoveAndCloseOnce) {
  Pipe p;
  nn::Fd keep_write(p.write_end);
  nn::Fd a(p.read_end);
  nn::Fd b(std::move(a));
  EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(b.get(), p.read_end);
  a.reset();  // closing the moved-from one must not touch b's descriptor
  EXPECT_TRUE(is_open(p.read_end));
  nn::Fd c;
  c = std::move(b);
  EXPECT_TRUE(is_open(p.read_end));
  nn::Fd& alias = c;
  c = std::move(alias);  // self-move keeps the descriptor open
  EXPECT_TRUE(is_open(p.read_end));
  EXPECT_EQ(c.get(), p.read_end);
}

TEST(Fd, ShouldCloseTheOldDescriptorOnMoveAssignment) {
  Pipe p;
  nn::Fd a(p.read_end);
  nn::Fd b(p.write_end);
  a = std::move(b);
  EXPECT_FALSE(is_open(p.read_end));
  EXPECT_TRUE(is_open(p.write_end));
}

TEST(Fd, ShouldNotCloseAfterRelease) {
  Pipe p;
  nn::Fd keep_write(p.write_end);
  int raw = -1;
  {
    nn::Fd a(p.read_end);
    raw = a.release();
    EXPECT_FALSE(a);
  }
  EXPECT_EQ(raw, p.read_end);
  EXPECT_TRUE(is_open(raw));
  ::close(raw);
}

}  // namespace
