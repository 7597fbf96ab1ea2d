// Addresses from config text: every accepted form, every rejected one with a
// message naming the text and the problem, sockaddr_in round trips and the
// multicast range.
#include "net/socket_address.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace nn = nanotick::net;

namespace {

// The message of the std::invalid_argument that `fn` throws ("" if none).
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SocketAddress, ShouldParseIpAndPort) {
  const nn::SocketAddress a = nn::parse_socket_address("127.0.0.1:9100");
  EXPECT_EQ(a.ip.value, 0x7f000001u);
  EXPECT_EQ(a.port, 9100);
  EXPECT_EQ(a.to_string(), "127.0.0.1:9100");
  EXPECT_EQ(nn::parse_socket_address("0.0.0.0:1").to_string(), "0.0.0.0:1");
  EXPECT_EQ(nn::parse_socket_address("255.255.255.255:65535").to_string(), "255.255.255.255:65535");
  EXPECT_EQ(nn::parse_socket_address("10.1.2.3:080").port, 80);
}

TEST(SocketAddress, ShouldAcceptPortZeroOnlyWhenAllowed) {
  EXPECT_EQ(nn::parse_socket_address("127.0.0.1:0", nn::PortZero::kAllowed).port, 0);
  const std::string msg = error_of([] { (void)nn::parse_socket_address("127.0.0.1:0"); });
  EXPECT_NE(msg.find("\"127.0.0.1:0\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("port 0 is not allowed"), std::string::npos) << msg;
}

TEST(SocketAddress, ShouldRejectMalformedTextNamingTheProblem) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"127.0.0.1", "no ':'"},
      {"", "no ':'"},
      {"127.0.0.1:", "port after ':' is missing"},
      {":9100", "IPv4 address is missing"},
      {"127.0.0.1:abc", "port \"abc\" is not a number"},
      {"127.0.0.1:-1", "port \"-1\" is not a number"},
      {"127.0.0.1:+80", "port \"+80\" is not a number"},
      {"127.0.0.1: 80", "port \" 80\" is not a number"},
      {"127.0.0.1:80 ", "port \"80 \" is not a number"},
      {"127.0.0.1:80x", "port \"80x\" is not a number"},
      {"127.0.0.1:65536", "port 65536 is out of range"},
      {"127.0.0.1:99999999999999999999", "is out of range"},
      {"localhost:9100", "\"localhost\" is not a dotted IPv4 address"},
      {"127.0.0:9100", "not a dotted IPv4 address"},
      {"127.0.0.256:9100", "not a dotted IPv4 address"},
      {"127.0.0.1.1:9100", "not a dotted IPv4 address"},
      {" 127.0.0.1:9100", "not a dotted IPv4 address"},
      {"::1:9100", "not a dotted IPv4 address"},
      {"1234567890.1234567890:1", "not a dotted IPv4 address"},
  };
  for (const Case& c : cases) {
    const std::string msg = error_of([&] { (void)nn::parse_socket_address(c.text); });
    EXPECT_NE(msg.find(c.expected), std::string::npos) << "text '" << c.text << "' gave: " << msg;
    EXPECT_NE(msg.find("\"" + std::string(c.text) + "\""), std::string::npos) << msg;
  }
}

TEST(SocketAddress, ShouldRejectEmbeddedNul) {
  const std::string text("127.0.0.1\0junk:80", 17);
  EXPECT_THROW((void)nn::parse_socket_address(text), std::invalid_argument);
}

TEST(SocketAddress, ShouldRoundTripThroughSockaddr) {
  const nn::SocketAddress a = nn::parse_socket_address("192.168.1.20:4242");
  const sockaddr_in sa = a.to_sockaddr();
  EXPECT_EQ(sa.sin_family, AF_INET);
  EXPECT_EQ(ntohs(sa.sin_port), 4242);
  char text[INET_ADDRSTRLEN] = {};
  ASSERT_NE(inet_ntop(AF_INET, &sa.sin_addr, text, sizeof text), nullptr);
  EXPECT_STREQ(text, "192.168.1.20");
  EXPECT_EQ(nn::SocketAddress::from_sockaddr(sa), a);
}

TEST(Ipv4Address, ShouldParseABareInterfaceAddress) {
  EXPECT_EQ(nn::parse_ipv4("127.0.0.1").value, 0x7f000001u);
  EXPECT_EQ(nn::parse_ipv4("0.0.0.0").value, 0u);
  EXPECT_EQ(nn::parse_ipv4("10.0.0.7").to_string(), "10.0.0.7");
  EXPECT_NE(error_of([] { (void)nn::parse_ipv4("127.0.0.1:80"); }).find("not a dotted IPv4 address"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)nn::parse_ipv4(""); }).find("missing"), std::string::npos);
  EXPECT_NE(error_of([] { (void)nn::parse_ipv4("eth0"); }).find("\"eth0\""), std::string::npos);
}

TEST(Ipv4Address, ShouldRecognizeExactlyTheMulticastRange) {
  EXPECT_FALSE(nn::parse_ipv4("223.255.255.255").is_multicast());
  EXPECT_TRUE(nn::parse_ipv4("224.0.0.0").is_multicast());
  EXPECT_TRUE(nn::parse_ipv4("239.255.42.1").is_multicast());
  EXPECT_TRUE(nn::parse_ipv4("239.255.255.255").is_multicast());
  EXPECT_FALSE(nn::parse_ipv4("240.0.0.0").is_multicast());
  EXPECT_FALSE(nn::parse_ipv4("127.0.0.1").is_multicast());
}

TEST(MulticastGroup, ShouldParseAGroupAndRejectUnicast) {
  EXPECT_EQ(nn::parse_multicast_group("239.255.42.1:9201").to_string(), "239.255.42.1:9201");
  const std::string msg = error_of([] { (void)nn::parse_multicast_group("127.0.0.1:9201"); });
  EXPECT_NE(msg.find("\"127.0.0.1:9201\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("is not a multicast group"), std::string::npos) << msg;
  EXPECT_NE(error_of([] { (void)nn::parse_multicast_group("239.1.1.1:0"); }).find("port 0"), std::string::npos);
  EXPECT_EQ(nn::parse_multicast_group("239.1.1.1:0", nn::PortZero::kAllowed).port, 0);
  const std::string role =
      error_of([] { nn::require_multicast(nn::parse_socket_address("10.0.0.1:5"), "snapshot group"); });
  EXPECT_NE(role.find("snapshot group 10.0.0.1:5 is not a multicast group"), std::string::npos) << role;
}

}  // namespace
