#include "progress.h"

#include <fmt/format.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>

#include "ggufs/names.h"

namespace ggufs {
namespace {

// The line the timer signal writes, prepared beforehand (a handler may only call write(2)).
char g_line[512];
std::size_t g_line_len = 0;
std::atomic<bool> g_shown{false};

void on_timer(int) {
  g_shown = true;
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, g_line, g_line_len);
}

long long now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

long delay_ms() {
  const char* env = std::getenv("GGUFS_PROGRESS_DELAY_MS");
  return env ? std::strtol(env, nullptr, 10) : 1000;
}

}  // namespace

SlowStep::SlowStep(std::string what) {
  if (::isatty(STDERR_FILENO) != 1) return;
  what_ = printable(what);
  const std::string line = fmt::format("\rggufs: {}…\x1b[K", what_);
  g_line_len = std::min(line.size(), sizeof g_line);
  std::copy_n(line.data(), g_line_len, g_line);
  g_shown = false;
  armed_ = true;
  start_ns_ = now_ns();
  const long ms = delay_ms();
  if (ms <= 0) {  // no delay: shown at once
    on_timer(0);
    return;
  }
  std::signal(SIGALRM, on_timer);
  itimerval t{};
  t.it_value.tv_sec = ms / 1000;
  t.it_value.tv_usec = (ms % 1000) * 1000;
  ::setitimer(ITIMER_REAL, &t, nullptr);
}

SlowStep::~SlowStep() {
  if (!armed_) return;
  const itimerval off{};
  ::setitimer(ITIMER_REAL, &off, nullptr);
  std::signal(SIGALRM, SIG_DFL);
  if (g_shown) {
    fmt::print(stderr, "\rggufs: {}: done in {:.1f} s\x1b[K\n", what_,
               static_cast<double>(now_ns() - start_ns_) / 1e9);
  }
}

}  // namespace ggufs
