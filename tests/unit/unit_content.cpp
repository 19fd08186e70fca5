// The read path without a mount: any byte range of f32/ and npy/ files equals the matching slice
// of ggml's reference output; chunk borders inside large tensors; stored extents.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "ggufs/content.h"
#include "ggufs/decode.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/quantize.h"
#include "ggufs/tree.h"
#include "test_util.h"

namespace ggufs {
namespace {

// Reads [off, off + n) of `node` through the reader.
std::vector<char> read_range(const ContentReader& r, const Node& node, std::uint64_t off,
                             std::size_t n) {
  std::vector<char> out(n);
  out.resize(r.read(node, out.data(), n, off));
  return out;
}

TEST(Content, OddRangesOfEveryConformanceTensorEqualTheReference) {
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto manifest = test::read_json(dir / "conformance" / "manifest.json");
  std::mt19937_64 rng(7);
  int checked = 0;
  for (const auto& mf : manifest["files"]) {
    const std::string path = (dir / "conformance" / mf["file"].get<std::string>()).string();
    const FileSource src(path);
    const GgufFile f = parse_gguf(src, path);
    const Tree tree(f);
    const ContentReader reader(f, src);
    const Ino f32_dir = tree.lookup(kRootIno, "f32"), npy_dir = tree.lookup(kRootIno, "npy");
    for (const auto& mt : mf["tensors"]) {
      const std::string name = mt["name"];
      SCOPED_TRACE(path + " " + name);
      const auto ref = test::read_file(dir / "conformance" / mt["ref"].get<std::string>());
      const Node* f32 = tree.node(tree.lookup(f32_dir, name));
      const Node* npy = tree.node(tree.lookup(npy_dir, name + ".npy"));
      ASSERT_TRUE(f32 && npy);
      ASSERT_EQ(f32->size, ref.size());
      ASSERT_EQ(npy->size, npy->text.size() + ref.size());
      const auto whole = read_range(reader, *f32, 0, ref.size() + 100);  // clipped at st_size
      ASSERT_EQ(whole.size(), ref.size());
      EXPECT_EQ(0, std::memcmp(whole.data(), ref.data(), ref.size()));
      for (int i = 0; i < 50; ++i) {
        const std::uint64_t off = rng() % ref.size();
        const std::size_t n = 1 + rng() % (ref.size() - off);
        const auto got = read_range(reader, *f32, off, n);
        ASSERT_EQ(got.size(), n);
        EXPECT_EQ(0, std::memcmp(got.data(), ref.data() + off, n)) << off << "+" << n;
        // The same range shifted into the .npy file, sometimes starting inside the header.
        const std::uint64_t noff =
            off + npy->text.size() - (i % 2 ? 0 : std::min<std::uint64_t>(off, 7));
        const auto ngot = read_range(reader, *npy, noff, n);
        ASSERT_EQ(ngot.size(), n);
        for (std::size_t k = 0; k < n; ++k) {
          const std::uint64_t at = noff + k;
          const char want =
              at < npy->text.size() ? npy->text[at] : static_cast<char>(ref[at - npy->text.size()]);
          ASSERT_EQ(ngot[k], want) << at;
        }
      }
      EXPECT_TRUE(read_range(reader, *f32, ref.size(), 10).empty());  // at EOF
      ++checked;
    }
  }
  EXPECT_EQ(checked, 35 * 3);
}

// A tensor much larger than one decode chunk: every range, wherever its ends fall relative to
// blocks and chunks, equals the same bytes of one whole-tensor decode.
TEST(Content, RangesAcrossChunkBordersOfALargeTensor) {
  const std::uint64_t n = 256 * 1024;  // 1 MiB of float32 output: four 256 KiB chunks
  std::vector<float> x(n);
  for (std::uint64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)));
  GgufWriter g;
  g.add_tensor("big", GGML_TYPE_Q4_K, {1024, 256}, quantize(GGML_TYPE_Q4_K, x));
  const MemorySource src(g.finish());
  const GgufFile f = parse_gguf(src, "mem");
  const Tree tree(f);
  const ContentReader reader(f, src);
  const Node* node = tree.node(tree.lookup(tree.lookup(kRootIno, "f32"), "big"));
  ASSERT_NE(node, nullptr);

  std::vector<std::uint8_t> raw(*f.tensors[0].n_bytes);
  ASSERT_EQ(src.read_at(f.tensors[0].file_offset, raw.data(), raw.size()), raw.size());
  std::vector<float> whole(n);
  type_traits(GGML_TYPE_Q4_K)->to_float(raw.data(), whole.data(), n / 256);
  const char* expect = reinterpret_cast<const char*>(whole.data());

  const std::uint64_t chunk = 256 * 1024;
  for (std::uint64_t off : {std::uint64_t{0}, chunk - 1, chunk, chunk + 1, 2 * chunk - 3,
                            std::uint64_t{1000 * 4 + 2}}) {
    for (std::size_t len : {std::size_t{1}, std::size_t{5}, std::size_t{1024}, std::size_t{chunk},
                            std::size_t{chunk + 7}, std::size_t{2 * chunk + 1}}) {
      const auto got = read_range(reader, *node, off, len);
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(len, n * 4 - off));
      ASSERT_EQ(got.size(), want);
      EXPECT_EQ(0, std::memcmp(got.data(), expect + off, want)) << off << "+" << len;
    }
  }
}

// A request of at least kStreamingMinBytes (in-process: the mount's replies are at most 1 MiB)
// is decoded with non-temporal stores where the CPU allows: the same bytes as the scalar
// reference decoder, whole and from odd offsets, into aligned and unaligned buffers.
TEST(Content, LargeReadsEqualTheReferenceDecoder) {
  const std::uint64_t rows = kStreamingMinBytes / 4 / 4096 + 3;  // a little over the threshold
  std::mt19937_64 rng(99);
  GgufWriter g;
  std::vector<std::vector<std::uint8_t>> stored;
  for (const std::uint32_t type : {GGML_TYPE_Q8_0, GGML_TYPE_BF16}) {
    const TypeTraits& t = *type_traits(type);
    std::vector<std::uint8_t> bytes(rows * 4096 / t.block_size * t.type_size);
    for (auto& byte : bytes) byte = static_cast<std::uint8_t>(rng());
    // Q8_0 scales: half-precision 2^-7, not a random NaN or infinity.
    if (type == GGML_TYPE_Q8_0) {
      for (std::size_t b = 0; b < bytes.size(); b += t.type_size) bytes[b] = 0, bytes[b + 1] = 0x20;
    }
    g.add_tensor(std::string(t.name), type, {4096, rows}, bytes);
    stored.push_back(std::move(bytes));
  }
  const MemorySource src(g.finish());
  const GgufFile f = parse_gguf(src, "mem");
  const Tree tree(f);
  const ContentReader reader(f, src);
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const TypeTraits& t = *type_traits(f.tensors[i].type);
    SCOPED_TRACE(std::string(t.name));
    std::vector<float> want(rows * 4096);
    t.to_float_ref(stored[i].data(), want.data(), stored[i].size() / t.type_size);
    const char* expect = reinterpret_cast<const char*>(want.data());
    const Node* node = tree.node(tree.lookup(tree.lookup(kRootIno, "f32"), f.tensors[i].name));
    ASSERT_NE(node, nullptr);
    const std::size_t total = want.size() * 4;
    ASSERT_GE(total, kStreamingMinBytes);
    // Offsets 0 and 4 (whole blocks, into buffers at every alignment), 6 (part of a float).
    for (const std::uint64_t off : {0u, 4u, 6u}) {
      for (const std::size_t shift : {0u, 4u, 64u}) {
        const std::size_t len = total - off;
        std::vector<char> buffer(len + 128);
        const auto address = reinterpret_cast<std::uintptr_t>(buffer.data());
        char* const out = buffer.data() + (64 - address % 64) % 64 + shift;
        ASSERT_EQ(reader.read(*node, out, len, off), len);
        EXPECT_EQ(0, std::memcmp(out, expect + off, len)) << "offset " << off << " shift " << shift;
      }
    }
  }
}

}  // namespace
}  // namespace ggufs

namespace ggufs {
namespace {

// A model file opened as the mount opens it: its descriptor, parsed header, tree and reader.
struct OpenedModel {
  explicit OpenedModel(const std::filesystem::path& path)
      : src(path.string()), file(parse_gguf(src, path.string())), tree(file), reader(file, src) {}
  const Node* node(const char* dir, const char* name) const {
    return tree.node(tree.lookup(tree.lookup(kRootIno, dir), name));
  }
  const FileSource src;
  const GgufFile file;
  const Tree tree;
  const ContentReader reader;
};

// The bytes `ext` names, read through its descriptor, after checking that a copying read of
// [off, off + len) of `node` returns exactly them. Adds a failure and returns {} otherwise.
std::vector<std::uint8_t> checked_extent_bytes(const ContentReader& reader, const Node& node,
                                               const ContentReader::Extent& ext, std::uint64_t off,
                                               std::size_t len) {
  SCOPED_TRACE(std::to_string(off) + "+" + std::to_string(len));
  std::vector<std::uint8_t> via_fd(ext.size);
  EXPECT_EQ(::pread(ext.fd, via_fd.data(), via_fd.size(), static_cast<off_t>(ext.offset)),
            static_cast<ssize_t>(via_fd.size()));
  std::vector<char> copied(len);
  const std::size_t got = reader.read(node, copied.data(), len, off);
  EXPECT_EQ(got, ext.size);
  // memcmp must not see the null data() of empty vectors.
  if (got != ext.size || (got > 0 && std::memcmp(via_fd.data(), copied.data(), got) != 0)) {
    ADD_FAILURE() << "the extent's bytes differ from a copying read";
    return {};
  }
  return via_fd;
}

// raw/ reads are spliced from the backing file: the extent must name exactly the bytes a copying
// read returns.
TEST(Content, StoredExtentOfRawNamesTheBytesACopyingReadReturns) {
  test::TempDir dir;
  GgufWriter g;
  std::vector<std::uint8_t> bytes(1000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
  g.add_tensor("pad", GGML_TYPE_I8, {13}, std::vector<std::uint8_t>(13, 1));
  g.add_tensor("t", GGML_TYPE_I8, {1000}, bytes);
  const auto path = dir.path() / "m.gguf";
  g.write_file(path.string());
  const OpenedModel m(path);
  const Node* raw = m.node("raw", "t");
  const Node* f32 = m.node("f32", "t");
  ASSERT_NE(raw, nullptr);
  ASSERT_NE(f32, nullptr);
  EXPECT_FALSE(m.reader.stored_extent(*f32, 10, 0).has_value());  // I8: decoded, not stored
  for (const auto& [off, len] : {std::pair<std::uint64_t, std::size_t>{0, 1000},
                                 {3, 17},
                                 {990, 100},
                                 {999, 1},
                                 {1000, 5},
                                 {5000, 5}}) {
    const auto ext = m.reader.stored_extent(*raw, len, off);
    ASSERT_TRUE(ext.has_value());
    EXPECT_EQ(ext->fd, m.src.fd());
    const std::vector<std::uint8_t> via_fd = checked_extent_bytes(m.reader, *raw, *ext, off, len);
    if (off < 1000) {
      ASSERT_FALSE(via_fd.empty());
      EXPECT_EQ(via_fd[0], bytes[off]);
    }
  }
  // A memory source has no descriptor: reads are copied.
  const MemorySource mem(g.finish());
  const GgufFile fm = parse_gguf(mem, "mem");
  const ContentReader mem_reader(fm, mem);
  EXPECT_FALSE(mem_reader.stored_extent(*raw, 10, 0).has_value());
}

// The float32 data of an F32 tensor is its stored bytes: f32/ reads, and npy/ reads past the
// header, are spliced too, and the extent names exactly what a copying read returns. Not the
// .npy header, not another type, not a big-endian file.
TEST(Content, StoredExtentOfF32DataNamesTheBytesACopyingReadReturns) {
  test::TempDir dir;
  std::vector<float> values(300);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.25f * static_cast<float>(i) - 7;
  std::vector<std::uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  for (const bool big_endian : {false, true}) {
    SCOPED_TRACE(big_endian ? "big-endian" : "little-endian");
    GgufWriter g;
    g.set_format(3, big_endian);
    g.add_tensor("w", GGML_TYPE_F32, {30, 10}, bytes);
    const auto path = dir.path() / (big_endian ? "be.gguf" : "le.gguf");
    g.write_file(path.string());
    const OpenedModel m(path);
    const ContentReader& reader = m.reader;
    const Node* f32 = m.node("f32", "w");
    const Node* npy = m.node("npy", "w.npy");
    ASSERT_NE(f32, nullptr);
    ASSERT_NE(npy, nullptr);
    const std::uint64_t header = npy->text.size();
    ASSERT_GT(header, 0u);
    EXPECT_FALSE(reader.stored_extent(*npy, 10, 0).has_value());  // the header is not stored
    EXPECT_FALSE(reader.stored_extent(*npy, 10, header - 1).has_value());
    for (const auto& [node, base] : {std::pair{f32, std::uint64_t{0}}, std::pair{npy, header}}) {
      for (const auto& [off, len] :
           {std::pair<std::uint64_t, std::size_t>{0, 1200}, {3, 17}, {1190, 100}, {1200, 5}}) {
        const auto ext = reader.stored_extent(*node, len, base + off);
        if (big_endian) {
          EXPECT_FALSE(ext.has_value());  // swapped when decoded: not the stored bytes
          continue;
        }
        ASSERT_TRUE(ext.has_value()) << off;
        const std::vector<std::uint8_t> via_fd =
            checked_extent_bytes(reader, *node, *ext, base + off, len);
        ASSERT_EQ(via_fd.size(), ext->size) << off << "+" << len;
        if (!via_fd.empty()) {
          EXPECT_EQ(0, std::memcmp(via_fd.data(), bytes.data() + off, via_fd.size()))
              << off << "+" << len;
        }
      }
    }
  }
}

// Plain-type tensors of a big-endian file are swapped to host order in f32/ (raw/ stays as
// stored); quantized blocks there get no f32/ file (the GGUF specification, ggml docs/gguf.md:
// every element big-endian).
TEST(Content, BigEndianPlainTensorsAreDecodedInHostOrder) {
  GgufWriter g;
  g.set_format(3, /*big_endian=*/true);
  // Stored bytes, big-endian, written out by hand; the float32 values they encode.
  struct Case {
    const char* name;
    std::uint32_t type;
    std::vector<std::uint8_t> bytes;
    std::vector<float> want;
  };
  const std::vector<Case> cases = {
      {"f32", GGML_TYPE_F32, {0x3f, 0xc0, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00}, {1.5f, -2.0f}},
      {"f16", GGML_TYPE_F16, {0x3c, 0x00, 0xc5, 0x00}, {1.0f, -5.0f}},  // 0x3c00 = 1, 0xc500 = -5
      {"bf16", GGML_TYPE_BF16, {0x3f, 0x80, 0x40, 0x49}, {1.0f, 3.140625f}},
      {"f64", GGML_TYPE_F64, {0x40, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, {3.125f}},
      {"i8", GGML_TYPE_I8, {0xff, 0x05}, {-1.0f, 5.0f}},
      {"i16", GGML_TYPE_I16, {0x01, 0x00, 0xff, 0xfe}, {256.0f, -2.0f}},
      {"i32", GGML_TYPE_I32, {0x00, 0x01, 0x00, 0x00}, {65536.0f}},
      {"i64", GGML_TYPE_I64, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfd}, {-3.0f}},
  };
  for (const Case& c : cases) g.add_tensor(c.name, c.type, {c.want.size()}, c.bytes);
  g.add_tensor("q8_0", GGML_TYPE_Q8_0, {32}, std::vector<std::uint8_t>(34, 0));
  const auto bytes = g.finish();
  const MemorySource src(bytes);
  const GgufFile f = parse_gguf(src, "be.gguf");
  ASSERT_TRUE(f.big_endian);
  const Tree tree(f);
  const ContentReader reader(f, src);
  const Ino f32_dir = tree.lookup(kRootIno, "f32"), raw_dir = tree.lookup(kRootIno, "raw");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Node* node = tree.node(tree.lookup(f32_dir, c.name));
    ASSERT_NE(node, nullptr);
    const auto got = read_range(reader, *node, 0, c.want.size() * 4);
    ASSERT_EQ(got.size(), c.want.size() * 4);
    std::vector<float> values(c.want.size());
    std::memcpy(values.data(), got.data(), got.size());
    EXPECT_EQ(values, c.want);
    const Node* raw = tree.node(tree.lookup(raw_dir, c.name));
    ASSERT_NE(raw, nullptr);
    const auto stored = read_range(reader, *raw, 0, c.bytes.size());
    EXPECT_EQ(std::vector<std::uint8_t>(stored.begin(), stored.end()), c.bytes);
  }
  EXPECT_EQ(tree.lookup(f32_dir, "q8_0"), 0u);
  EXPECT_NE(tree.lookup(raw_dir, "q8_0"), 0u);
}

}  // namespace
}  // namespace ggufs

namespace ggufs {
namespace {

// f16/ as NumPy's astype(float16) makes it, edge cases included. Expected halves are what
// NumPy 1.24 gives for these float32 bits (np.array(bits, np.uint32).view(np.float32)
// .astype(np.float16).view(np.uint16)): rounding to nearest even, overflow to inf, subnormals,
// and NaNs that keep their payload instead of being quieted.
TEST(Content, F16IsNumpysFloat16AtEveryOffset) {
  const std::vector<std::pair<std::uint32_t, std::uint16_t>> cases = {
      {0x3f800000, 0x3c00},  // 1
      {0x3f801000, 0x3c00},  // 1 + 2^-11: a tie, to even
      {0x3f803000, 0x3c02},  // 1 + 3 × 2^-11: a tie, to even (up)
      {0x477ff000, 0x7c00},  // 65520: rounds to inf
      {0x477fefff, 0x7bff},  // just below: 65504
      {0x33000000, 0x0000},  // 2^-25, half the smallest subnormal: a tie, to even (0)
      {0x33000001, 0x0001},  // just above: the smallest subnormal, 2^-24
      {0x33800000, 0x0001},  // 2^-24
      {0xc0000000, 0xc000},  // -2
      {0x7f800000, 0x7c00},  // inf
      {0x7f802000, 0x7c01},  // a signalling NaN keeps its payload
      {0x7f800001, 0x7c01},  // its payload below half precision: still a NaN
      {0xffc00000, 0xfe00},  // -NaN (quiet)
  };
  // Three times over, so that every case, NaNs included, also falls in the middle of a group of
  // eight that the F16C conversion takes at once (floats_to_halves_as_numpy).
  std::vector<std::pair<std::uint32_t, std::uint16_t>> elements;
  for (int copy = 0; copy < 3; ++copy) elements.insert(elements.end(), cases.begin(), cases.end());
  std::vector<std::uint8_t> bytes;
  for (const auto& [bits, half] : elements) {
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  }
  GgufWriter g;
  g.add_tensor("t", GGML_TYPE_F32, {elements.size()}, bytes);
  const MemorySource src(g.finish());
  const GgufFile f = parse_gguf(src, "mem");
  const Tree tree(f);
  const ContentReader reader(f, src);
  const Node* node = tree.node(tree.lookup(tree.lookup(kRootIno, "f16"), "t"));
  ASSERT_NE(node, nullptr);
  ASSERT_EQ(node->size, elements.size() * 2);
  std::vector<std::uint8_t> want;
  for (const auto& [bits, half] : elements) {
    want.push_back(static_cast<std::uint8_t>(half));
    want.push_back(static_cast<std::uint8_t>(half >> 8));
  }
  // Every sub-range, odd starts and ends inside an element included.
  for (std::size_t off = 0; off < want.size(); ++off) {
    for (std::size_t n = 1; off + n <= want.size() + 2; ++n) {
      const auto got = read_range(reader, *node, off, n);
      const std::size_t expect = std::min(n, want.size() - off);
      ASSERT_EQ(got.size(), expect) << off << "+" << n;
      ASSERT_EQ(0, std::memcmp(got.data(), want.data() + off, expect)) << off << "+" << n;
    }
  }
}

}  // namespace
}  // namespace ggufs
