// The market data ring against attackers and failures: a reader that tries
// every way to write the ring, and a hostile "exchange" that answers with
// garbage, the wrong descriptor, a segment it can shrink, or a ring full of
// impossible words. Every wait is bounded (a failing test ends).
#include "unit/ipc/md_ring_test_tools.hpp"

using namespace nanotick::test::md_ring;

namespace {

// The attacker's reader: takes the descriptor by hand and tries every way to
// write what it was given.
TEST(MdRing, AReaderCannotWriteTheRingByAnyRoute) {
  const std::string path = socket_path("ro");
  ni::MdRingServer server(path, 16);
  nn::Fd control(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_un addr = ni::unix_socket_address(path, "test");
  ASSERT_EQ(::connect(control.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  ni::MdRingHello hello{};
  ni::Received r;
  ASSERT_TRUE(within([&] {
    (void)server.poll_connections();
    pollfd p{control.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) != 1) return false;
    r = ni::receive_with_fd(control.get(), {reinterpret_cast<std::uint8_t*>(&hello), sizeof hello});
    return true;
  }));
  ASSERT_EQ(r.error, 0);
  ASSERT_TRUE(r.fd.valid());
  const int fd = r.fd.get();
  const std::size_t bytes = hello.segment_bytes;

  EXPECT_EQ(::fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A writable mapping, from this descriptor: refused.
  errno = 0;
  EXPECT_EQ(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED);
  EXPECT_EQ(errno, EACCES);
  // A read-only mapping made writable afterwards: refused.
  void* ro = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(ro, MAP_FAILED);
  EXPECT_NE(::mprotect(ro, bytes, PROT_READ | PROT_WRITE), 0);
  // write() and resizing: refused.
  const std::uint8_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_LT(::pwrite(fd, junk, sizeof junk, 64), 0);
  EXPECT_NE(::ftruncate(fd, 0), 0);
  // Reopened read-write through /proc (the same user may): still no writable
  // mapping, no write(), no resize -- the segment is sealed against them.
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  nn::Fd rw(::open(proc.c_str(), O_RDWR | O_CLOEXEC));
  if (rw) {
    errno = 0;
    EXPECT_EQ(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, rw.get(), 0), MAP_FAILED);
    EXPECT_EQ(errno, EPERM);
    EXPECT_LT(::pwrite(rw.get(), junk, sizeof junk, 64), 0);
    EXPECT_NE(::ftruncate(rw.get(), 0), 0);
    EXPECT_NE(::fcntl(rw.get(), F_ADD_SEALS, F_SEAL_WRITE), 0) << "more seals after F_SEAL_SEAL";
  }
  // A private copy-on-write mapping may be written -- its own copy only: the
  // exchange's ring and every other reader see nothing of it.
  void* cow = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ASSERT_NE(cow, MAP_FAILED);
  std::memset(static_cast<std::uint8_t*>(cow) + ni::kMdRingOffset, 0xff, bytes - ni::kMdRingOffset);
  EXPECT_NE(static_cast<const std::uint8_t*>(ro)[ni::kMdRingOffset + 8], 0xff);
  ::munmap(cow, bytes);
  // A store through the read-only mapping kills the writer, not the ring.
  const pid_t child = ::fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    ::signal(SIGSEGV, SIG_DFL);  // a sanitizer's handler would turn the fault into an exit code
    static_cast<volatile std::uint8_t*>(ro)[ni::kMdRingOffset] = 0xff;
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) << "status " << status;
  // The exchange publishes on, and the mapping shows it.
  server.publish(packet(1, 100));
  EXPECT_EQ(server.published(), 1u);
  EXPECT_EQ(std::memcmp(ro, &hello, sizeof hello), 0);
  ::munmap(ro, bytes);
}

// ---- a hostile "exchange": a listener of the test's own --------------------------

// Sends `bytes` and the descriptors `fds` in one message (any number of them).
void send_raw(int socket, const void* bytes, std::size_t n, const std::vector<int>& fds) {
  iovec iov{const_cast<void*>(bytes), n};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * (fds.empty() ? 1 : fds.size())));
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ASSERT_EQ(::sendmsg(socket, &msg, MSG_NOSIGNAL), static_cast<ssize_t>(n));
}

// A memfd of `bytes`, sealed against shrinking unless `sealed` is false,
// holding `header` at offset 0 (if given).
nn::Fd memfd(std::size_t bytes, bool sealed, const ni::MdRingHello* header) {
  nn::Fd fd(::memfd_create("fake-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  EXPECT_TRUE(fd.valid());
  EXPECT_EQ(::ftruncate(fd.get(), static_cast<off_t>(bytes)), 0);
  if (header != nullptr) {
    EXPECT_EQ(::pwrite(fd.get(), header, sizeof *header, 0), static_cast<ssize_t>(sizeof *header));
  }
  if (sealed) {
    EXPECT_EQ(::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
  }
  return fd;
}

// The subscriber connects to a fake exchange that answers with `answer`
// and hangs up (unless `hang_up` is false: then it stays silent while the
// subscriber looks a few times); returns what the subscriber made of it.
Sub::Step against(const std::function<void(int conn)>& answer, Sub& sub, bool hang_up = true) {
  ni::UnixListener fake(sub.path(), 4, "fake");
  EXPECT_EQ(sub.start_connect(), 0);
  nn::Fd conn;
  EXPECT_TRUE(within([&] { return (conn = fake.accept(false)).valid(); }));
  answer(conn.get());
  if (hang_up) conn.reset();
  Sub::Step step = Sub::Step::kWaiting;
  if (!hang_up) {
    for (int i = 0; i < 20 && step == Sub::Step::kWaiting; ++i, std::this_thread::sleep_for(1ms))
      step = sub.poll_connect();
    return step;
  }
  within([&] { return (step = sub.poll_connect()) != Sub::Step::kWaiting; });
  return step;
}

TEST(MdRing, AReaderShouldRefuseEverythingAHostileExchangeSendsAndSayWhy) {
  const ni::MdRingHello good = ni::make_md_ring_hello(16);
  struct Case {
    const char* what;
    std::function<void(int)> answer;
    ni::MdRingRefusal expected;
  };
  const auto with_hello = [good](ni::MdRingHello h, bool sealed = true, std::size_t bytes = 0, bool header = true) {
    return [=](int conn) {
      nn::Fd fd = memfd(bytes != 0 ? bytes : good.segment_bytes, sealed, header ? &h : nullptr);
      send_raw(conn, &h, sizeof h, {fd.get()});
    };
  };
  ni::MdRingHello magic = good;
  magic.magic ^= 1;
  ni::MdRingHello version = good;
  version.version = 2;
  ni::MdRingHello slots = good;
  slots.slots = 1000;
  ni::MdRingHello size = good;
  size.segment_bytes += 64;
  ni::MdRingHello payload = good;
  payload.packet_bytes = 9000;
  ni::MdRingHello huge = good;
  huge.slots = std::uint64_t{1} << 40;
  huge.segment_bytes = ni::md_ring_segment_bytes(huge.slots);
  const std::vector<Case> cases = {
      {"closes without a word", [](int) {}, ni::MdRingRefusal::kClosed},
      {"garbage bytes", [](int c) { send_raw(c, "hello there", 11, {}); }, ni::MdRingRefusal::kShortHello},
      {"bad magic", with_hello(magic), ni::MdRingRefusal::kBadMagic},
      {"another version", with_hello(version), ni::MdRingRefusal::kBadVersion},
      {"slots not a power of two", with_hello(slots), ni::MdRingRefusal::kBadGeometry},
      {"a size that does not add up", with_hello(size), ni::MdRingRefusal::kBadGeometry},
      {"another slot payload", with_hello(payload), ni::MdRingRefusal::kBadGeometry},
      {"a terabyte ring", with_hello(huge), ni::MdRingRefusal::kBadGeometry},
      {"a hello without its descriptor", [&](int c) { send_raw(c, &good, sizeof good, {}); },
       ni::MdRingRefusal::kNoDescriptor},
      {"two descriptors",
       [&](int c) {
         nn::Fd a = memfd(good.segment_bytes, true, &good), b = memfd(good.segment_bytes, true, &good);
         send_raw(c, &good, sizeof good, {a.get(), b.get()});
       },
       ni::MdRingRefusal::kNoDescriptor},
      {"a pipe, not a segment",
       [&](int c) {
         int p[2];
         ASSERT_EQ(::pipe(p), 0);
         send_raw(c, &good, sizeof good, {p[0]});
         ::close(p[0]);
         ::close(p[1]);
       },
       ni::MdRingRefusal::kBadSegment},
      {"a segment it could shrink under us", with_hello(good, false), ni::MdRingRefusal::kBadSegment},
      {"a segment smaller than it says", with_hello(good, true, good.segment_bytes - 4096),
       ni::MdRingRefusal::kBadSegment},
      {"a segment whose header is not the hello", with_hello(good, true, 0, false), ni::MdRingRefusal::kHeaderMismatch},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Sub sub(socket_path("hostile"));
    EXPECT_EQ(against(c.answer, sub), Sub::Step::kRefused);
    EXPECT_EQ(sub.refusal(), c.expected) << ni::to_string(sub.refusal());
    EXPECT_EQ(sub.state(), Sub::State::kClosed);
  }
  // Silence: the subscriber waits (never blocks); the caller's timeout ends it.
  Sub sub(socket_path("silent"));
  EXPECT_EQ(against([](int) {}, sub, false), Sub::Step::kWaiting);
  EXPECT_EQ(sub.state(), Sub::State::kConnecting);
  sub.refuse(ni::MdRingRefusal::kTimedOut);
  EXPECT_EQ(sub.state(), Sub::State::kClosed);
  EXPECT_EQ(sub.refusal(), ni::MdRingRefusal::kTimedOut);
}

// A fake exchange that hands out a real-looking ring it keeps writable, then
// writes what no exchange would: an oversized record, then garbage over every
// word of the ring. The reader only ever reports; it never reads outside its
// mapping (ASan watches) and never crashes.
TEST(MdRing, AReaderShouldSurviveImpossibleWordsInTheRing) {
  const ni::MdRingHello hello = ni::make_md_ring_hello(16);
  ni::ShmSegment segment = ni::ShmSegment::create("fake-ring", hello.segment_bytes);
  std::memcpy(segment.data(), &hello, sizeof hello);
  ni::MdRing& ring = ni::MdRing::create_in(segment.data() + ni::kMdRingOffset, 16);
  Sub sub(socket_path("garbage"));
  ASSERT_EQ(against([&](int c) { send_raw(c, &hello, sizeof hello, {segment.fd()}); }, sub), Sub::Step::kConnected);

  ni::MdRingPacket liar{};
  liar.length = 5000;  // beyond the slot
  ring.publish(liar, sizeof liar);
  EXPECT_EQ(sub.read(), Sub::Read::kBadRecord);
  liar.length = 0xffff'ffffu;
  ring.publish(liar, 8);
  EXPECT_EQ(sub.read(), Sub::Read::kBadRecord);

  std::mt19937_64 rng(42);
  auto* words = reinterpret_cast<std::uint64_t*>(segment.data() + ni::kMdRingOffset);
  const std::size_t count = ni::MdRing::bytes_for(16) / sizeof(std::uint64_t);
  int packets = 0;
  for (int round = 0; round < 200; ++round) {
    for (std::size_t i = 0; i < count; ++i) words[i] = round % 3 == 0 ? rng() : rng() % 64;
    for (int i = 0; i < 100; ++i) {
      const Sub::Read r = sub.read();
      ASSERT_TRUE(r == Sub::Read::kPacket || r == Sub::Read::kEmpty || r == Sub::Read::kLapped ||
                  r == Sub::Read::kBadRecord);
      if (r == Sub::Read::kPacket) {
        ++packets;
        ASSERT_LE(sub.packet().size(), ni::kMdRingMaxPacketBytes);
      }
    }
  }
  SUCCEED() << packets << " garbage slots passed as packets (the consumer's checks are next)";
}

}  // namespace
