// SocketError: a start-up socket failure (socket, bind, listen, connect,
// setsockopt) with one line saying what failed, on which address, the errno
// text and, where we know it, how to fix it. code() keeps the errno so callers
// and tests can tell "refused" from "in use" without parsing text.
// Thread-safe: an immutable value.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace nanotick::net {

class SocketError : public std::runtime_error {
 public:
  SocketError(const std::string& message, int errno_value)
      : std::runtime_error(message), code_(errno_value, std::system_category()) {}

  const std::error_code& code() const noexcept { return code_; }

 private:
  std::error_code code_;
};

// Throws SocketError "<action>: <errno text>" or, with a hint,
// "<action>: <errno text> (<hint>)". `action` says what and where, e.g.
// "cannot listen on 127.0.0.1:9100".
[[noreturn]] void throw_socket_error(std::string_view action, int errno_value, std::string_view hint = {});

}  // namespace nanotick::net
