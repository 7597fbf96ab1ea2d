// Fuzz target: a whole order-entry session as the exchange's gateway lives it.
// Each input is the byte stream one TCP client sends to a real OrderGateway on
// loopback (the seeds log on as client 1 with the key below, so the fuzzer
// reaches the logged-on states too); the client then closes its side and the
// gateway runs until it has released the connection. Oracles beyond "no crash,
// no sanitizer report": the gateway releases every connection (no session
// leaks across inputs), and what it sent back is whole, valid exchange
// messages with gap-free sequence numbers — the stream never ends inside a
// message (PROTOCOL.md 1.5). Requests it sequenced are drained (no engine).
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "access/credential.hpp"
#include "exchange/exchange_config.hpp"
#include "exchange/pipeline.hpp"
#include "exchange/sessions/order_gateway.hpp"
#include "net/tcp.hpp"
#include "proto/order_entry_codec.hpp"

namespace nx = nanotick::exchange;
namespace nn = nanotick::net;
namespace np = nanotick::proto;

namespace {

const std::string kKey(24, 'k');  // what fuzz/corpus/session_stream's logons carry

struct Venue {
  nx::ExchangeConfig config;
  nx::RequestRing ring;
  std::unique_ptr<nx::OrderGateway> gateway;

  Venue() {
    const std::string toml =
        "[server]\norder_entry = \"127.0.0.1:0\"\nheartbeat_ms = 1000\nmin_heartbeat_ms = 100\n"
        "logon_timeout_ms = 200\nmax_sessions = 4\noutput_buffer_bytes = 65536\n"
        "[market_data]\ninterface = \"127.0.0.1\"\nincremental = \"239.255.42.1:9201\"\n"
        "snapshot = \"239.255.42.2:9202\"\n[journal]\ndir = \"unused\"\n"
        "[[instruments]]\nsymbol = \"A\"\ntick_size = 1\nmin_price = 1\nmax_price = 1000000\nmax_order_qty = 1000000\n"
        "[[clients]]\nid = 1\ncredential = \"" +
        nanotick::access::CredentialHash::make(kKey).to_string() +
        "\"\nrate_burst = 100000\nrate_limit_per_s = 1000000\n";
    config = nx::parse_exchange_config(toml, "fuzz.toml");
    gateway = std::make_unique<nx::OrderGateway>(config, ring, 1);
  }

  void work() {
    gateway->do_work();
    nx::InboundRequest rq;
    while (ring.try_pop(rq)) {
    }
  }
};

Venue& venue() {
  static Venue v;
  return v;
}

// Reads what is readable without blocking.
void read_available(nn::TcpStream& s, std::vector<std::uint8_t>& out, bool& eof) {
  std::uint8_t buf[65536];
  for (;;) {
    const nn::IoResult r = s.read_some(buf);
    if (r.status == nn::IoStatus::kOk) {
      out.insert(out.end(), buf, buf + r.bytes);
      continue;
    }
    if (r.status != nn::IoStatus::kWouldBlock) eof = true;
    return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Venue& v = venue();
  nn::TcpStream client = nn::tcp_connect(v.gateway->listen_address(), std::chrono::milliseconds(1000));
  std::vector<std::uint8_t> received;
  bool eof = false;
  std::span<const std::uint8_t> rest(data, size);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!rest.empty() && !eof && std::chrono::steady_clock::now() < deadline) {
    const nn::IoResult r = client.write_some(rest);
    if (r.status == nn::IoStatus::kOk) rest = rest.subspan(r.bytes);
    else if (r.status != nn::IoStatus::kWouldBlock) break;  // the gateway closed on us: fine
    v.work();
    read_available(client, received, eof);
  }
  ::shutdown(client.fd(), SHUT_WR);
  while (!eof && std::chrono::steady_clock::now() < deadline) {
    v.work();
    read_available(client, received, eof);
  }
  client.close();
  while (v.gateway->open_connections() != 0) {
    if (std::chrono::steady_clock::now() > deadline + std::chrono::seconds(2)) std::abort();  // a session leaked
    v.work();
  }
  // What the exchange sent: whole, valid messages numbered 1, 2, 3...
  std::span<const std::uint8_t> stream(received);
  std::uint32_t seq = 1;
  while (!stream.empty()) {
    const np::Frame f = np::next_frame(stream, np::Direction::kFromExchange);
    if (f.status != np::FrameStatus::kMessage) std::abort();  // a bad or partial message from the exchange
    if (f.header.seq != seq++) std::abort();                   // a gap or repeat in its numbering
    stream = stream.subspan(f.length);
  }
  return 0;
}
