// Mount tests of how ggufs fits other tools: extended attributes (getfattr, getxattr(2)).
#include <gtest/gtest.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

constexpr std::uint32_t kF32 = 0, kQ4_K = 12;  // ggml type ids (ggml-types.md, type table)

// getxattr(2) of `name` on `path`, or "<errno text>" when it fails.
std::string xattr(const std::filesystem::path& path, const char* name) {
  char buf[4096];
  const ssize_t n = ::getxattr(path.c_str(), name, buf, sizeof buf);
  if (n < 0) return "<" + std::string(std::strerror(errno)) + ">";
  return std::string(buf, static_cast<std::size_t>(n));
}

// `n` bytes at byte `offset` of `file`.
std::string file_bytes(const std::filesystem::path& file, std::uint64_t offset, std::size_t n) {
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::string out(n, '\0');
  in.read(out.data(), static_cast<std::streamsize>(n));
  return in ? out : std::string();
}

TEST(MountXattrs, TensorFilesCarryTypeShapeOffsetAndFile) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  std::vector<std::uint8_t> q4k(2 * 3 * 144);  // ne {512, 3}: 2 super-blocks per row
  for (std::size_t i = 0; i < q4k.size(); ++i) q4k[i] = static_cast<std::uint8_t>(i * 7 + 1);
  q4k[0] = q4k[1] = 0;  // d = +0 (F16): every value is finite
  g.add_tensor("first", kF32, {4}, std::vector<std::uint8_t>(16, 0x3f));
  g.add_tensor("blk.0.w", kQ4_K, {512, 3}, q4k);
  const auto file = dir.path() / "x.gguf";
  g.write_file(file.string());
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();

  for (const char* f : {"raw/blk.0.w", "f32/blk.0.w", "npy/blk.0.w.npy"}) {
    SCOPED_TRACE(f);
    EXPECT_EQ(xattr(m / f, "user.ggml.type"), "Q4_K");
    EXPECT_EQ(xattr(m / f, "user.ggml.ne"), "512,3");
    EXPECT_EQ(xattr(m / f, "user.ggml.shape"), "3,512");
    EXPECT_EQ(xattr(m / f, "user.gguf.file"), std::filesystem::canonical(file).string());
    EXPECT_EQ(xattr(m / f, "user.no.such"), "<" + std::string(std::strerror(ENODATA)) + ">");
  }
  // The offset is where the tensor's bytes really are in the file.
  const std::string offset = xattr(m / "raw/blk.0.w", "user.gguf.offset");
  ASSERT_FALSE(offset.empty());
  ASSERT_TRUE(std::all_of(offset.begin(), offset.end(), ::isdigit)) << offset;
  EXPECT_EQ(file_bytes(file, std::stoull(offset), q4k.size()), std::string(q4k.begin(), q4k.end()));
  EXPECT_EQ(xattr(m / "raw/first", "user.ggml.ne"), "4");

  // The list, and the size protocol of listxattr(2)/getxattr(2).
  const auto raw = m / "raw/blk.0.w";
  const ssize_t list_size = ::listxattr(raw.c_str(), nullptr, 0);
  ASSERT_GT(list_size, 0);
  std::string names(static_cast<std::size_t>(list_size), '\0');
  ASSERT_EQ(::listxattr(raw.c_str(), names.data(), names.size()), list_size);
  EXPECT_EQ(names, std::string("user.ggml.type\0user.ggml.ne\0user.ggml.shape\0user.gguf.offset\0"
                               "user.gguf.file\0",
                               76));
  EXPECT_EQ(::getxattr(raw.c_str(), "user.ggml.type", nullptr, 0), 4);
  char small[2];
  EXPECT_EQ(::getxattr(raw.c_str(), "user.ggml.type", small, sizeof small), -1);
  EXPECT_EQ(errno, ERANGE);

  // Directories and text files have none; the mount is read-only.
  EXPECT_EQ(::listxattr((m / "metadata").c_str(), nullptr, 0), 0);
  EXPECT_EQ(::listxattr((m / "gguf.json").c_str(), nullptr, 0), 0);
  EXPECT_EQ(::setxattr(raw.c_str(), "user.x", "1", 1, 0), -1);

  // getfattr, as the README shows it.
  const RunResult r = run("getfattr -d --absolute-names " + quote(m / "f32/blk.0.w") + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("user.ggml.type=\"Q4_K\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("user.ggml.shape=\"3,512\""), std::string::npos) << r.output;
}

// A model with a string, an integer, a float and a long string array, and two tensors.
std::filesystem::path write_info_model(const std::filesystem::path& dir) {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add("llama.block_count", Value{ValueType::kUint32, std::uint64_t{3}});
  g.add("x.eps", Value{ValueType::kFloat32, 0.5f});
  Array tokens(ValueType::kString);
  for (const char* t : {"<unk>", "<s>", "</s>", "a\tb", "c", "d", "e"}) tokens.push_string(t);
  g.add("tokenizer.ggml.tokens", Value{ValueType::kArray, tokens});
  g.add_tensor("first", kF32, {4}, std::vector<std::uint8_t>(16, 0));
  g.add_tensor("blk.0.w", kQ4_K, {512, 3}, std::vector<std::uint8_t>(2 * 3 * 144, 0));
  const auto file = dir / "info.gguf";
  g.write_file(file.string());
  return file;
}

TEST(Info, PrintsHeaderMetadataTensorsAndBitsPerWeight) {
  TempDir dir;
  const auto file = write_info_model(dir.path());
  const RunResult r = run(std::string(GGUFS_BINARY) + " --info " + quote(file) + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string& out = r.output;
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
  // The tensor line: type, ne, elements, bytes (6 super-blocks of 144 bytes, ggml-types.md §4
  // Q4_K), offset, name.
  EXPECT_TRUE(std::regex_search(
      out, std::regex(R"(Q4_K +\| 512 x 3 +\| +1536 \| +864 \| +[0-9]+ \| blk\.0\.w\n)")))
      << out;
  // Bits per weight: Q4_K 144 × 8 / 256 = 4.5; F32 32; total (16 + 864) × 8 / (4 + 1536).
  has("4.5000");
  has("32.0000");
  has("4.5714");
}

TEST(Info, JsonIsTheMountsGgufJson) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_info_model(dir.path());
  const RunResult r = run(std::string(GGUFS_BINARY) + " --json " + quote(file));
  ASSERT_EQ(r.exit_code, 0);
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(r.output, read_text(m / "gguf.json") + "\n");
}

TEST(Info, BadFilesAndUsage) {
  TempDir dir;
  const auto bad = dir.path() / "bad.gguf";
  std::ofstream(bad) << "GGUF\x03\x00\x00\x00 too short for counts";
  RunResult r = run(std::string(GGUFS_BINARY) + " --info " + quote(bad) + " 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("at byte"), std::string::npos) << r.output;
  r = run(std::string(GGUFS_BINARY) + " --json " + quote(dir.path() / "missing.gguf") + " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run(std::string(GGUFS_BINARY) + " --info 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = run(std::string(GGUFS_BINARY) + " --info " + quote(bad) + " /mnt 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

}  // namespace
}  // namespace ggufs::test
