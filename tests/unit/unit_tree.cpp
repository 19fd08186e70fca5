// The tree without a mount: its contract layout, and the names of metadata files for keys too
// long to be file names (NAME_MAX).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ggufs/byte_source.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/names.h"
#include "ggufs/tree.h"

namespace ggufs {
namespace {

TEST(Tree, HasTheContractLayout) {
  GgufWriter g;
  g.add_string("general.architecture", "x");
  g.add_tensor("t", GGML_TYPE_F32, {2, 3}, std::vector<std::uint8_t>(24, 0));
  const MemorySource src(g.finish());
  const GgufFile f = parse_gguf(src, "mem");
  const Tree tree(f);
  std::vector<std::string> root;
  for (Ino c : tree.node(kRootIno)->children) root.push_back(tree.node(c)->name);
  EXPECT_EQ(root, (std::vector<std::string>{"gguf.json", "tensors.tsv", "metadata", "raw", "f32",
                                            "npy", "f16", "model.gguf", "model.safetensors"}));
  // 6 elements: 24 bytes as stored and as float32, 12 as float16.
  const auto size_of = [&](const char* dir, const char* name) {
    return tree.node(tree.lookup(tree.lookup(kRootIno, dir), name))->size;
  };
  EXPECT_EQ(size_of("raw", "t"), 24u);
  EXPECT_EQ(size_of("f32", "t"), 24u);
  EXPECT_EQ(size_of("f16", "t"), 12u);
  const Node* npy = tree.node(tree.lookup(tree.lookup(kRootIno, "npy"), "t.npy"));
  ASSERT_NE(npy, nullptr);
  EXPECT_EQ(npy->text.size() % 64, 0u);
  EXPECT_NE(npy->text.find("'shape': (3, 2)"), std::string::npos) << npy->text;
  EXPECT_EQ(tree.lookup(kRootIno, "nope"), 0u);
  EXPECT_EQ(tree.node(0), nullptr);
  EXPECT_EQ(tree.node(tree.count() + 1), nullptr);
}

// The files -o direct_io opens around the page cache: those whose bytes ggufs computes. An F32
// tensor's f32/ file is decoded too (its .npy header, its bytes in a big-endian file), so every
// decoded view counts; model.gguf is the file's bytes; model.safetensors is computed where it
// holds a decoded tensor (Q8_0 as float32), not for a model of F32 tensors kept as stored.
// A one-tensor model of 32 elements of `type` (`bytes` zero bytes) and its tree.
struct OneTensorModel {
  OneTensorModel(std::uint32_t type, std::size_t bytes)
      : src(file_bytes(type, bytes)), file(parse_gguf(src, "mem")), tree(file) {}
  static std::vector<std::uint8_t> file_bytes(std::uint32_t type, std::size_t bytes) {
    GgufWriter g;
    g.add_string("general.architecture", "x");
    g.add_tensor("t", type, {32}, std::vector<std::uint8_t>(bytes, 0));
    return g.finish();
  }
  const Node& node(const char* dir, const char* name) const {
    return *tree.node(tree.lookup(dir ? tree.lookup(kRootIno, dir) : kRootIno, name));
  }
  MemorySource src;
  GgufFile file;
  Tree tree;
};

TEST(Tree, ComputedBytesAreTheDecodedAndConvertedFiles) {
  for (const auto& [type, bytes] : {std::pair{GGML_TYPE_Q8_0, 34}, std::pair{GGML_TYPE_F32, 128}}) {
    const OneTensorModel m(type, bytes);
    SCOPED_TRACE(type_traits(type)->name);
    EXPECT_TRUE(computed_bytes(m.node("f32", "t")));
    EXPECT_TRUE(computed_bytes(m.node("npy", "t.npy")));
    EXPECT_TRUE(computed_bytes(m.node("f16", "t")));
    EXPECT_FALSE(computed_bytes(m.node("raw", "t")));
    EXPECT_FALSE(computed_bytes(m.node(nullptr, "gguf.json")));
    EXPECT_FALSE(computed_bytes(m.node(nullptr, "model.gguf")));
    EXPECT_EQ(computed_bytes(m.node(nullptr, "model.safetensors")), type == GGML_TYPE_Q8_0);
  }
}

TEST(KeyFileName, ShortKeysAreFileNameFor) {
  EXPECT_EQ(key_file_name("general.architecture", 3), "general.architecture");
  EXPECT_EQ(key_file_name("a/b", 0), "a%2Fb");
  const std::string k255(255, 'k');
  EXPECT_EQ(key_file_name(k255, 9), k255);
}

TEST(KeyFileName, LongKeysAreCutAndNumbered) {
  EXPECT_EQ(key_file_name(std::string(256, 'k'), 7), std::string(200, 'k') + "%~7");
  EXPECT_EQ(key_file_name(std::string(100000, 'k'), 123456), std::string(200, 'k') + "%~123456");
  // Never cut inside an escape: 199 bytes, then "%2F" would straddle byte 200.
  EXPECT_EQ(key_file_name(std::string(199, 'a') + std::string(100, '/'), 1),
            std::string(199, 'a') + "%~1");
  EXPECT_EQ(key_file_name(std::string(198, 'a') + std::string(100, '/'), 1),
            std::string(198, 'a') + "%~1");
  EXPECT_EQ(key_file_name(std::string(197, 'a') + std::string(100, '/'), 1),
            std::string(197, 'a') + "%2F%~1");
  // Never cut inside a UTF-8 character (é is c3 a9).
  std::string utf8(199, 'a');
  for (int i = 0; i < 40; ++i) utf8 += "\xc3\xa9";
  EXPECT_EQ(key_file_name(utf8, 2), std::string(199, 'a') + "%~2");
}

TEST(KeyFileName, LongKeysStayUniqueAndReachableInTheTree) {
  GgufWriter g;
  const std::string base(300, 'x');
  g.add_string(base + "1", "one");
  g.add_string(base + "2", "two");
  g.add_string(std::string(200, 'x') + "%~1", "looks like a shortened name");
  g.add_string(std::string(5000, '/'), "slashes");
  const std::vector<std::uint8_t> bytes = g.finish();
  const GgufFile f = parse_gguf(MemorySource(bytes), "t.gguf");
  const Tree tree(f);
  const Node& dir = *tree.node(tree.lookup(kRootIno, "metadata"));
  ASSERT_EQ(dir.children.size(), 4u);
  std::set<std::string> names;
  for (Ino ino : dir.children) {
    const Node& n = *tree.node(ino);
    EXPECT_LE(n.name.size(), kMaxFileNameBytes);
    EXPECT_EQ(tree.lookup(tree.lookup(kRootIno, "metadata"), n.name), ino);
    names.insert(n.name);
  }
  EXPECT_EQ(names.size(), 4u);
  EXPECT_TRUE(names.count(std::string(200, 'x') + "%~0"));
  EXPECT_TRUE(names.count(std::string(200, 'x') + "%~1"));
  EXPECT_TRUE(names.count(std::string(200, 'x') + "%25~1"));  // the real key's '%' is escaped
}

}  // namespace
}  // namespace ggufs
