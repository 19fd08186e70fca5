// The --info report without the command: header, metadata (arrays cut to five elements), the
// tensor table and bits per weight, from the block sizes of ggml's types.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "ggufs/info.h"
#include "ggufs/model.h"
#include "info_fixture.h"
#include "test_util.h"

namespace ggufs::test {
namespace {

TEST(Info, PrintsHeaderMetadataTensorsAndBitsPerWeight) {
  TempDir dir;
  const auto file = write_info_model(dir.path());
  const std::string out = render_info(open_model(file.string()).file);
  auto has = [&](const std::string& s) {
    EXPECT_NE(out.find(s), std::string::npos) << "missing: " << s << "\n" << out;
  };
  has("GGUF version 3, little-endian");
  has("2 tensors, 4 metadata key/values, alignment 32");
  has("general.architecture = \"llama\"");
  has("llama.block_count = 3");
  has("x.eps = 0.5");
  // Arrays: element type, count, the first five elements (escaped) and an ellipsis.
  has("[string]   |        7 | tokenizer.ggml.tokens = [\"<unk>\", \"<s>\", \"</s>\", "
      "\"a\\x09b\", \"c\", ...]");
  // The tensor line: type, ne, elements, bytes (6 super-blocks of 144 bytes, src/ggml/README.md §7
  // Q4_K), offset, name.
  EXPECT_TRUE(std::regex_search(
      out, std::regex(R"(Q4_K +\| 512 x 3 +\| +1536 \| +864 \| +[0-9]+ \| blk\.0\.w\n)")))
      << out;
  // Bits per weight: Q4_K 144 × 8 / 256 = 4.5; F32 32; total (16 + 864) × 8 / (4 + 1536).
  has("4.5000");
  has("32.0000");
  has("4.5714");
}

}  // namespace
}  // namespace ggufs::test
