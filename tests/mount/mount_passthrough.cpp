// FUSE passthrough through a real mount: model.gguf of a single-file model, alone or in a
// library, is opened with its file as the backing file, so the kernel reads it and maps it
// without ggufs; every other file (a split model's model.gguf, raw/) is still served by ggufs.
// And -o direct_io: decoded and whole-model files are served by ggufs around the page cache.
//
// How a test knows which path served a read: the page cache. A read that ggufs serves fills the
// page cache of the file under the mount (ggufs opens files with keep_cache); a passthrough read
// fills the backing file's page cache and leaves the mount's file with none (Linux,
// fs/fuse/passthrough.c and fs/backing-file.c). cachestat(2) (Linux 6.5) counts the pages of an
// open file's own cache.
#define FUSE_USE_VERSION 314
#include <fcntl.h>
#include <fmt/format.h>
#include <fuse3/fuse_lowlevel.h>  // FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION: the libfuse of ggufs
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/model.h"
#include "mount_util.h"
#include "split_fixture.h"

namespace ggufs::test {
namespace {

namespace fs = std::filesystem;

// cachestat(2)'s number: new system calls share one number on every architecture.
#ifdef SYS_cachestat
constexpr long kCachestat = SYS_cachestat;
#else
constexpr long kCachestat = 451;
#endif

// The argument and result of cachestat(2) (include/uapi/linux/mman.h).
struct CachestatRange {
  std::uint64_t off = 0, len = 0;  // len 0: to the end of the file
};
struct Cachestat {
  std::uint64_t nr_cache = 0, nr_dirty = 0, nr_writeback = 0, nr_evicted = 0,
                nr_recently_evicted = 0;
};

// Pages of the page cache of open file `fd` itself; nullopt where Linux has no cachestat.
std::optional<std::uint64_t> cached_pages(int fd) {
  CachestatRange range;
  Cachestat cs;
  if (::syscall(kCachestat, fd, &range, &cs, 0) != 0) return std::nullopt;
  return cs.nr_cache;
}

// The Linux release as major * 100 + minor (6.9 -> 609).
int kernel_release() {
  utsname u{};
  int major = 0, minor = 0;
  if (::uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return 0;
  return major * 100 + minor;
}

// Skips a test of passthrough where ggufs cannot take it: libfuse older than 3.17 at build,
// Linux before 6.9 (no passthrough), or no CAP_SYS_ADMIN (not root).
#define GGUFS_REQUIRE_PASSTHROUGH()                                                       \
  GGUFS_REQUIRE_FUSE();                                                                   \
  if (FUSE_MAJOR_VERSION * 100 + FUSE_MINOR_VERSION < 317)                                \
    GTEST_SKIP() << "libfuse " << FUSE_MAJOR_VERSION << "." << FUSE_MINOR_VERSION         \
                 << " is older than 3.17: ggufs is built without FUSE passthrough";       \
  if (kernel_release() < 609) GTEST_SKIP() << "Linux before 6.9 has no FUSE passthrough"; \
  if (::geteuid() != 0) GTEST_SKIP() << "FUSE passthrough needs CAP_SYS_ADMIN (run as root)"

// An open file, closed by the destructor.
struct Fd {
  int fd;
  explicit Fd(const fs::path& p) : fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// Every byte of open file `fd` from offset 0, read with read(2) in 1 MiB calls.
std::vector<std::uint8_t> read_all(int fd) {
  std::vector<std::uint8_t> out;
  std::vector<std::uint8_t> buf(1 << 20);
  for (std::uint64_t off = 0;;) {
    const ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(off));
    if (n <= 0) {
      EXPECT_EQ(n, 0) << "read failed: " << std::strerror(errno);
      return out;
    }
    out.insert(out.end(), buf.begin(), buf.begin() + n);
    off += static_cast<std::uint64_t>(n);
  }
}

// sha256 of every byte of open file `fd`, read through a shared read-only mapping.
std::string mapped_sha256(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size == 0) return "";
  const std::size_t size = static_cast<std::size_t>(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return std::string("mmap failed: ") + std::strerror(errno);
  const std::string sum = sha256_hex(p, size);
  ::munmap(p, size);
  return sum;
}

// Writes `file`: a model of architecture `arch` with one F32 tensor "big.weight" of 2 Mi
// elements (8 MiB, pattern_bytes with `seed`), so whole reads take many requests.
void write_big_model(const fs::path& file, const std::string& arch, std::uint8_t seed) {
  fs::create_directories(file.parent_path());
  GgufWriter g;
  g.add_string("general.architecture", arch);
  g.add_tensor("big.weight", GGML_TYPE_F32, {2u << 20}, pattern_bytes(8u << 20, seed));
  g.write_file(file.string());
}

// Expects open file `fd` (`what`, under a mount, not read before) to hold the bytes of
// `original` by mmap and by read(2), with both taken in passthrough: none of its pages in its
// own page cache after each.
void expect_passed_through(int fd, const fs::path& original, const std::string& what) {
  const std::string want = sha256_of(original);
  EXPECT_EQ(mapped_sha256(fd), want) << what;
  const std::optional<std::uint64_t> after_map = cached_pages(fd);
  if (!after_map) GTEST_SKIP() << "no cachestat(2) (Linux 6.5): cannot tell who served reads";
  EXPECT_EQ(*after_map, 0u) << what << " was mapped through ggufs, not in passthrough";
  const std::vector<std::uint8_t> got = read_all(fd);
  EXPECT_EQ(got.size(), fs::file_size(original)) << what;
  EXPECT_EQ(sha256_hex(got.data(), got.size()), want) << what;
  EXPECT_EQ(cached_pages(fd).value_or(1), 0u) << what << " was read through ggufs";
}

// The same for a fresh open of `through`.
void expect_passed_through(const fs::path& through, const fs::path& original) {
  const Fd f(through);
  ASSERT_GE(f.fd, 0) << through << ": " << std::strerror(errno);
  expect_passed_through(f.fd, original, through.string());
}

// Expects the reads of open file `fd` (all of it was read) to have been served by ggufs: its
// pages are in its own page cache.
void expect_served_by_ggufs(int fd, const std::string& what) {
  const std::optional<std::uint64_t> pages = cached_pages(fd);
  if (!pages) GTEST_SKIP() << "no cachestat(2) (Linux 6.5): cannot tell who served reads";
  EXPECT_GT(*pages, 0u) << what << " was not served by ggufs";
}

// A single-file model (write_big_model, seed 3), for tests that need passthrough.
class MountPassthroughSingle : public ::testing::Test {
 protected:
  void SetUp() override {
    GGUFS_REQUIRE_PASSTHROUGH();
    write_big_model(file, "llama", 3);
  }
  TempDir dir;
  const fs::path file = dir.path() / "big.gguf";
};

TEST_F(MountPassthroughSingle, ModelGgufIsReadAndMappedByTheKernel) {
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  expect_passed_through(m / "model.gguf", file);
  // The same tensor's bytes under raw/ are a byte range of the file: served by ggufs, which
  // also shows the page-cache test tells the two paths apart on this kernel.
  const Fd raw(m / "raw/big.weight");
  ASSERT_GE(raw.fd, 0);
  const std::vector<std::uint8_t> bytes = read_all(raw.fd);
  EXPECT_EQ(bytes, pattern_bytes(8u << 20, 3));
  expect_served_by_ggufs(raw.fd, "raw/big.weight");
}

// Linux takes one backing file per inode while any open of it is in passthrough: opens beside
// one held open share it (a close among them must not close it), and an open after the last
// close gets one again.
TEST_F(MountPassthroughSingle, OpensAtOnceShareTheBackingFile) {
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  {
    const Fd held(m / "model.gguf");
    ASSERT_GE(held.fd, 0) << std::strerror(errno);
    for (int i = 0; i < 20; ++i) {
      const Fd other(m / "model.gguf");
      ASSERT_GE(other.fd, 0) << "open " << i << ": " << std::strerror(errno);
      char magic[4] = {};
      EXPECT_EQ(::pread(other.fd, magic, 4, 0), 4) << "open " << i << ": " << std::strerror(errno);
      EXPECT_EQ(std::string(magic, 4), "GGUF") << "open " << i;
    }
    expect_passed_through(held.fd, file, "the open held");
  }
  expect_passed_through(m / "model.gguf", file);
}

TEST(MountPassthrough, LibraryModelsArePassedThrough) {
  GGUFS_REQUIRE_PASSTHROUGH();
  TempDir dir;
  // A folder library.
  const fs::path lib = dir.path() / "lib";
  write_big_model(lib / "one.gguf", "one", 7);
  {
    Mount m(lib);
    ASSERT_TRUE(m.mounted()) << m.output();
    expect_passed_through(m / "one/model.gguf", lib / "one.gguf");
  }
  // Ollama's store: the model is a blob named by its sha256, listed by a manifest.
  const fs::path store = dir.path() / "models";
  write_big_model(dir.path() / "blob.tmp", "blob", 9);
  const std::string hex = sha256_of(dir.path() / "blob.tmp");
  fs::create_directories(store / "blobs");
  fs::rename(dir.path() / "blob.tmp", store / "blobs" / ("sha256-" + hex));
  const fs::path manifest = store / "manifests/registry.ollama.ai/library/big/latest";
  fs::create_directories(manifest.parent_path());
  const std::string json =
      fmt::format(R"({{"layers":[{{"mediaType":"application/vnd.ollama.image.model",)"
                  R"("digest":"sha256:{}","size":{}}}]}})",
                  hex, fs::file_size(store / "blobs" / ("sha256-" + hex)));
  write_file(manifest, std::vector<std::uint8_t>(json.begin(), json.end()));
  Mount m(fs::path("ollama:"), "", "env OLLAMA_MODELS=" + quote(store));
  ASSERT_TRUE(m.mounted()) << m.output();
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(m.path())) folders.push_back(e.path());
  ASSERT_EQ(folders.size(), 1u);
  expect_passed_through(folders[0] / "model.gguf", store / "blobs" / ("sha256-" + hex));
}

// The fallback: a split model's model.gguf is a merge, not one file: ggufs serves it, by read
// and by mmap alike. Runs with every libfuse.
TEST(MountPassthrough, SplitModelGgufIsServedByGgufs) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const std::string prefix = write_split(dir.path(), 3);
  Mount m(fs::path(shard_path(prefix, 1, 3)));
  ASSERT_TRUE(m.mounted()) << m.output();
  const Fd f(m / "model.gguf");
  ASSERT_GE(f.fd, 0) << std::strerror(errno);
  const std::vector<std::uint8_t> got = read_all(f.fd);
  ASSERT_GT(got.size(), 4u);
  EXPECT_EQ(std::string(got.begin(), got.begin() + 4), "GGUF");
  // Every tensor's values are in the merge (shard i holds tensors 2i and 2i + 1 of the fixture).
  for (int k = 2; k < 8; ++k) {
    const std::vector<std::uint8_t> t = tensor_bytes(k);
    EXPECT_NE(std::search(got.begin(), got.end(), t.begin(), t.end()), got.end()) << k;
  }
  expect_served_by_ggufs(f.fd, "a split model's model.gguf");
  EXPECT_EQ(mapped_sha256(f.fd), sha256_hex(got.data(), got.size()));
}

// -o direct_io, on ggml's Q4_K conformance file: f32/, npy/ and model.safetensors are read
// around the page cache (none of their pages cached after a whole read), f32/ and npy/ with
// ggml's reference values, and st_blksize says 1 MiB (cat's reads); raw/ keeps the page cache,
// as does f32/ without the option, and model.gguf maps shared as it is. A
// private map works; a shared one where ggufs can ask for FUSE_DIRECT_IO_ALLOW_MMAP (libfuse 3.16
// at build, Linux 6.6), and fails with ENODEV elsewhere (fs/fuse/file.c, fuse_file_mmap).
TEST(MountDirectIo, DecodedFilesSkipThePageCache) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(data);
  const fs::path conf = data / "conformance";
  const auto manifest = read_json(conf / "manifest.json");
  const auto q4_k = std::find_if(manifest["files"].begin(), manifest["files"].end(),
                                 [](const auto& f) { return f["type"] == "Q4_K"; });
  ASSERT_NE(q4_k, manifest["files"].end());
  const auto& tensor = (*q4_k)["tensors"][0];
  const std::string name = tensor["name"];
  const std::vector<std::uint8_t> ref = read_file(conf / tensor["ref"].get<std::string>());
  const fs::path file = conf / (*q4_k)["file"].get<std::string>();

  const Mount buffered(file);
  ASSERT_TRUE(buffered.mounted()) << buffered.output();
  {
    const Fd f(buffered / ("f32/" + name));
    ASSERT_GE(f.fd, 0) << std::strerror(errno);
    EXPECT_EQ(read_all(f.fd), ref);
    struct stat st {};
    ASSERT_EQ(::fstat(f.fd, &st), 0);
    EXPECT_EQ(st.st_blksize, 4096) << "f32/ without -o direct_io";
    expect_served_by_ggufs(f.fd, "f32/ without -o direct_io");
  }

  const Mount m(file, "-o direct_io");
  ASSERT_TRUE(m.mounted()) << m.output();
  // npy/: a header, then the float32 values (ends_with: the header is render.h's own, checked
  // against numpy elsewhere).
  for (const auto& [path, values] :
       {std::pair{"f32/" + name, true}, std::pair{"npy/" + name + ".npy", true},
        std::pair{std::string("model.safetensors"), false}}) {
    const Fd f(m / path);
    ASSERT_GE(f.fd, 0) << path << ": " << std::strerror(errno);
    const std::vector<std::uint8_t> got = read_all(f.fd);
    EXPECT_EQ(got.size(), fs::file_size(m / path)) << path;
    if (values) {
      EXPECT_GE(got.size(), ref.size()) << path;
      EXPECT_TRUE(got.size() >= ref.size() &&
                  std::equal(ref.begin(), ref.end(), got.end() - static_cast<long>(ref.size())))
          << path << " does not end with ggml's values";
    }
    // cat and cp read st_blksize at a time (coreutils' io_blksize): a full request.
    struct stat st {};
    ASSERT_EQ(::fstat(f.fd, &st), 0) << path;
    EXPECT_EQ(st.st_blksize, 1 << 20) << path;
    const std::optional<std::uint64_t> pages = cached_pages(f.fd);
    if (!pages) GTEST_SKIP() << "no cachestat(2) (Linux 6.5): cannot tell who served reads";
    EXPECT_EQ(*pages, 0u) << path << " was read through the page cache";
  }
  {
    const Fd f(m / ("raw/" + name));
    ASSERT_GE(f.fd, 0) << std::strerror(errno);
    EXPECT_EQ(read_all(f.fd).size(), tensor["nbytes"].get<std::size_t>());
    expect_served_by_ggufs(f.fd, "raw/ with -o direct_io");
  }

  {
    // model.gguf is the file's own bytes: not direct I/O, so llama.cpp's shared map works.
    const Fd f(m / "model.gguf");
    ASSERT_GE(f.fd, 0) << std::strerror(errno);
    EXPECT_EQ(mapped_sha256(f.fd), sha256_of(file)) << "model.gguf with -o direct_io";
  }

  const Fd f(m / ("f32/" + name));
  ASSERT_GE(f.fd, 0) << std::strerror(errno);
  for (const int flags : {MAP_PRIVATE, MAP_SHARED}) {
    void* p = ::mmap(nullptr, ref.size(), PROT_READ, flags, f.fd, 0);
#ifdef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
    const bool shared_allowed = kernel_release() >= 606;
#else
    const bool shared_allowed = false;
#endif
    if (flags == MAP_SHARED && !shared_allowed) {
      EXPECT_EQ(p, MAP_FAILED) << "a shared map without FUSE_DIRECT_IO_ALLOW_MMAP";
      EXPECT_EQ(errno, ENODEV);
      if (p != MAP_FAILED) ::munmap(p, ref.size());
      continue;
    }
    ASSERT_NE(p, MAP_FAILED) << (flags == MAP_SHARED ? "shared" : "private")
                             << " map: " << std::strerror(errno);
    EXPECT_EQ(std::memcmp(p, ref.data(), ref.size()), 0)
        << (flags == MAP_SHARED ? "shared" : "private") << " map";
    ::munmap(p, ref.size());
  }
}

}  // namespace
}  // namespace ggufs::test
