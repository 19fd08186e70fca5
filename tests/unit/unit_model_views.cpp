// The whole-model views without a mount: model.gguf of splits made by our writer against the
// files llama.cpp's llama-gguf-split --merge wrote for them, and the bounds of model.safetensors.
#include <gtest/gtest.h>

#include <limits>

#include "ggufs/byte_source.h"
#include "ggufs/content.h"
#include "ggufs/half.h"
#include "ggufs/model.h"
#include "ggufs/model_views.h"
#include "split_fixture.h"
#include "test_util.h"

namespace ggufs {
namespace {

// The whole of root file `name` of the model whose first shard is `path`.
std::string whole_model_view(const std::string& path, const std::string& name) {
  const Model m = open_model(path);
  std::vector<const ByteSource*> sources;
  for (const auto& s : m.sources) sources.push_back(s.get());
  const Tree tree(m.file);
  const ContentReader reader(m.file, sources);
  const Node* n = tree.node(tree.lookup(kRootIno, name));
  if (!n) return "";
  std::string out(n->size, '\0');
  EXPECT_EQ(reader.read(*n, out.data(), out.size(), 0), out.size());
  // Reads past the end are empty.
  EXPECT_EQ(reader.read(*n, out.data(), 16, n->size), 0u);
  return out;
}

// sha256 of what llama-gguf-split --merge (llama.cpp de3ff81, the source node-llama-cpp 3.22.1
// ships) wrote for the splits of test::write_split(dir, 3) and test::write_rich_split(dir).
constexpr const char* kMergedPlain =
    "2c916879bab1a1a0ec995b73585d7e41179951db0512c7aa5198e1f8dbe78483";
constexpr const char* kMergedRich =
    "3c6124389c9e7999ccabccafe664ee619e4010ba164f1bea5a8ba4f7b76edbb7";

TEST(MergedGguf, OurSplitsMergeAsLlamaGgufSplitDoes) {
  test::TempDir plain, rich;
  const std::string plain_first = shard_path(test::write_split(plain.path(), 3), 1, 3);
  const std::string m1 = whole_model_view(plain_first, "model.gguf");
  EXPECT_EQ(test::sha256_hex(m1.data(), m1.size()), kMergedPlain);
  const std::string m2 = whole_model_view(test::write_rich_split(rich.path()), "model.gguf");
  EXPECT_EQ(test::sha256_hex(m2.data(), m2.size()), kMergedRich);
  // Opened from another shard, the merge is the same.
  const std::string m3 =
      whole_model_view(shard_path((rich.path() / "r").string(), 3, 3), "model.gguf");
  EXPECT_EQ(m3, m2);
}

TEST(MergedGguf, ASingleFileIsItself) {
  GgufWriter g;
  g.add_string("general.architecture", "x");
  g.add_tensor("t", GGML_TYPE_F32, {2, 3}, std::vector<std::uint8_t>(24, 7));
  const std::vector<std::uint8_t> bytes = g.finish();
  const MemorySource src(bytes);
  const GgufFile f = parse_gguf(src, "mem");
  const Tree tree(f);
  const Node* n = tree.node(tree.lookup(kRootIno, "model.gguf"));
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->size, bytes.size());
  std::string out(n->size, '\0');
  ContentReader(f, src).read(*n, out.data(), out.size(), 0);
  EXPECT_EQ(0, std::memcmp(out.data(), bytes.data(), bytes.size()));
}

TEST(Safetensors, AHeaderAboveTheFormatsLimitIsNotOffered) {
  GgufFile f;
  f.kv.push_back({"big", Value{ValueType::kString, std::string(100'000'000, 'x')}, 0});
  std::vector<std::string> warnings;
  EXPECT_FALSE(safetensors_layout(f, {}, warnings));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("above the format's limit of 100000000"), std::string::npos)
      << warnings[0];
  // Just below: offered.
  f.kv[0].value.data = std::string(99'000'000, 'x');
  warnings.clear();
  EXPECT_TRUE(safetensors_layout(f, {}, warnings));
  EXPECT_TRUE(warnings.empty());
}

TEST(Safetensors, TensorsThatCannotBeDecodedAreLeftOutAndListed) {
  GgufFile f;
  TensorInfo known;
  known.name = "w";
  known.n_dims = 1;
  known.ne = {4, 1, 1, 1};
  known.type = GGML_TYPE_F32;
  known.n_elements = 4;
  known.n_bytes = 16;
  TensorInfo unknown = known;
  unknown.name = "gone";
  unknown.type = 99;
  unknown.n_bytes.reset();
  f.tensors = {known, unknown};
  std::vector<std::string> warnings;
  const auto layout = safetensors_layout(f, {}, warnings);
  ASSERT_TRUE(layout);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("'gone'"), std::string::npos) << warnings[0];
  const std::uint64_t n = static_cast<std::uint8_t>(layout->text[0]) |
                          static_cast<std::uint64_t>(static_cast<std::uint8_t>(layout->text[1]))
                              << 8;
  const auto header = nlohmann::json::parse(layout->text.substr(8, n));
  EXPECT_EQ(header["__metadata__"]["ggufs.omitted_tensors"], "[\"gone\"]");
  EXPECT_EQ(header["w"]["data_offsets"], nlohmann::json::parse("[0, 16]"));
  EXPECT_FALSE(header.contains("gone"));
  EXPECT_EQ(layout->size(), 8 + n + 16);
}

// torch's float → bfloat16 (round_to_nearest_even, c10/util/BFloat16.h): ties go to the even
// upper half, overflow to infinity, every NaN to 0x7fc0.
TEST(Bf16, RoundsAsTorchDoes) {
  const auto bf = [](std::uint32_t bits) {
    return float_to_bf16_as_torch(std::bit_cast<float>(bits));
  };
  EXPECT_EQ(bf(0x3f800000u), 0x3f80);  // 1.0
  EXPECT_EQ(bf(0x3f808000u), 0x3f80);  // tie, even below
  EXPECT_EQ(bf(0x3f818000u), 0x3f82);  // tie, odd below: up
  EXPECT_EQ(bf(0x3f808001u), 0x3f81);  // above the tie
  EXPECT_EQ(bf(0x7f7fffffu), 0x7f80);  // the largest float rounds to infinity
  EXPECT_EQ(bf(0x80000000u), 0x8000);  // -0
  EXPECT_EQ(bf(0xff800000u), 0xff80);  // -inf
  EXPECT_EQ(bf(0x7f800001u), 0x7fc0);  // a signalling NaN
  EXPECT_EQ(bf(0xffc12345u), 0x7fc0);  // a negative NaN with payload
}

}  // namespace
}  // namespace ggufs
