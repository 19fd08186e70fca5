// Concurrency stress through real mounts: 16 threads read random ranges of raw/, f32/ and npy/
// files of many types for GGUFS_STRESS_SECONDS (default 20) seconds, with pread and with mmap,
// dropping the page cache as they go so that the daemon keeps serving, and check every byte.
//   - always: a file written by our writer (quantized and random-byte tensors of 16 types), the
//     expected bytes coming from an in-process ContentReader over the same file;
//   - with the shared test data: ggml's conformance files, expected f32/ bytes from their ref/
//     outputs and raw/ bytes from the manifest's offsets.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <thread>

#include "ggufs/byte_source.h"
#include "ggufs/content.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/quantize.h"
#include "ggufs/render.h"
#include "ggufs/tree.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

constexpr int kThreads = 16;

int stress_seconds() {
  const char* env = std::getenv("GGUFS_STRESS_SECONDS");
  const int s = env ? std::atoi(env) : 0;
  return s > 0 ? s : 20;
}

/// A file under a mount and the bytes it must hold.
struct Expected {
  std::filesystem::path path;
  std::vector<char> bytes;
};

class Stress {
 public:
  /// `map_flags`: how the mapping threads map files (MAP_SHARED, as numpy and safetensors do).
  explicit Stress(const std::vector<Expected>& files, int map_flags = MAP_SHARED)
      : files_(files), map_flags_(map_flags) {}

  void run(int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([this, t, deadline] { reader(t, deadline); });
    }
    for (auto& th : threads) th.join();
  }
  const std::string& failure() const { return failure_; }
  std::uint64_t reads() const { return reads_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t mmaps() const { return mmaps_; }

 private:
  void fail(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure_.empty()) failure_ = what;
    stop_ = true;
  }

  // pread of [off, off + len) of file `f` through `fd`, compared with the expectation.
  void check_pread(int fd, const Expected& f, std::uint64_t off, std::size_t len) {
    std::vector<char> buf(len);
    std::size_t got = 0;
    while (got < len) {
      const ssize_t r = ::pread(fd, buf.data() + got, len - got, static_cast<off_t>(off + got));
      if (r < 0) return fail(f.path.string() + ": pread: " + std::strerror(errno));
      if (r == 0) break;
      got += static_cast<std::size_t>(r);
    }
    const std::size_t want =
        off >= f.bytes.size() ? 0 : std::min<std::size_t>(len, f.bytes.size() - off);
    if (got != want || (got && std::memcmp(buf.data(), f.bytes.data() + off, got) != 0)) {
      return fail(f.path.string() + ": pread of " + std::to_string(len) + " at " +
                  std::to_string(off) + " differs (" + std::to_string(got) + " bytes read)");
    }
    ++reads_;
    bytes_ += got;
  }

  void check_mmap(const Expected& f, std::mt19937_64& rng) {
    if (f.bytes.empty()) return;
    const int fd = ::open(f.path.c_str(), O_RDONLY);
    if (fd < 0) return fail(f.path.string() + ": open: " + std::strerror(errno));
    void* p = ::mmap(nullptr, f.bytes.size(), PROT_READ, map_flags_, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return fail(f.path.string() + ": mmap: " + std::strerror(errno));
    }
    const char* m = static_cast<const char*>(p);
    for (int i = 0; i < 8; ++i) {
      const std::size_t off = rng() % f.bytes.size();
      const std::size_t len = std::min<std::size_t>(1 + rng() % 65536, f.bytes.size() - off);
      if (std::memcmp(m + off, f.bytes.data() + off, len) != 0) {
        fail(f.path.string() + ": mmap range at " + std::to_string(off) + " differs");
        break;
      }
      bytes_ += len;
    }
    ::munmap(p, f.bytes.size());
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    ++mmaps_;
  }

  void reader(int t, std::chrono::steady_clock::time_point deadline) {
    std::mt19937_64 rng(0x5eed + t);
    // Every byte of every file once: file i is read whole, in random pieces, by thread i % 16.
    for (std::size_t i = t; i < files_.size() && !stop_; i += kThreads) {
      const Expected& f = files_[i];
      const int fd = ::open(f.path.c_str(), O_RDONLY);
      if (fd < 0) return fail(f.path.string() + ": open: " + std::strerror(errno));
      for (std::uint64_t off = 0; off <= f.bytes.size() && !stop_;) {
        const std::size_t len = 1 + rng() % 200000;
        check_pread(fd, f, off, len);
        off += len;
      }
      ::close(fd);
    }
    // Then random ranges of random files until the deadline; every fourth thread maps files.
    int fd = -1;
    const Expected* open_file = nullptr;
    for (std::uint64_t op = 0; !stop_ && std::chrono::steady_clock::now() < deadline; ++op) {
      const Expected& f = files_[rng() % files_.size()];
      if (t % 4 == 3) {
        check_mmap(f, rng);
        continue;
      }
      if (open_file != &f) {
        if (fd >= 0) ::close(fd);
        fd = ::open(f.path.c_str(), O_RDONLY);
        if (fd < 0) return fail(f.path.string() + ": open: " + std::strerror(errno));
        open_file = &f;
      }
      const std::uint64_t size = f.bytes.size();
      const std::uint64_t off = rng() % (size + 16);  // sometimes past the end
      const int kind = static_cast<int>(rng() % 10);
      const std::size_t len = 1 + rng() % (kind < 3 ? 16 : kind < 6 ? 4096 : 1 << 20);
      check_pread(fd, f, off, len);
      // Drop the file's pages now and then, so that the daemon keeps serving the reads.
      if (op % 4 == 0) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    }
    if (fd >= 0) ::close(fd);
  }

  const std::vector<Expected>& files_;
  const int map_flags_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> reads_{0}, bytes_{0}, mmaps_{0};
  std::mutex mu_;
  std::string failure_;
};

void run_stress(const std::vector<Expected>& files, int map_flags = MAP_SHARED) {
  ASSERT_FALSE(files.empty());
  Stress s(files, map_flags);
  const int seconds = stress_seconds();
  s.run(seconds);
  EXPECT_EQ(s.failure(), "");
  std::cout << kThreads << " threads, " << seconds << " s, " << files.size()
            << " files: " << s.reads() << " preads and " << s.mmaps() << " mmaps checked "
            << s.bytes() << " bytes\n";
  EXPECT_GT(s.reads(), files.size());
  EXPECT_GT(s.mmaps(), 0u);
}

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

TEST(MountStress, SixteenReadersOnOurWritersFile) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  GgufWriter g;
  g.add_string("general.architecture", "stress");
  std::vector<float> x(4096 * 64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.001f * static_cast<float>(i)) * 3;
  // Quantized by our quantizers, 1 MiB of float32 each (several 256 KiB decode chunks), odd
  // shapes for some.
  for (const GgmlType type : {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0,
                              GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K}) {
    const TypeTraits& tr = *type_traits(type);
    g.add_tensor(fmt::format("q.{}", tr.name), type, {4096, 64}, quantize(type, x));
  }
  g.add_tensor("q.odd", GGML_TYPE_Q8_0, {96, 7, 3},
               quantize(GGML_TYPE_Q8_0, std::span<const float>(x).first(96 * 21)));
  // Random bytes for the other families (any bytes decode; the expectation is ggufs's own).
  std::uint64_t seed = 1;
  for (const GgmlType type :
       {GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q5_K, GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ1_S,
        GGML_TYPE_IQ3_S, GGML_TYPE_IQ4_XS, GGML_TYPE_IQ1_M, GGML_TYPE_TQ1_0, GGML_TYPE_MXFP4,
        GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_F64}) {
    const TypeTraits& tr = *type_traits(type);
    const std::uint64_t ne0 = tr.block_size * (type == GGML_TYPE_F64 ? 4096ull : 16ull);
    g.add_tensor(fmt::format("r.{}", tr.name), type, {ne0, 33},
                 random_bytes(ne0 / tr.block_size * tr.type_size * 33, seed++));
  }
  const auto file = dir.path() / "stress.gguf";
  g.write_file(file.string());

  // The expectation: every file of every view (raw/, f32/, npy/, f16/) read whole in-process.
  const FileSource src(file.string());
  const GgufFile f = parse_gguf(src, file.string());
  const Tree tree(f);
  const ContentReader reader(f, src);
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  std::vector<Expected> files;
  for (const std::string& d : view_folders()) {
    const Node& dn = *tree.node(tree.lookup(kRootIno, d));
    for (Ino ino : dn.children) {
      const Node& n = *tree.node(ino);
      Expected e{m / (std::string(d) + "/" + n.name), std::vector<char>(n.size)};
      ASSERT_EQ(reader.read(n, e.bytes.data(), e.bytes.size(), 0), n.size);
      files.push_back(std::move(e));
    }
  }
  EXPECT_EQ(files.size(), std::size(kTensorViews) * 21);  // every view of 21 tensors
  run_stress(files);
}

// Mounts (with `options`) 13 of ggml's conformance files under `conf`, and lists their raw/,
// f32/ and npy/ files with the bytes each must hold: raw/ the manifest's range of the file,
// f32/ ggml's reference output, npy/ a header and that output.
void add_conformance_files(const std::filesystem::path& conf, const std::string& options,
                           std::vector<std::unique_ptr<Mount>>& mounts,
                           std::vector<Expected>& files) {
  const auto manifest = read_json(conf / "manifest.json");
  for (const auto& mf : manifest["files"]) {
    const std::string type = mf["type"];
    if (type != "F16" && type != "Q4_0" && type != "Q5_1" && type != "Q3_K" && type != "Q4_K" &&
        type != "Q6_K" && type != "IQ2_XXS" && type != "IQ3_S" && type != "IQ4_XS" &&
        type != "BF16" && type != "TQ1_0" && type != "MXFP4" && type != "Q1_0") {
      continue;
    }
    const auto gguf = read_file(conf / mf["file"].get<std::string>());
    mounts.push_back(std::make_unique<Mount>(conf / mf["file"].get<std::string>(), options));
    const Mount& m = *mounts.back();
    ASSERT_TRUE(m.mounted()) << m.output();
    for (const auto& mt : mf["tensors"]) {
      const std::string name = mt["name"];
      const auto off = mt["file_offset"].get<std::size_t>();
      const auto n = mt["nbytes"].get<std::size_t>();
      ASSERT_LE(off + n, gguf.size());
      files.push_back(
          {m / ("raw/" + name), std::vector<char>(gguf.begin() + off, gguf.begin() + off + n)});
      const auto ref = read_file(conf / mt["ref"].get<std::string>());
      files.push_back({m / ("f32/" + name), std::vector<char>(ref.begin(), ref.end())});
      std::vector<std::uint64_t> shape = mt["ne"].get<std::vector<std::uint64_t>>();
      std::reverse(shape.begin(), shape.end());
      const std::string header = npy_header(shape);
      std::vector<char> npy(header.begin(), header.end());
      npy.insert(npy.end(), ref.begin(), ref.end());
      files.push_back({m / ("npy/" + name + ".npy"), std::move(npy)});
    }
  }
  EXPECT_EQ(mounts.size(), 13u);
}

// The stress of the conformance files mounted with `options`, the mapping threads mapping with
// `map_flags`.
void stress_conformance_files(const std::filesystem::path& data, const std::string& options,
                              int map_flags) {
  std::vector<std::unique_ptr<Mount>> mounts;
  std::vector<Expected> files;
  add_conformance_files(data / "conformance", options, mounts, files);
  if (::testing::Test::HasFatalFailure()) return;
  run_stress(files, map_flags);
}

TEST(MountStress, SixteenReadersOnTheConformanceFiles) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  stress_conformance_files(dir, "", MAP_SHARED);
}

// The same with -o direct_io: f32/ and npy/ reads go around the page cache, each a request of
// its own, so 16 readers keep the daemon's threads answering at once. Private maps (a shared one
// of a direct-I/O file needs FUSE_DIRECT_IO_ALLOW_MMAP, which libfuse 3.14 cannot ask for).
TEST(MountStress, SixteenReadersWithDirectIo) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  stress_conformance_files(dir, "-o direct_io", MAP_PRIVATE);
}

}  // namespace
}  // namespace ggufs::test
