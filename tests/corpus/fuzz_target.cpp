// The libFuzzer entry point of every fuzz target: the harness function GGUFS_FUZZ_CHECK (see
// harness.h) over each input; what it reports aborts the run, so libFuzzer saves the input.
// CMakeLists.txt builds it once per target, GGUFS_FUZZ_TARGET naming the target.
#include <cstdio>
#include <cstdlib>

#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = ggufs::fuzz::GGUFS_FUZZ_CHECK({data, size});
  if (!problem.empty()) {
    std::fprintf(stderr, "ggufs fuzz_%s: %s\n", GGUFS_FUZZ_TARGET, problem.c_str());
    std::abort();
  }
  return 0;
}
