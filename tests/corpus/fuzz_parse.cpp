// libFuzzer target: the parser over arbitrary bytes in memory (see harness.h).
#include <cstdio>
#include <cstdlib>

#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = ggufs::fuzz::check_parse({data, size});
  if (!problem.empty()) {
    std::fprintf(stderr, "ggufs fuzz_parse: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
