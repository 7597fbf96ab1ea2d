#include "config/toml_reader.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace nanotick::config {

namespace {

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: return "a date/time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

}  // namespace

toml::table parse_toml(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw ConfigError(source + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) +
                      ": TOML syntax error: " + std::string(e.description()));
  }
}

std::string read_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open config file (does it exist? check the path)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read config file");
  return text.str();
}

TableReader::TableReader(const toml::table& table, std::string source, std::string path)
    : table_(&table), source_(std::move(source)), path_(std::move(path)) {}

std::string TableReader::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void TableReader::fail(std::string_view key, const std::string& problem) const {
  throw ConfigError(source_ + ": " + key_path(key) + ": " + problem);
}

const toml::node* TableReader::find(std::string_view key) {
  seen_.emplace(key);
  return table_->get(key);
}

std::int64_t TableReader::integer(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  const toml::node* n = find(key);
  if (n == nullptr) return fallback;
  const auto v = n->value_exact<std::int64_t>();
  if (!v) fail(key, "must be an integer, got " + type_name(*n));
  if (*v < min || *v > max)
    fail(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + std::to_string(*v));
  return *v;
}

std::int64_t TableReader::required_integer(std::string_view key, std::int64_t min, std::int64_t max) {
  if (table_->get(key) == nullptr) fail(key, "missing (required)");
  return integer(key, 0, min, max);
}

bool TableReader::boolean(std::string_view key, bool fallback) {
  const toml::node* n = find(key);
  if (n == nullptr) return fallback;
  const auto v = n->value_exact<bool>();
  if (!v) fail(key, "must be true or false, got " + type_name(*n));
  return *v;
}

std::string TableReader::string(std::string_view key, std::string_view fallback) {
  const toml::node* n = find(key);
  if (n == nullptr) return std::string(fallback);
  const auto v = n->value_exact<std::string>();
  if (!v) fail(key, "must be a string, got " + type_name(*n));
  return *v;
}

std::string TableReader::required_string(std::string_view key) {
  if (table_->get(key) == nullptr) fail(key, "missing (required)");
  std::string s = string(key, "");
  if (s.empty()) fail(key, "must not be empty");
  return s;
}

std::string TableReader::choice(std::string_view key, std::string_view fallback,
                                const std::vector<std::string_view>& allowed) {
  std::string v = string(key, fallback);
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
  std::string list;
  for (const auto a : allowed) list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
  fail(key, "must be one of " + list + ", got \"" + v + "\"");
}

std::vector<std::int64_t> TableReader::integer_array(std::string_view key, std::int64_t min, std::int64_t max) {
  std::vector<std::int64_t> out;
  const toml::node* n = find(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  if (a == nullptr) fail(key, "must be an array of integers, got " + type_name(*n));
  for (std::size_t i = 0; i < a->size(); ++i) {
    const auto v = (*a)[i].value_exact<std::int64_t>();
    const std::string item = std::string(key) + "[" + std::to_string(i) + "]";
    if (!v) fail(item, "must be an integer, got " + type_name((*a)[i]));
    if (*v < min || *v > max)
      fail(item, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + std::to_string(*v));
    out.push_back(*v);
  }
  return out;
}

std::vector<std::pair<std::string, std::int64_t>> TableReader::integer_table(std::string_view key, std::int64_t min,
                                                                             std::int64_t max) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  const toml::node* n = find(key);
  if (n == nullptr) return out;
  const toml::table* t = n->as_table();
  if (t == nullptr) fail(key, "must be a table of integers ({ NAME = 1, ... }), got " + type_name(*n));
  for (const auto& [name, value] : *t) {
    const std::string item = std::string(key) + "." + std::string(name.str());
    const auto v = value.value_exact<std::int64_t>();
    if (!v) fail(item, "must be an integer, got " + type_name(value));
    if (*v < min || *v > max)
      fail(item, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + std::to_string(*v));
    out.emplace_back(std::string(name.str()), *v);
  }
  return out;
}

std::vector<std::string> TableReader::string_array(std::string_view key) {
  std::vector<std::string> out;
  const toml::node* n = find(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  if (a == nullptr) fail(key, "must be an array of strings, got " + type_name(*n));
  for (std::size_t i = 0; i < a->size(); ++i) {
    const auto v = (*a)[i].value_exact<std::string>();
    if (!v) fail(std::string(key) + "[" + std::to_string(i) + "]", "must be a string, got " + type_name((*a)[i]));
    out.push_back(*v);
  }
  return out;
}

std::optional<TableReader> TableReader::table(std::string_view key) {
  const toml::node* n = find(key);
  if (n == nullptr) return std::nullopt;
  const toml::table* t = n->as_table();
  if (t == nullptr) fail(key, "must be a table, got " + type_name(*n));
  return TableReader(*t, source_, key_path(key));
}

TableReader TableReader::required_table(std::string_view key, std::string_view what) {
  if (table_->get(key) == nullptr) fail(key, "missing (required): " + std::string(what));
  return *table(key);
}

std::vector<TableReader> TableReader::tables(std::string_view key) {
  std::vector<TableReader> out;
  const toml::node* n = find(key);
  if (n == nullptr) return out;
  const toml::array* a = n->as_array();
  if (a == nullptr) fail(key, "must be an array of tables ([[" + std::string(key) + "]]), got " + type_name(*n));
  for (std::size_t i = 0; i < a->size(); ++i) {
    const toml::table* t = (*a)[i].as_table();
    const std::string item = std::string(key) + "[" + std::to_string(i) + "]";
    if (t == nullptr) fail(item, "must be a table, got " + type_name((*a)[i]));
    out.emplace_back(*t, source_, key_path(item));
  }
  return out;
}

void TableReader::finish() const {
  for (const auto& [k, v] : *table_) {
    if (seen_.find(k.str()) == seen_.end()) {
      (void)v;
      throw ConfigError(source_ + ": " + key_path(k.str()) + ": unknown key (misspelt? see the documented keys)");
    }
  }
}

}  // namespace nanotick::config
