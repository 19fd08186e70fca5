// See remote_reads.h.
#include "remote_reads.h"

#include "ggufs/http_source.h"

namespace ggufs {

namespace {
constexpr std::size_t kMaxQueued = 4096;
}  // namespace

RemoteReadPool::RemoteReadPool(unsigned threads, std::chrono::seconds bound) : bound_(bound) {
  try {
    for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  } catch (const std::exception&) {
    // A thread that cannot start (EAGAIN: no memory for its stack, or bad_alloc) ends the
    // pool's growth: the threads started serve it. Without one, the caller is told (nothing
    // is joinable then, so the throw is safe).
    if (threads_.empty()) throw;
  }
}

RemoteReadPool::~RemoteReadPool() {
  {
    const std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void RemoteReadPool::submit(Job job) {
  {
    const std::lock_guard lock(mu_);
    if (!closing_ && queue_.size() < kMaxQueued) {
      queue_.push_back({std::move(job), std::chrono::steady_clock::now() + bound_});
      cv_.notify_one();
      return;
    }
  }
  job(/*expired=*/true);
}

void RemoteReadPool::work() {
  for (;;) {
    Queued q;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing, nothing left to answer
      q = std::move(queue_.front());
      queue_.pop_front();
    }
    if (std::chrono::steady_clock::now() >= q.deadline) {
      q.job(/*expired=*/true);
      continue;
    }
    const ReadDeadline deadline(q.deadline);
    q.job(/*expired=*/false);
  }
}

}  // namespace ggufs
