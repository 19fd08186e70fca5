// Progress on a terminal for steps that take long: a line appears only if a step is still
// running after a delay (1 s; GGUFS_PROGRESS_DELAY_MS overrides it, 0 shows every step), so
// quick mounts stay quiet.
#pragma once

#include <string>

namespace ggufs {

/// While alive, a step named `what` ("reading model.gguf") is under way. If stderr is a
/// terminal and the step outlasts the delay, "ggufs: <what>…" is printed (from a timer signal,
/// with write(2) only); on destruction the line is completed with the elapsed time.
/// One at a time; not for use once threads run.
class SlowStep {
 public:
  explicit SlowStep(std::string what);
  ~SlowStep();
  SlowStep(const SlowStep&) = delete;
  SlowStep& operator=(const SlowStep&) = delete;

 private:
  std::string what_;
  bool armed_ = false;
  long long start_ns_ = 0;
};

}  // namespace ggufs
