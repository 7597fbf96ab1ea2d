// Files that hold API keys (docs/EXCHANGE.md "Key files"): an admin's key
// file, a load generator's sessions file, a FIX session's key_file. Read only
// when their owner alone may read them: a key another local user can read is
// that user's key too. Start-up code only; thread-safe (no shared state).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace nanotick::venue {

// What is wrong with a key file, naming it, its mode and the fix.
struct KeyFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The whole of the key file at `path` (at most 1 MiB). Throws KeyFileError
// when it cannot be read, is not a regular file, or its group or others have
// any access (mode & 077: "chmod 600 FILE" is the fix the message gives).
std::string read_private_file(const std::string& path);

// The first line of the key file at `path` (read_private_file), without its
// trailing carriage return and spaces: the key itself, not yet validated.
std::string read_key_file(const std::string& path);

// For a file that holds a key among other things (a trader's config and its
// session.api_key): what is wrong with its mode, in the words
// read_private_file refuses with, or "" when the owner alone may read it (or
// it cannot be stat'ed: its reader reports that). Such a file is warned
// about, not refused: a config is not a key file, and the demo's are
// checked out 0644 until `./nanotick setup` makes them 0600.
std::string shared_key_mode_problem(const std::string& path, std::string_view holding);

}  // namespace nanotick::venue
