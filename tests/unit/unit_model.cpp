// Opening models without a mount: split models (gguf-split shards found, checked and merged)
// and the shard file names.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <optional>

#include "ggufs/content.h"
#include "ggufs/error.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/model.h"
#include "ggufs/tree.h"
#include "split_fixture.h"
#include "test_util.h"

namespace ggufs {
namespace {

using test::kAll;
using test::ShardEdit;
using test::tensor_bytes;
using test::write_split;

Value u16(std::uint64_t v) { return Value{ValueType::kUint16, v}; }
Value i32(std::int64_t v) { return Value{ValueType::kInt32, v}; }

TEST(SplitName, ParsesTheGgufSplitPattern) {
  auto n = parse_split_name("/models/llama-7b-00002-of-00003.gguf");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->prefix, "/models/llama-7b");
  EXPECT_EQ(n->number, 2u);
  EXPECT_EQ(n->count, 3u);
  EXPECT_EQ(shard_path(n->prefix, 3, 3), "/models/llama-7b-00003-of-00003.gguf");
  for (const char* bad : {"m.gguf", "m-1-of-3.gguf", "m-00001-of-00003.bin", "-00001-of-00003.gguf",
                          "m-00000-of-00003.gguf", "m-00004-of-00003.gguf", "m-0000x-of-00003.gguf",
                          "m-00001_of-00003.gguf"}) {
    EXPECT_FALSE(parse_split_name(bad)) << bad;
  }
}

TEST(SplitModel, AllShardsFormOneModelFromWhicheverShardIsGiven) {
  test::TempDir dir;
  const std::string prefix = write_split(dir.path(), 3);
  for (std::uint32_t given = 1; given <= 3; ++given) {
    SCOPED_TRACE(given);
    std::vector<std::string> seen;
    const Model m = open_model(shard_path(prefix, given, 3),
                               [&](std::uint32_t i, std::uint32_t n, const std::string& p) {
                                 EXPECT_EQ(n, 3u);
                                 seen.push_back(fmt::format("{}:{}", i, p));
                               });
    EXPECT_EQ(seen.size(), 3u);
    ASSERT_EQ(m.sources.size(), 3u);
    const GgufFile& f = m.file;
    EXPECT_EQ(f.path, shard_path(prefix, 1, 3));  // the first shard's metadata
    ASSERT_EQ(f.kv.size(), 4u);
    EXPECT_EQ(f.kv[0].key, "general.architecture");
    ASSERT_EQ(f.shards.size(), 3u);
    EXPECT_EQ(f.shards[2].path, shard_path(prefix, 3, 3));
    EXPECT_EQ(f.shards[2].tensor_count, 2u);
    ASSERT_EQ(f.tensors.size(), 6u);
    EXPECT_EQ(f.tensor_count, 6u);
    // Each tensor is read from its own shard.
    std::vector<const ByteSource*> sources;
    for (const auto& s : m.sources) sources.push_back(s.get());
    const Tree tree(f);
    const ContentReader reader(f, sources);
    const Ino f32_dir = tree.lookup(kRootIno, "f32");
    for (int k = 2; k < 8; ++k) {
      const std::string name = fmt::format("t{}.{}", k / 2, k % 2 ? 'b' : 'a');
      const TensorInfo* t = nullptr;
      for (const TensorInfo& info : f.tensors) {
        if (info.name == name) t = &info;
      }
      ASSERT_NE(t, nullptr) << name;
      EXPECT_EQ(t->shard, static_cast<std::uint32_t>(k / 2 - 1));
      const Node* node = tree.node(tree.lookup(f32_dir, name));
      ASSERT_NE(node, nullptr);
      std::vector<char> got(16);
      ASSERT_EQ(reader.read(*node, got.data(), 16, 0), 16u);
      const auto want = tensor_bytes(k);
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), 16)) << name;
    }
  }
}

// The message of what open_model throws for `path`, prefixed "IoError: " or "ParseError: ".
std::string failure(const std::string& path) {
  try {
    open_model(path);
  } catch (const IoError& e) {
    return std::string("IoError: ") + e.what();
  } catch (const ParseError& e) {
    return std::string("ParseError: ") + e.what();
  }
  return "opened";
}

TEST(SplitModel, MissingOrMismatchedShardsAreNamed) {
  {
    test::TempDir dir;
    const std::string prefix = write_split(dir.path(), 3);
    std::filesystem::remove(shard_path(prefix, 2, 3));
    const std::string e = failure(shard_path(prefix, 1, 3));
    EXPECT_NE(e.find("IoError: " + shard_path(prefix, 2, 3) + ": cannot open"), std::string::npos)
        << e;
    EXPECT_NE(e.find("shard 2 of 3"), std::string::npos) << e;
  }
  const struct {
    ShardEdit edit;
    std::uint32_t at_fault;  // the shard the message must name
    const char* says;
  } cases[] = {
      {{2, "split.no", u16(0)}, 2, "split.no is 0, but this is shard 2 of 3 (split.no must be 1)"},
      {{3, "split.no", std::nullopt}, 3, "no split.no key"},
      {{2, "split.count", u16(4)}, 2, "split.count is 4, but the first shard says 3"},
      {{3, "split.tensors.count", i32(5)}, 3, "split.tensors.count is 5, but the first shard"},
      {{1, "split.tensors.count", i32(7)},
       2,
       "split.tensors.count is 6, but the first shard says 7"},
      {{kAll, "split.tensors.count", i32(7)},
       1,
       "split.tensors.count is 7, but the 3 shards hold 6"},
      {{2, "split.no", Value{ValueType::kString, "1"}}, 2, "split.no must be a non-negative"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.says);
    test::TempDir dir;
    const std::string prefix = write_split(dir.path(), 3, c.edit);
    const std::string e = failure(shard_path(prefix, 1, 3));
    EXPECT_NE(e.find("ParseError: " + shard_path(prefix, c.at_fault, 3) + ": at byte"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find(c.says), std::string::npos) << e;
  }
  {
    test::TempDir dir;
    const std::string prefix = write_split(dir.path(), 2, {}, "t1.a");  // t1.a in both shards
    const std::string e = failure(shard_path(prefix, 1, 2));
    EXPECT_NE(e.find(shard_path(prefix, 2, 2)), std::string::npos) << e;
    EXPECT_NE(e.find("tensor 't1.a' is also in shard 1"), std::string::npos) << e;
  }
}

TEST(SplitModel, ShardsMustShareOneByteOrder) {
  // Each shard alone is a valid file; together their values would be read one way and half of
  // them come out byte-swapped.
  for (const std::uint32_t odd : {1u, 2u}) {
    SCOPED_TRACE(odd);
    test::TempDir dir;
    const std::string prefix = write_split(dir.path(), 2, {odd, "", std::nullopt, true});
    for (std::uint32_t i = 1; i <= 2; ++i) {
      const FileSource shard(shard_path(prefix, i, 2));
      EXPECT_NO_THROW(parse_gguf(shard, shard.name()));
    }
    const std::string e = failure(shard_path(prefix, 1, 2));
    EXPECT_NE(e.find("ParseError: " + shard_path(prefix, 2, 2) + ": at byte 4: this shard is " +
                     (odd == 2 ? "big-endian, but shard 1 is little-endian"
                               : "little-endian, but shard 1 is big-endian")),
              std::string::npos)
        << e;
  }
  test::TempDir dir;  // every shard big-endian: one model
  const std::string prefix = write_split(dir.path(), 2, {kAll, "", std::nullopt, true});
  const Model m = open_model(shard_path(prefix, 1, 2));
  EXPECT_TRUE(m.file.big_endian);
  EXPECT_EQ(m.file.tensors.size(), 4u);
}

TEST(SplitModel, NamesAndKeysMustAgree) {
  test::TempDir dir;
  const std::string prefix = write_split(dir.path(), 2);
  // A shard renamed so that its name no longer says where the others are.
  const auto lone = dir.path() / "renamed.gguf";
  std::filesystem::copy_file(shard_path(prefix, 1, 2), lone);
  std::string e = failure(lone.string());
  EXPECT_NE(e.find("split.count is 2: one shard of a split model, but the file name"),
            std::string::npos)
      << e;
  // A plain file named like a shard.
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  const std::string plain = shard_path((dir.path() / "p").string(), 1, 2);
  g.write_file(plain);
  e = failure(plain);
  EXPECT_NE(e.find("named as shard 1 of 2 of a split model, but it has no split.count"),
            std::string::npos)
      << e;
  // One shard of one (split.count 1): an ordinary file.
  const std::string single = write_split(dir.path(), 1);
  const Model m = open_model(shard_path(single, 1, 1));
  EXPECT_TRUE(m.file.shards.empty());
  EXPECT_EQ(m.file.tensors.size(), 2u);
}

// A projector written as llama.cpp's mmproj files are: general.architecture "clip" (or `arch`),
// and one F32 tensor of 4 elements whose bytes are tensor_bytes(9).
std::string write_projector(const std::filesystem::path& dir, const std::string& arch = "clip") {
  GgufWriter g;
  g.add_string("general.architecture", arch);
  g.add_tensor("v.post_ln.weight", GGML_TYPE_F32, {4}, tensor_bytes(9));
  const std::string path = (dir / "mmproj.gguf").string();
  g.write_file(path);
  return path;
}

// The pair of a split model and its projector is one file to read: the model's tensors at their
// own indices, the projector's after them, read from the projector's source.
TEST(Projector, PairedFileReadsTheProjectorAfterTheModelsShards) {
  test::TempDir dir;
  const std::string prefix = write_split(dir.path(), 3);
  Model m = open_model(shard_path(prefix, 1, 3));
  attach_projector(m, open_model(write_projector(dir.path())));
  ASSERT_NE(m.projector, nullptr);
  const GgufFile paired = paired_file(m);
  ASSERT_EQ(paired.tensors.size(), 7u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(paired.tensors[i].name, m.file.tensors[i].name);
  EXPECT_EQ(paired.tensors[6].name, "v.post_ln.weight");
  EXPECT_EQ(paired.tensors[6].shard, 3u);  // after the model's three sources
  ASSERT_EQ(paired.shards.size(), 4u);
  EXPECT_EQ(paired.shards[2].path, shard_path(prefix, 3, 3));
  EXPECT_EQ(paired.shards[3].path, (dir.path() / "mmproj.gguf").string());
  std::vector<const ByteSource*> sources;
  for (const auto& s : m.sources) sources.push_back(s.get());
  sources.push_back(m.projector->sources.front().get());
  const ContentReader reader(paired, sources);
  Node raw;
  raw.kind = NodeKind::kRaw;
  raw.tensor = 6;
  raw.size = 16;
  raw.view = &kTensorViews[0];
  std::vector<char> got(16);
  ASSERT_EQ(reader.read(raw, got.data(), 16, 0), 16u);
  const auto want = tensor_bytes(9);
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), 16));
}

TEST(Projector, AFileThatIsNoProjectorIsRefusedNamingIt) {
  test::TempDir dir;
  const std::string prefix = write_split(dir.path(), 2);
  Model m = open_model(shard_path(prefix, 1, 2));
  const std::string path = write_projector(dir.path(), "llama");
  try {
    attach_projector(m, open_model(path));
    ADD_FAILURE() << "attached";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.problem(),
              "not a vision projector: general.architecture is \"llama\", not \"clip\" "
              "(llama.cpp's mmproj files)");
  }
  EXPECT_EQ(m.projector, nullptr);
}

}  // namespace
}  // namespace ggufs
