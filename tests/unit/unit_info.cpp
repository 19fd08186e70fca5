// The --info report without the command: header, metadata (arrays cut to five elements), the
// tensor table and bits per weight, from the block sizes of ggml's types.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
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
// --info names the whole-model views a mount offers, with their sizes: for the shared split
// model, model.gguf is as long as the file llama-gguf-split --merge wrote.
TEST(Info, ListsTheWholeModelViews) {
  GGUFS_REQUIRE_TESTDATA(dir);
  const Model m = open_model((dir / "split" / "tiny-llama-00001-of-00003.gguf").string());
  const std::string info = render_info(m.file);
  const auto merged = std::filesystem::file_size(dir / "split" / "tiny-llama-merged.gguf");
  EXPECT_NE(
      info.find(fmt::format("model.gguf         {:>14} bytes  GGUF: the 3 shards merged", merged)),
      std::string::npos)
      << info;
  EXPECT_NE(info.find("model.safetensors"), std::string::npos) << info;
}

}  // namespace ggufs::test
