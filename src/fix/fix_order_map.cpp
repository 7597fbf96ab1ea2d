#include "fix/fix_order_map.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace nanotick::fix {

namespace {

// Reads one record from text[pos...]. kTorn: the text ends inside it.
class RecordReader {
 public:
  enum class Result { kOk, kTorn, kBad };

  RecordReader(std::string_view text, std::size_t pos) : text_(text), pos_(pos) {}

  Result integer(std::int64_t& out) {
    if (const Result r = token(); r != Result::kOk) return r;
    const auto [end, ec] = std::from_chars(token_.data(), token_.data() + token_.size(), out);
    return ec == std::errc() && end == token_.data() + token_.size() ? Result::kOk : Result::kBad;
  }
  Result character(char& out) {
    if (const Result r = token(); r != Result::kOk) return r;
    if (token_.size() != 1) return Result::kBad;
    out = token_[0] == '-' ? 0 : token_[0];
    return Result::kOk;
  }
  // <len>:<bytes>\n, the record's end.
  Result name(std::string& out) {
    const std::size_t colon = text_.find(':', pos_);
    if (colon == std::string_view::npos) return text_.size() - pos_ > 20 ? Result::kBad : Result::kTorn;
    std::uint64_t len = 0;
    const auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + colon, len);
    if (ec != std::errc() || end != text_.data() + colon || colon == pos_ || len > 4096) return Result::kBad;
    if (colon + 1 + len + 1 > text_.size()) return Result::kTorn;
    if (text_[colon + 1 + len] != '\n') return Result::kBad;
    out.assign(text_.substr(colon + 1, len));
    pos_ = colon + 1 + len + 1;
    return Result::kOk;
  }
  std::size_t pos() const noexcept { return pos_; }

 private:
  Result token() {
    const std::size_t space = text_.find(' ', pos_);
    if (space == std::string_view::npos) return text_.size() - pos_ > 24 ? Result::kBad : Result::kTorn;
    if (space == pos_ || space - pos_ > 24) return Result::kBad;
    token_ = text_.substr(pos_, space - pos_);
    pos_ = space + 1;
    return Result::kOk;
  }

  std::string_view text_;
  std::size_t pos_;
  std::string_view token_;
};

char status_ok(char c) {
  constexpr std::string_view kStatuses = "A01248";
  return kStatuses.find(c) != std::string_view::npos ? c : 0;
}

std::string encode(char c) { return c == 0 ? std::string("-") : std::string(1, c); }

// The fields of an O record after its number.
RecordReader::Result read_order(RecordReader& r, FixOrder& o) {
  using R = RecordReader::Result;
  std::int64_t order_id = 0, instrument = 0, after = 0;
  R res = R::kOk;
  const auto next = [&res](R x) { return (res = x) == R::kOk; };
  if (!(next(r.character(o.status)) && next(r.integer(order_id)) && next(r.integer(instrument)) &&
        next(r.character(o.side)) && next(r.character(o.ord_type)) && next(r.character(o.time_in_force)) &&
        next(r.integer(o.price)) && next(r.integer(o.qty)) && next(r.integer(o.cum_qty)) &&
        next(r.integer(o.notional)) && next(r.integer(after)) && next(r.name(o.cl_ord_id))))
    return res;
  if (status_ok(o.status) == 0 || order_id < 0 || after < 0 || instrument < 0 || instrument > 0xffffffffLL ||
      o.qty < 0 || o.cum_qty < 0 || o.cum_qty > o.qty)
    return R::kBad;
  o.order_id = static_cast<std::uint64_t>(order_id);
  o.after_exec_seq = static_cast<std::uint64_t>(after);
  o.instrument = static_cast<market::InstrumentId>(instrument);
  return R::kOk;
}

}  // namespace

FixOrderMap::FixOrderMap(std::string path) : path_(std::move(path)) {
  load();
  // Every order of the session: its user's alone, whatever an older gateway left.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error(path_ + ": cannot open for appending: " + std::strerror(errno));
  if (::fchmod(fd_, 0600) != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::runtime_error(path_ + ": cannot make it owner-only (chmod 600): " + std::strerror(err));
  }
}

FixOrderMap::~FixOrderMap() {
  if (fd_ >= 0) ::close(fd_);
}

FixOrderMapContents parse_fix_order_map(std::string_view text, const std::string& path) {
  FixOrderMapContents c;
  std::size_t pos = 0;
  using R = RecordReader::Result;
  while (pos < text.size()) {
    const char kind = text[pos];
    RecordReader r(text, pos + 2);
    R result = R::kBad;
    std::int64_t number = 0;
    if (kind != 'O' && kind != 'A') {
      result = R::kBad;
    } else if (pos + 1 >= text.size()) {
      result = R::kTorn;
    } else if (text[pos + 1] == ' ') {
      result = r.integer(number);
      if (result == R::kOk && number <= 0) result = R::kBad;
    }
    if (result == R::kOk && kind == 'O') {
      FixOrder o;
      o.number = static_cast<std::uint64_t>(number);
      result = read_order(r, o);
      if (result == R::kOk) {
        if (!o.cl_ord_id.empty()) c.names[o.cl_ord_id] = o.number;
        c.next_number = std::max(c.next_number, o.number + 1);
        c.orders[o.number] = std::move(o);
      }
    } else if (result == R::kOk && kind == 'A') {
      std::string name;
      result = r.name(name);
      const auto it = c.orders.find(static_cast<std::uint64_t>(number));
      if (result == R::kOk && (it == c.orders.end() || name.empty())) result = R::kBad;
      if (result == R::kOk) {
        c.names[name] = it->first;
        it->second.cl_ord_id = name;
      }
    }
    if (result == R::kTorn) break;  // the gateway died writing this record; its answer was never sent
    if (result == R::kBad)
      throw std::runtime_error(path + ": corrupt record at byte " + std::to_string(pos) +
                               " (the gateway's order map: refusing to guess at the orders it answered for)");
    pos = r.pos();
  }
  c.complete_bytes = pos;
  return c;
}

void FixOrderMap::load() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return;  // a new session: no file yet
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  FixOrderMapContents c = parse_fix_order_map(text, path_);
  if (c.complete_bytes < text.size() && ::truncate(path_.c_str(), static_cast<off_t>(c.complete_bytes)) != 0)
    throw std::runtime_error(path_ + ": cannot cut the unfinished last record: " + std::strerror(errno));
  orders_ = std::move(c.orders);
  names_ = std::move(c.names);
  next_number_ = c.next_number;
}

FixOrder* FixOrderMap::find(const std::string& cl_ord_id) {
  const auto it = names_.find(cl_ord_id);
  return it == names_.end() ? nullptr : find(it->second);
}

FixOrder* FixOrderMap::find(std::uint64_t number) {
  const auto it = orders_.find(number);
  return it == orders_.end() ? nullptr : &it->second;
}

FixOrder& FixOrderMap::add(FixOrder order) {
  order.number = next_number_++;
  if (!order.cl_ord_id.empty()) names_[order.cl_ord_id] = order.number;
  FixOrder& o = orders_[order.number] = std::move(order);
  save(o);
  return o;
}

void FixOrderMap::rename(FixOrder& order, const std::string& cl_ord_id) {
  names_[cl_ord_id] = order.number;
  order.cl_ord_id = cl_ord_id;
  append("A " + std::to_string(order.number) + " " + std::to_string(cl_ord_id.size()) + ":" + cl_ord_id + "\n");
}

void FixOrderMap::save(const FixOrder& o) {
  std::ostringstream r;
  r << "O " << o.number << ' ' << encode(o.status) << ' ' << o.order_id << ' ' << o.instrument << ' ' << encode(o.side)
    << ' ' << encode(o.ord_type) << ' ' << encode(o.time_in_force) << ' ' << o.price << ' ' << o.qty << ' ' << o.cum_qty
    << ' ' << o.notional << ' ' << o.after_exec_seq << ' ' << o.cl_ord_id.size() << ':' << o.cl_ord_id << '\n';
  append(r.str());
}

void FixOrderMap::append(const std::string& record) noexcept {
  if (!failure_.empty()) return;
  std::size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = ::write(fd_, record.data() + done, record.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failure_ = path_ + ": write failed: " + std::strerror(n < 0 ? errno : EIO);
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

std::uint64_t FixOrderMap::highest_after_exec_seq() const noexcept {
  std::uint64_t h = 0;
  for (const auto& [number, o] : orders_) h = std::max(h, o.after_exec_seq);
  return h;
}

std::vector<FixOrder*> FixOrderMap::open_orders() {
  std::vector<FixOrder*> out;
  for (auto& [number, o] : orders_)
    if (o.open()) out.push_back(&o);
  std::sort(out.begin(), out.end(), [](const FixOrder* a, const FixOrder* b) { return a->number < b->number; });
  return out;
}

}  // namespace nanotick::fix
