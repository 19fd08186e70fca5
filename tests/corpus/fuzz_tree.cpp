// libFuzzer target: parse, build the tree and read every file of it at input-derived ranges
// (see harness.h).
#include <cstdio>
#include <cstdlib>

#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = ggufs::fuzz::check_tree({data, size});
  if (!problem.empty()) {
    std::fprintf(stderr, "ggufs fuzz_tree: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
