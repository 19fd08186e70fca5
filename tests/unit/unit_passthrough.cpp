// ServedModel::whole_file_fd: which files of a mount are one backing file byte for byte (the
// daemon opens those in FUSE passthrough). Only model.gguf of a single local file is.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/library.h"
#include "ggufs/model.h"
#include "split_fixture.h"
#include "test_util.h"

namespace ggufs::test {
namespace {

namespace fs = std::filesystem;

// The node at `path` ("raw/t.weight") of `served`'s tree; fails the test when there is none.
const Node& node_at(const ServedModel& served, const std::string& path) {
  Ino ino = kRootIno;
  for (std::size_t at = 0; at <= path.size();) {
    const std::size_t slash = std::min(path.find('/', at), path.size());
    ino = served.tree.lookup(ino, path.substr(at, slash - at));
    at = slash + 1;
  }
  const Node* n = served.tree.node(ino);
  if (!n) ADD_FAILURE() << "no node " << path;
  static const Node none{};
  return n ? *n : none;
}

// Writes `dir`/m.gguf: one F32 tensor "t.weight" of 8 elements; returns its path.
fs::path write_model(const fs::path& dir) {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_tensor("t.weight", GGML_TYPE_F32, {8}, pattern_bytes(32, 1));
  const fs::path file = dir / "m.gguf";
  g.write_file(file.string());
  return file;
}

TEST(WholeFileFd, ModelGgufOfASingleFileIsThatFile) {
  TempDir tmp;
  const fs::path file = write_model(tmp.path());
  const ServedModel served(open_model(file.string()), TreeOptions{});
  const int fd = served.whole_file_fd(node_at(served, "model.gguf"));
  ASSERT_GE(fd, 0);
  // The descriptor is of the model's file itself.
  struct stat of_fd {
  }, of_path{};
  ASSERT_EQ(::fstat(fd, &of_fd), 0);
  ASSERT_EQ(::stat(file.c_str(), &of_path), 0);
  EXPECT_EQ(of_fd.st_dev, of_path.st_dev);
  EXPECT_EQ(of_fd.st_ino, of_path.st_ino);
}

TEST(WholeFileFd, NoOtherFileIs) {
  TempDir tmp;
  const ServedModel served(open_model(write_model(tmp.path()).string()), TreeOptions{});
  // A byte range of the file, decoded views, a rendered text, another container, a folder.
  for (const char* path : {"raw/t.weight", "f32/t.weight", "npy/t.weight.npy", "gguf.json",
                           "metadata/general.architecture", "model.safetensors", "raw"}) {
    EXPECT_EQ(served.whole_file_fd(node_at(served, path)), -1) << path;
  }
}

TEST(WholeFileFd, SplitModelsAndSourcesWithoutDescriptorsAreNot) {
  TempDir tmp;
  const std::string prefix = write_split(tmp.path(), 2);
  const ServedModel split(open_model(shard_path(prefix, 1, 2)), TreeOptions{});
  EXPECT_EQ(split.whole_file_fd(node_at(split, "model.gguf")), -1);
  // The same single file held in memory: no descriptor to pass through.
  const fs::path file = write_model(tmp.path());
  const ServedModel in_memory(
      open_model(file.string(), {},
                 [](const std::string& path) -> std::unique_ptr<ByteSource> {
                   return std::make_unique<MemorySource>(read_file(path));
                 }),
      TreeOptions{});
  EXPECT_EQ(in_memory.whole_file_fd(node_at(in_memory, "model.gguf")), -1);
}

}  // namespace
}  // namespace ggufs::test
