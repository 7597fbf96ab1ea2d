// Shared-memory sessions with real processes' tools: a UNIX listener, a sealed
// memfd per connection passed with SCM_RIGHTS, bytes both ways through the
// rings (far more than a ring holds), the orderly end, a client killed with
// SIGKILL, and -- written as the attacker would -- a client that maps its
// segment by hand and publishes impossible positions, keeps its old mapping
// after its session ended, or is served a segment that is not a session.
#include "ipc/shm_stream.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "ipc/fd_passing.hpp"
#include "ipc/shm_listener.hpp"
#include "ipc/shm_segment.hpp"
#include "ipc/shm_session_layout.hpp"
#include "net/socket_error.hpp"

namespace ni = nanotick::ipc;
namespace nn = nanotick::net;
using namespace std::chrono_literals;

namespace {

std::string socket_path(const char* tag) {
  static int serial = 0;
  return "/tmp/nt-shm-" + std::to_string(::getpid()) + "-" + tag + "-" + std::to_string(++serial) + ".sock";
}

// The exchange's accept of a connection being made now: retried for up to 2 s.
std::optional<ni::ShmStream> accept_within(ni::ShmListener& l) {
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto s = l.accept()) return s;
    std::this_thread::sleep_for(100us);
  }
  return std::nullopt;
}

struct Session {
  ni::ShmStream exchange;
  ni::ShmStream client;
};

Session connect_pair(ni::ShmListener& l) {
  Session s;
  std::thread t([&] { s.client = ni::shm_connect(l.path(), 2000ms); });
  auto ex = accept_within(l);
  t.join();
  EXPECT_TRUE(ex.has_value()) << "accept errors " << l.accept_errors() << " errno " << l.last_accept_error();
  if (ex) s.exchange = std::move(*ex);
  return s;
}

std::vector<std::uint8_t> pattern(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 7 + i / 251);
  return v;
}

// A client that does it by hand: connects, takes the descriptor, maps it.
struct RawClient {
  nn::Fd control;
  ni::ShmSegment segment;
  ni::ShmSessionLayout* layout() { return reinterpret_cast<ni::ShmSessionLayout*>(segment.data()); }
};

RawClient raw_connect(const std::string& path) {
  RawClient c;
  c.control = nn::Fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  EXPECT_EQ(::connect(c.control.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return c;
}

void raw_receive(RawClient& c) {
  ni::ShmHello hello{};
  ni::Received r = ni::receive_with_fd(c.control.get(), {reinterpret_cast<std::uint8_t*>(&hello), sizeof hello});
  ASSERT_EQ(r.error, 0);
  ASSERT_EQ(r.bytes, sizeof hello);
  c.segment = ni::ShmSegment::map(std::move(r.fd), hello.segment_bytes);
}

TEST(ShmStream, ShouldCarryFarMoreThanTheRingBothWaysThenEndInOrder) {
  ni::ShmListener listener(socket_path("carry"), 4096);
  Session s = connect_pair(listener);
  ASSERT_TRUE(s.exchange.valid() && s.client.valid());

  const auto up = pattern(3000);
  ASSERT_EQ(s.client.write_some(up).bytes, up.size());
  std::vector<std::uint8_t> got(8192);
  const nn::IoResult r = s.exchange.read_some(got);
  ASSERT_EQ(r.status, nn::IoStatus::kOk);
  got.resize(r.bytes);
  EXPECT_EQ(got, up);

  // 1 MiB down through a 4 KiB ring, the writer taking partial writes.
  const auto down = pattern(1 << 20);
  std::size_t sent = 0;
  std::vector<std::uint8_t> received;
  std::vector<std::uint8_t> buf(1500);
  while (received.size() < down.size()) {
    if (sent < down.size()) {
      const nn::IoResult w = s.exchange.write_some(std::span(down).subspan(sent));
      ASSERT_TRUE(w.status == nn::IoStatus::kOk || w.status == nn::IoStatus::kWouldBlock);
      sent += w.bytes;
    }
    const nn::IoResult rd = s.client.read_some(buf);
    ASSERT_TRUE(rd.status == nn::IoStatus::kOk || rd.status == nn::IoStatus::kWouldBlock);
    received.insert(received.end(), buf.begin(), buf.begin() + static_cast<long>(rd.bytes));
  }
  EXPECT_EQ(received, down);

  // The end: the last bytes first, then kClosed, however often it is asked.
  ASSERT_EQ(s.exchange.write_some(pattern(10)).bytes, 10u);
  s.exchange.shutdown_write();
  EXPECT_EQ(s.exchange.write_some(pattern(1)).status, nn::IoStatus::kError) << "nothing after the end";
  EXPECT_EQ(s.client.read_some(buf).bytes, 10u);
  EXPECT_EQ(s.client.read_some(buf).status, nn::IoStatus::kClosed);
  EXPECT_EQ(s.client.read_some(buf).status, nn::IoStatus::kClosed);
  EXPECT_EQ(s.client.write_some(pattern(1)).status, nn::IoStatus::kClosed) << "the peer closed: EPIPE";
}

TEST(ShmStream, QueuedOutputShouldCountWhatThePeerHasNotRead) {
  ni::ShmListener listener(socket_path("queued"), 4096);
  Session s = connect_pair(listener);
  EXPECT_EQ(s.exchange.send_buffer_limit(), 4096);
  ASSERT_EQ(s.exchange.write_some(pattern(5000)).bytes, 4096u);
  EXPECT_EQ(s.exchange.queued_output_bytes(), 4096);
  EXPECT_EQ(s.exchange.write_some(pattern(1)).status, nn::IoStatus::kWouldBlock);
  std::vector<std::uint8_t> buf(1000);
  ASSERT_EQ(s.client.read_some(buf).bytes, 1000u);
  EXPECT_EQ(s.exchange.queued_output_bytes(), 3096);
}

TEST(ShmListener, ShouldCreateItsSocketOwnerOnlyAndRemoveItWhenDestroyed) {
  const std::string path = socket_path("mode");
  {
    ni::ShmListener listener(path, 4096);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "the socket file is removed on a clean shutdown";
}

TEST(ShmListener, ShouldReplaceAStaleSocketFileButRefuseALiveOne) {
  const std::string path = socket_path("stale");
  {
    // A socket file nobody listens on: what a killed exchange leaves.
    nn::Fd fd(::socket(AF_UNIX, SOCK_STREAM, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    ASSERT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  ni::ShmListener listener(path, 4096);  // replaces it
  Session s = connect_pair(listener);
  EXPECT_TRUE(s.client.valid());
  try {
    ni::ShmListener second(path, 4096);
    FAIL() << "a second exchange took a live path";
  } catch (const nn::SocketError& e) {
    EXPECT_NE(std::string(e.what()).find("in use by a running exchange"), std::string::npos) << e.what();
  }
}

TEST(ShmListener, ShouldRefuseToReplaceAFileThatIsNotASocket) {
  const std::string path = socket_path("regular");
  { nn::Fd f(::open(path.c_str(), O_CREAT | O_WRONLY, 0600)); }
  EXPECT_THROW(ni::ShmListener(path, 4096), nn::SocketError);
  EXPECT_EQ(::access(path.c_str(), F_OK), 0) << "left alone";
  ::unlink(path.c_str());
}

TEST(ShmListener, ShouldRefuseBadRingSizesAndPaths) {
  EXPECT_THROW(ni::ShmListener(socket_path("size"), 5000), std::invalid_argument);
  EXPECT_THROW(ni::ShmListener(socket_path("size"), 1024), std::invalid_argument);
  EXPECT_THROW(ni::ShmListener(std::string(200, 'x'), 4096), std::invalid_argument);
  EXPECT_THROW(ni::ShmListener("/nonexistent-dir/x.sock", 4096), nn::SocketError);
}

TEST(ShmConnect, ShouldNameThePathWhenNoExchangeListens) {
  const std::string path = socket_path("absent");
  try {
    (void)ni::shm_connect(path, 100ms);
    FAIL();
  } catch (const nn::SocketError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("shm_path"), std::string::npos) << e.what();
  }
}

TEST(ShmConnect, ShouldTimeOutWhenNoSegmentComes) {
  ni::ShmListener listener(socket_path("silent"), 4096);  // never accepts
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW((void)ni::shm_connect(listener.path(), 200ms), nn::SocketError);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

// A listener that answers with whatever the test gives it.
void serve_once(const std::string& path, const ni::ShmHello& hello, int fd) {
  nn::Fd l(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  ASSERT_EQ(::bind(l.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(l.get(), 1), 0);
  std::thread client(
      [&] { EXPECT_ANY_THROW((void)ni::shm_connect(path, 1000ms)) << "a segment that is not a session was accepted"; });
  nn::Fd c(::accept(l.get(), nullptr, nullptr));
  EXPECT_EQ(ni::send_with_fd(c.get(), {reinterpret_cast<const std::uint8_t*>(&hello), sizeof hello}, fd), 0);
  client.join();
  ::unlink(path.c_str());
}

TEST(ShmConnect, ShouldRefuseASegmentThatIsNotASession) {
  constexpr std::uint64_t ring = 4096;
  const ni::ShmHello good{ni::kShmSessionMagic, ni::kShmSessionVersion, 0, ring, ni::segment_bytes_for(ring)};
  {  // wrong magic
    ni::ShmSegment seg = ni::ShmSegment::create("t", good.segment_bytes);
    ni::ShmHello h = good;
    h.magic ^= 1;
    std::memcpy(seg.data(), &h, sizeof h);
    serve_once(socket_path("magic"), h, seg.fd());
  }
  {  // a size that does not match the segment
    ni::ShmSegment seg = ni::ShmSegment::create("t", good.segment_bytes);
    ni::ShmHello h = good;
    h.ring_bytes = 8192;
    h.segment_bytes = ni::segment_bytes_for(8192);
    std::memcpy(seg.data(), &h, sizeof h);
    serve_once(socket_path("size"), h, seg.fd());
  }
  {  // an unsealed memfd (its peer could shrink it under the client: SIGBUS)
    nn::Fd fd(::memfd_create("unsealed", MFD_CLOEXEC));
    ASSERT_EQ(::ftruncate(fd.get(), static_cast<off_t>(good.segment_bytes)), 0);
    serve_once(socket_path("unsealed"), good, fd.get());
  }
  {  // a regular file
    const std::string file = socket_path("file") + ".bin";
    nn::Fd fd(::open(file.c_str(), O_CREAT | O_RDWR, 0600));
    ASSERT_EQ(::ftruncate(fd.get(), static_cast<off_t>(good.segment_bytes)), 0);
    serve_once(socket_path("regular"), good, fd.get());
    ::unlink(file.c_str());
  }
}

TEST(ShmSegment, ShouldBeOwnerOnlyAndSealedAgainstResizing) {
  ni::ShmSegment seg = ni::ShmSegment::create("sealed", 8192);
  struct stat st {};
  ASSERT_EQ(::fstat(seg.fd(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(::ftruncate(seg.fd(), 4096), 0) << "a peer cannot shrink it (the other side would SIGBUS)";
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(::ftruncate(seg.fd(), 1 << 20), 0);
  EXPECT_NE(::fcntl(seg.fd(), F_ADD_SEALS, 0), 0) << "nor unseal it: the seals are sealed";
}

TEST(ShmStream, ExchangeShouldBreakNotCrashOnImpossiblePositionsFromAClient) {
  ni::ShmListener listener(socket_path("hostile"), 4096);
  RawClient c = raw_connect(listener.path());
  auto ex = accept_within(listener);
  ASSERT_TRUE(ex.has_value());
  raw_receive(c);
  ni::ShmSessionLayout* l = c.layout();

  // The exchange's own words, overwritten: it never reads them back.
  l->to_client.tail = 123456789;
  l->to_exchange.head = 987654321;
  ASSERT_EQ(ex->write_some(pattern(100)).bytes, 100u);
  EXPECT_FALSE(ex->broken());

  // A tail claiming a terabyte of input.
  l->to_exchange.tail = std::uint64_t{1} << 40;
  std::vector<std::uint8_t> buf(4096);
  const nn::IoResult r = ex->read_some(buf);
  EXPECT_EQ(r.status, nn::IoStatus::kError);
  EXPECT_EQ(r.error, EPROTO);
  EXPECT_TRUE(ex->broken());
  EXPECT_TRUE(ex->input_pending()) << "so the gateway reads it, sees the error and closes the session";
}

TEST(ShmStream, ExchangeShouldBreakOnAHeadPastWhatItWrote) {
  ni::ShmListener listener(socket_path("hostile-head"), 4096);
  RawClient c = raw_connect(listener.path());
  auto ex = accept_within(listener);
  ASSERT_TRUE(ex.has_value());
  raw_receive(c);
  ASSERT_EQ(ex->write_some(pattern(10)).bytes, 10u);
  c.layout()->to_client.head = 5000;  // "read" more than was ever written: room that is not there
  const nn::IoResult w = ex->write_some(pattern(4096));
  EXPECT_EQ(w.status, nn::IoStatus::kError);
  EXPECT_EQ(w.error, EPROTO);
  EXPECT_EQ(ex->queued_output_bytes(), -1);
}

TEST(ShmStream, AnOldMappingShouldNotReachTheNextSession) {
  ni::ShmListener listener(socket_path("reuse"), 4096);
  RawClient a = raw_connect(listener.path());
  auto ex_a = accept_within(listener);
  ASSERT_TRUE(ex_a.has_value());
  raw_receive(a);
  ex_a->close();  // A's session ends; A keeps its mapping
  Session b = connect_pair(listener);
  ASSERT_TRUE(b.exchange.valid());
  // A writes a message into what was its ring and publishes it.
  std::memset(a.segment.data() + ni::kShmDataOffset, 0x41, 64);
  a.layout()->to_exchange.tail = 64;
  std::vector<std::uint8_t> buf(4096);
  EXPECT_EQ(b.exchange.read_some(buf).status, nn::IoStatus::kWouldBlock) << "B's session sees none of it";
  EXPECT_FALSE(b.exchange.input_pending());
}

TEST(ShmStream, ExchangeShouldSeeAClientKilledWithSigkill) {
  ni::ShmListener listener(socket_path("kill"), 4096);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      ni::ShmStream s = ni::shm_connect(listener.path(), 2000ms);
      const auto bytes = pattern(3);
      (void)s.write_some(bytes);
    } catch (...) {
      ::_exit(3);
    }
    ::raise(SIGKILL);  // no closed word, no clean close: the kernel closes its control socket
    ::_exit(4);
  }
  auto ex = accept_within(listener);
  ASSERT_TRUE(ex.has_value());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  EXPECT_TRUE(ex->check_peer()) << "the control socket reports the death at once";
  std::vector<std::uint8_t> buf(100);
  const nn::IoResult r = ex->read_some(buf);
  EXPECT_EQ(r.status, nn::IoStatus::kOk) << "what it published before dying is still read";
  EXPECT_EQ(r.bytes, 3u);
  EXPECT_EQ(ex->read_some(buf).status, nn::IoStatus::kClosed);
}

TEST(ShmStream, AClientShouldSeeADeadExchangeWithinMillisecondsOfPolling) {
  ni::ShmListener listener(socket_path("exdead"), 4096);
  Session s = connect_pair(listener);
  ASSERT_TRUE(s.client.valid());
  // The exchange's process ends without a closed word: its descriptors close.
  // (Here: its control socket closes, as the kernel would do for a kill -9.)
  ::shutdown(s.exchange.fd(), SHUT_RDWR);
  std::vector<std::uint8_t> buf(100);
  const auto deadline = std::chrono::steady_clock::now() + 1s;
  nn::IoResult r;
  do {
    r = s.client.read_some(buf);
  } while (r.status == nn::IoStatus::kWouldBlock && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(r.status, nn::IoStatus::kClosed);
}

}  // namespace
