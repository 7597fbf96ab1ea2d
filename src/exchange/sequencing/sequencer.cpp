#include "exchange/sequencing/sequencer.hpp"

namespace nanotick::exchange {

int JournalSyncer::do_work() noexcept {
  if (policy_ == FsyncPolicy::kEvery) return 0;
  int work = 0;
  if (journal_.written_seq() != journal_.appended_seq()) {
    if (!journal_.flush()) {
      failed_.store(true, std::memory_order_release);
      return 0;
    }
    work = 1;
  }
  if (policy_ == FsyncPolicy::kNone) {
    if (journal_.segments_created() == last_segments_) return work;  // relaxed read: a hint only
    last_segments_ = journal_.segments_created();
    journal_.release_replaced();
    return 1;
  }
  const std::uint64_t now = clock_.now_ns();
  if (now - last_sync_ns_ < window_ns_) return work;
  if (journal_.durable_seq() == journal_.written_seq()) return work;
  last_sync_ns_ = now;
  if (!journal_.sync()) failed_.store(true, std::memory_order_release);
  return 1;
}

}  // namespace nanotick::exchange
