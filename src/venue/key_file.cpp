#include "venue/key_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace nanotick::venue {

namespace {

constexpr std::size_t kMaxKeyFileBytes = 1u << 20;

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Closes the descriptor on every path out of read_private_file.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

std::string mode_problem(const std::string& path, mode_t mode, std::string_view holding) {
  return path + ": mode " + octal_mode(mode) + " lets other users read " + std::string(holding) +
         "; make it the owner's alone: chmod 600 " + path;
}

}  // namespace

std::string shared_key_mode_problem(const std::string& path, std::string_view holding) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & 077) == 0) return {};
  return mode_problem(path, st.st_mode, holding);
}

std::string read_private_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw KeyFileError(path + ": cannot read the key file: " + std::strerror(errno));
  const FdCloser closer{fd};
  // The mode of what was opened (fstat, not stat: the file read is the file checked).
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw KeyFileError(path + ": cannot stat the key file: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw KeyFileError(path + ": the key file is not a regular file");
  if ((st.st_mode & 077) != 0) throw KeyFileError(mode_problem(path, st.st_mode, "this API key file"));
  if (static_cast<std::uint64_t>(st.st_size) > kMaxKeyFileBytes)
    throw KeyFileError(path + ": " + std::to_string(st.st_size) + " bytes is not a key file (at most " +
                       std::to_string(kMaxKeyFileBytes) + ")");
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw KeyFileError(path + ": cannot read the key file: " + std::strerror(errno));
    if (n == 0) break;  // shrank since fstat
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

std::string read_key_file(const std::string& path) {
  std::string key = read_private_file(path);
  if (const std::size_t eol = key.find('\n'); eol != std::string::npos) key.resize(eol);
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ')) key.pop_back();
  return key;
}

}  // namespace nanotick::venue
