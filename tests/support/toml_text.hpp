// Editing the TOML texts of config tests line by line: give every table of a
// kind the keys a test does not set itself (TOML refuses a table or a key
// defined twice, so a test's own keys cannot simply be appended), and take
// one key or a whole table out of a complete config. Tables are found by
// their header line ("[server]", "[[instruments]]"); keys by "key =" at the
// start of a line. Plain functions on strings: thread-safe. Test code only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nanotick::testing {

namespace toml_text_detail {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    out.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

inline std::string text_of(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

inline bool is_header(std::string_view line) { return !line.empty() && line.front() == '['; }

// The key of a "key = value" line ("" for any other line).
inline std::string key_of(std::string_view line) {
  const std::size_t eq = line.find('=');
  if (eq == std::string_view::npos || is_header(line) || line.front() == '#') return "";
  std::string_view key = line.substr(0, eq);
  while (!key.empty() && key.back() == ' ') key.remove_suffix(1);
  return std::string(key);
}

}  // namespace toml_text_detail

// `text` where every table headed `header` has each "key = value" of
// `defaults` whose key it does not set. A plain table ("[risk]") that is not
// there is appended with them; an array of tables ("[[instruments]]") is
// never added to, only its existing tables completed.
inline std::string with_defaults(const std::string& text, const std::string& header,
                                 const std::vector<std::string>& defaults) {
  using namespace toml_text_detail;
  const std::vector<std::string> in = lines_of(text);
  std::vector<std::string> out;
  bool found = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out.push_back(in[i]);
    if (in[i] != header) continue;
    found = true;
    std::size_t end = i + 1;
    while (end < in.size() && !is_header(in[end])) ++end;
    for (const std::string& d : defaults) {
      bool set = false;
      for (std::size_t k = i + 1; k < end; ++k) set = set || key_of(in[k]) == key_of(d);
      if (!set) out.push_back(d);
    }
  }
  if (!found && header.rfind("[[", 0) != 0) {
    out.push_back(header);
    for (const std::string& d : defaults) out.push_back(d);
  }
  return text_of(out);
}

// `text` without its line `line` (which must be there exactly once: "" otherwise,
// so that a test removing nothing fails loudly).
inline std::string without_line(const std::string& text, const std::string& line) {
  using namespace toml_text_detail;
  std::vector<std::string> out;
  int removed = 0;
  for (const std::string& l : lines_of(text)) {
    if (l == line) {
      ++removed;
    } else {
      out.push_back(l);
    }
  }
  return removed == 1 ? text_of(out) : "";
}

// `text` without any table headed `header` and the keys under it ("" when
// there is none).
inline std::string without_tables(const std::string& text, const std::string& header) {
  using namespace toml_text_detail;
  std::vector<std::string> out;
  bool skipping = false;
  int removed = 0;
  for (const std::string& l : lines_of(text)) {
    if (is_header(l)) {
      skipping = l == header;
      removed += skipping ? 1 : 0;
    }
    if (!skipping) out.push_back(l);
  }
  return removed > 0 ? text_of(out) : "";
}

}  // namespace nanotick::testing
