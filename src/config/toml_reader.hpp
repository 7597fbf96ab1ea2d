// Strict, typed reading of a TOML table: every getter names its key, checks
// type and range, and throws ConfigError("<file>: <key path>: <problem>");
// finish() refuses keys nobody read, so a typo is an error instead of a
// silently applied default. Start-up code only (allocates, throws). Not
// thread-safe: one reader per thread.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

namespace nanotick::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses TOML text; syntax errors become ConfigError with line and column.
toml::table parse_toml(std::string_view text, const std::string& source);
// The text of a config file; a missing or unreadable file is a ConfigError.
std::string read_config_file(const std::string& path);

class TableReader {
 public:
  // `path` is the table's key path for messages ("" for the root).
  TableReader(const toml::table& table, std::string source, std::string path);

  // Optional integer in [min, max], `fallback` when absent.
  std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max);
  // Optional integer in [min, max] as a u32 (max at most 2^32 - 1), `fallback` when absent.
  std::uint32_t u32(std::string_view key, std::uint32_t fallback, std::int64_t min, std::int64_t max = 0xffff'ffffLL) {
    return static_cast<std::uint32_t>(integer(key, fallback, min, max < 0xffff'ffffLL ? max : 0xffff'ffffLL));
  }
  // Required integer in [min, max].
  std::int64_t required_integer(std::string_view key, std::int64_t min, std::int64_t max);
  bool boolean(std::string_view key, bool fallback);
  std::string string(std::string_view key, std::string_view fallback);
  std::string required_string(std::string_view key);
  // Optional string that must be one of `allowed`.
  std::string choice(std::string_view key, std::string_view fallback, const std::vector<std::string_view>& allowed);
  // Optional array of integers, each in [min, max].
  std::vector<std::int64_t> integer_array(std::string_view key, std::int64_t min, std::int64_t max);
  // Optional table of integers keyed by name ({ A = 1, B = -2 }), each in
  // [min, max], in key order; absent: empty.
  std::vector<std::pair<std::string, std::int64_t>> integer_table(std::string_view key, std::int64_t min,
                                                                  std::int64_t max);
  // Optional array of strings; absent: empty.
  std::vector<std::string> string_array(std::string_view key);
  // Optional sub-table (absent: nullopt).
  std::optional<TableReader> table(std::string_view key);
  // Required sub-table; absent: "missing (required): <what>" (what it must give).
  TableReader required_table(std::string_view key, std::string_view what);
  // Optional array of tables ([[key]]); absent: empty.
  std::vector<TableReader> tables(std::string_view key);

  // Throws on the first key of this table no getter asked for.
  void finish() const;

  // "<source>: <path.key>: <problem>" as a ConfigError.
  [[noreturn]] void fail(std::string_view key, const std::string& problem) const;
  std::string key_path(std::string_view key) const;

 private:
  const toml::node* find(std::string_view key);

  const toml::table* table_;
  std::string source_;
  std::string path_;
  std::set<std::string, std::less<>> seen_;
};

}  // namespace nanotick::config
