#include "net/socket_error.hpp"

namespace nanotick::net {

void throw_socket_error(std::string_view action, int errno_value, std::string_view hint) {
  std::string message(action);
  message += ": ";
  message += std::system_category().message(errno_value);
  if (!hint.empty()) {
    message += " (";
    message += hint;
    message += ")";
  }
  throw SocketError(message, errno_value);
}

}  // namespace nanotick::net
