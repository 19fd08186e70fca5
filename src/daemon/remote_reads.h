// Reads that may wait for a network, served off libfuse's request threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ggufs {

/// A bounded pool of threads for reads of remote models. libfuse's request threads hand such a
/// read over and return at once, so servers that stall never take the threads that answer
/// lookups, metadata files and local shards. Each read must be answered within `bound` of the
/// moment it was handed over, its time in the queue included (ReadDeadline): a read still
/// queued then fails at once.
class RemoteReadPool {
 public:
  /// A read: called once, with `expired` true when its time ran out before it started (or the
  /// queue is full, or the pool is closing): it must then answer EIO without waiting.
  using Job = std::function<void(bool expired)>;

  /// Starts `threads` threads, or as many as can start (size()): at least one, else it throws
  /// what the failed start threw (std::system_error of EAGAIN where no memory is left for a
  /// thread's stack).
  RemoteReadPool(unsigned threads, std::chrono::seconds bound);
  /// Answers every queued read (as expired once the bound passed) and joins the threads.
  ~RemoteReadPool();
  RemoteReadPool(const RemoteReadPool&) = delete;
  RemoteReadPool& operator=(const RemoteReadPool&) = delete;

  /// The threads that serve the pool.
  std::size_t size() const { return threads_.size(); }

  /// Queues `job` (at most 4096 waiting: beyond that it runs at once, expired).
  void submit(Job job);

 private:
  struct Queued {
    Job job;
    std::chrono::steady_clock::time_point deadline;
  };
  void work();

  std::chrono::seconds bound_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Queued> queue_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ggufs
