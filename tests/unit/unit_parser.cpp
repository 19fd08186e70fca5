// Parser tests: valid files built with our writer, and malformed files crafted byte by byte,
// each refused with its specific message and the byte offset of the faulty field.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "gguf_bytes.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "test_util.h"

namespace ggufs {
namespace {

using Bytes = std::vector<std::uint8_t>;
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

GgufFile parse(const Bytes& b) { return parse_gguf(MemorySource(b), "t.gguf"); }

// Expects parse to throw a ParseError at `offset` whose problem contains `text`.
void expect_error(const Bytes& b, std::uint64_t offset, const std::string& text) {
  try {
    parse(b);
    ADD_FAILURE() << "accepted; expected an error containing '" << text << "'";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.offset(), offset) << e.what();
    EXPECT_NE(e.problem().find(text), std::string::npos) << e.what();
    EXPECT_EQ(e.file(), "t.gguf");
  }
}

ByteWriter header(std::uint64_t n_tensors, std::uint64_t n_kv, std::uint32_t version = 3) {
  return test::gguf_header(n_tensors, n_kv, version);
}
using test::tensor_info;

// Pads to the data section and appends `data_bytes` zero bytes.
Bytes with_data(ByteWriter w, std::size_t data_bytes, std::uint64_t alignment = 32) {
  w.pad_to(alignment);
  w.data().resize(w.data().size() + data_bytes);
  return w.data();
}

Bytes valid_file() {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_u32("llama.block_count", 1);
  g.add("test.arr", Value{ValueType::kArray, Array{ValueType::kString,
                                                   {Value{ValueType::kString, std::string("a")},
                                                    Value{ValueType::kString, std::string("")}}}});
  g.add_tensor("f32", GGML_TYPE_F32, {4, 2}, Bytes(32, 0));
  g.add_tensor("q8", GGML_TYPE_Q8_0, {32}, Bytes(34, 0));
  return g.finish();
}

TEST(Parser, ValidFileFromOurWriter) {
  const GgufFile f = parse(valid_file());
  EXPECT_EQ(f.version, 3u);
  ASSERT_EQ(f.kv.size(), 3u);
  EXPECT_EQ(f.kv[0].key, "general.architecture");
  EXPECT_EQ(std::get<std::string>(f.kv[0].value.data), "llama");
  EXPECT_EQ(std::get<Array>(f.kv[2].value.data).size(), 2u);
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors[0].n_elements, 8u);
  EXPECT_EQ(f.tensors[0].n_bytes, 32u);
  EXPECT_EQ(f.tensors[1].n_bytes, 34u);
  EXPECT_EQ(f.data_offset % 32, 0u);
  EXPECT_EQ(f.tensors[1].file_offset, f.data_offset + f.tensors[1].offset);
  EXPECT_EQ(f.tensors[1].offset % 32, 0u);
}

TEST(Parser, EveryTruncationIsRefusedCleanly) {
  const Bytes full = valid_file();
  for (std::size_t len = 0; len < full.size(); ++len) {
    const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    try {
      parse(cut);
      ADD_FAILURE() << "truncation to " << len << " bytes accepted";
    } catch (const ParseError& e) {
      EXPECT_LE(e.offset(), len) << e.what();
    }
  }
}

TEST(Parser, Magic) {
  Bytes b = valid_file();
  b[0] = 'X';
  expect_error(b, 0, "not a GGUF file: magic is 58 47 55 46");
  expect_error(Bytes{'G', 'G', 'U', 'F'}, 0, "too short for a GGUF header");
}

TEST(Parser, Versions) {
  expect_error(with_data(header(0, 0, 0), 0), 4, "unsupported GGUF version 0");
  expect_error(with_data(header(0, 0, 4), 0), 4, "unsupported GGUF version 4");
  expect_error(with_data(header(0, 0, 0x04000000), 0), 4, "unsupported GGUF version 4");
  EXPECT_EQ(parse(with_data(header(0, 0, 2), 0)).version, 2u);
}

TEST(Parser, Version1AndBigEndianHeaders) {
  // Version 1: uint32 counts (the GGUF specification, ggml docs/gguf.md). tensor_count 0, kv_count
  // 1, key "k" (uint32 length), uint8 value 7.
  ByteWriter v1(/*big_endian=*/false, /*version=*/1);
  v1.bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>("GGUF"), 4));
  v1.u32(1);
  v1.u32(0);
  v1.u32(1);
  v1.u32(1);
  v1.u8('k');
  v1.u32(0);
  v1.u8(7);
  v1.pad_to(32);
  GgufFile f = parse(v1.data());
  EXPECT_EQ(f.version, 1u);
  EXPECT_FALSE(f.big_endian);
  ASSERT_EQ(f.kv.size(), 1u);
  EXPECT_EQ(f.kv[0].key, "k");
  EXPECT_EQ(std::get<std::uint64_t>(f.kv[0].value.data), 7u);
  // Big-endian: the version reads 0x03000000 little-endian; every number is swapped.
  ByteWriter be(/*big_endian=*/true, /*version=*/3);
  be.bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>("GGUF"), 4));
  be.u32(3);
  be.u64(0);
  be.u64(1);
  be.str("k");
  be.u32(4);  // uint32
  be.u32(0x01020304);
  be.pad_to(32);
  EXPECT_EQ(be.data()[7], 3);  // the version's low byte comes last
  f = parse(be.data());
  EXPECT_EQ(f.version, 3u);
  EXPECT_TRUE(f.big_endian);
  EXPECT_EQ(std::get<std::uint64_t>(f.kv[0].value.data), 0x01020304u);
}

TEST(Parser, CountsNear2To64AreRefusedBeforeAllocating) {
  expect_error(with_data(header(kU64Max, 0), 0), 8,
               "tensor_count 18446744073709551615 is negative");
  expect_error(with_data(header(1ull << 62, 0), 0), 8, "cannot fit");
  expect_error(with_data(header(0, kU64Max), 0), 16,
               "metadata_kv_count 18446744073709551615 is negative");
  expect_error(with_data(header(0, 1ull << 40), 0), 16, "cannot fit");
  ByteWriter w = header(0, 1);
  w.u64(kU64Max - 1);  // key length
  w.u64(0);
  w.u64(0);
  expect_error(w.data(), 24, "string length 18446744073709551614 exceeds");
}

TEST(Parser, ValueTypes) {
  ByteWriter w = header(0, 1);
  w.str("k");
  w.u32(13);
  w.u8(0);
  expect_error(w.data(), 33, "invalid value type of key 'k' 13");

  ByteWriter a = header(0, 1);
  a.str("k");
  a.u32(9);
  a.u32(13);
  a.u64(0);
  expect_error(a.data(), 37, "invalid array element type 13");

  ByteWriter n = header(0, 1);
  n.str("k");
  n.u32(9);
  n.u32(10);          // uint64 elements
  n.u64(1ull << 61);  // far more than the file holds
  expect_error(n.data(), 41, "array length 2305843009213693952 cannot fit");

  ByteWriter b = header(0, 1);
  b.str("k");
  b.u32(7);
  b.u8(2);
  expect_error(b.data(), 37, "invalid bool value 2");
}

TEST(Parser, DeepNestingIsRefused) {
  ByteWriter w = header(0, 1);
  w.str("k");
  w.u32(9);
  for (int i = 0; i < 100; ++i) {
    w.u32(9);
    w.u64(1);
  }
  w.u32(0);
  w.u64(0);
  try {
    parse(w.data());
    ADD_FAILURE() << "accepted";
  } catch (const ParseError& e) {
    EXPECT_NE(e.problem().find("nested deeper than 16"), std::string::npos) << e.what();
  }
}

TEST(Parser, NestedArraysAreRead) {
  GgufWriter g;
  Array inner{ValueType::kInt32, {Value{ValueType::kInt32, std::int64_t{-1}}}};
  g.add("k", Value{ValueType::kArray, Array{ValueType::kArray, {Value{ValueType::kArray, inner}}}});
  const GgufFile f = parse(g.finish());
  const Array& outer = std::get<Array>(f.kv[0].value.data);
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(outer.array_at(0).size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(outer.array_at(0).at(0).data), -1);
}

TEST(Parser, Keys) {
  ByteWriter e = header(0, 1);
  e.str("");
  e.u32(0);
  e.u8(0);
  expect_error(e.data(), 24, "metadata entry 0 has an empty key");

  ByteWriter d = header(0, 2);
  d.str("k");
  d.u32(0);
  d.u8(0);
  d.str("k");
  d.u32(0);
  d.u8(0);
  expect_error(d.data(), 38, "duplicate key 'k'");
}

TEST(Parser, Alignment) {
  ByteWriter t = header(0, 1);
  t.str("general.alignment");
  t.u32(10);
  t.u64(64);
  expect_error(t.data(), 24, "general.alignment must be a uint32, is a uint64");
  for (std::uint32_t bad : {0u, 3u, 48u}) {
    ByteWriter w = header(0, 1);
    w.str("general.alignment");
    w.u32(4);
    w.u32(bad);
    expect_error(w.data(), 24,
                 "general.alignment " + std::to_string(bad) + " is not a power of two");
  }
  ByteWriter ok = header(1, 1);
  ok.str("general.alignment");
  ok.u32(4);
  ok.u32(64);
  tensor_info(ok, "x", {16}, GGML_TYPE_F32, 0);
  const GgufFile f = parse(with_data(ok, 64, 64));
  EXPECT_EQ(f.alignment, 64u);
  EXPECT_EQ(f.data_offset % 64, 0u);
}

TEST(Parser, TensorNamesAndDims) {
  ByteWriter ok = header(1, 0);
  tensor_info(ok, std::string(64, 'n'), {4}, GGML_TYPE_F32, 0);
  EXPECT_EQ(parse(with_data(ok, 16)).tensors[0].name.size(), 64u);

  ByteWriter longname = header(1, 0);
  tensor_info(longname, std::string(65, 'n'), {4}, GGML_TYPE_F32, 0);
  expect_error(with_data(longname, 16), 24, "name is 65 bytes; the GGUF spec allows at most 64");

  ByteWriter dims = header(1, 0);
  tensor_info(dims, "x", {1, 1, 1, 1, 1}, GGML_TYPE_F32, 0);
  expect_error(with_data(dims, 16), 33, "tensor 'x': n_dims 5 exceeds 4");

  ByteWriter neg = header(1, 0);
  tensor_info(neg, "x", {4, 1ull << 63}, GGML_TYPE_F32, 0);
  expect_error(with_data(neg, 16), 45, "tensor 'x': ne[1] = 9223372036854775808 is negative");

  ByteWriter wrap = header(1, 0);  // 2^32 × 2^32 wraps to exactly 0 in 64 bits
  tensor_info(wrap, "x", {1ull << 32, 1ull << 32}, GGML_TYPE_F32, 0);
  expect_error(with_data(wrap, 16), 33, "tensor 'x': element count overflows int64");

  ByteWriter dup = header(2, 0);
  tensor_info(dup, "x", {4}, GGML_TYPE_F32, 0);
  tensor_info(dup, "x", {4}, GGML_TYPE_F32, 32);
  expect_error(with_data(dup, 48), 24 + 8 + 1 + 4 + 8 + 4 + 8, "duplicate tensor name 'x'");

  ByteWriter empty = header(1, 0);  // a zero dimension is an empty tensor, not an error
  tensor_info(empty, "x", {0, 1ull << 40}, GGML_TYPE_F32, 0);
  const GgufFile f = parse(with_data(empty, 0));
  EXPECT_EQ(f.tensors[0].n_elements, 0u);
  EXPECT_EQ(f.tensors[0].n_bytes, 0u);
}

TEST(Parser, TensorTypes) {
  ByteWriter block = header(1, 0);
  tensor_info(block, "x", {33}, GGML_TYPE_Q4_0, 0);  // Q4_0 has 32-element blocks
  expect_error(with_data(block, 32), 45, "ne[0] = 33 is not a multiple of the Q4_0 block size 32");

  ByteWriter big = header(1, 0);  // F32 of 2^62 elements: 2^64 bytes
  tensor_info(big, "x", {1ull << 31, 1ull << 31}, GGML_TYPE_F32, 0);
  expect_error(with_data(big, 0), 53, "byte size overflows");

  // Removed (4) and unknown (99) ids are kept, without a size.
  ByteWriter unknown = header(2, 0);
  tensor_info(unknown, "removed", {32}, 4, 0);
  tensor_info(unknown, "future", {32}, 99, 32);
  const GgufFile f = parse(with_data(unknown, 0));
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_FALSE(f.tensors[0].n_bytes.has_value());
  EXPECT_EQ(f.tensors[1].type, 99u);
}

TEST(Parser, TensorData) {
  ByteWriter mis = header(1, 0);
  tensor_info(mis, "x", {4}, GGML_TYPE_F32, 8);
  expect_error(with_data(mis, 64), 49, "data offset 8 is not a multiple of the alignment 32");

  ByteWriter past = header(1, 0);
  tensor_info(past, "x", {4}, GGML_TYPE_F32, 32);
  expect_error(with_data(past, 40), 49, "extends past the end of the file");

  ByteWriter wrap = header(1, 0);
  tensor_info(wrap, "x", {4}, GGML_TYPE_F32, kU64Max - 31);
  expect_error(with_data(wrap, 16), 49, "data offset 18446744073709551584 overflows");

  ByteWriter overlap = header(2, 0);
  tensor_info(overlap, "a", {16}, GGML_TYPE_F32, 0);
  tensor_info(overlap, "b", {16}, GGML_TYPE_F32, 32);
  expect_error(with_data(overlap, 128), 82, "tensor 'b': data overlaps tensor 'a'");

  // Any non-overlapping placement is served, not only ggml's packed order.
  ByteWriter shuffled = header(2, 0);
  tensor_info(shuffled, "a", {8}, GGML_TYPE_F32, 64);
  tensor_info(shuffled, "b", {8}, GGML_TYPE_F32, 0);
  EXPECT_EQ(parse(with_data(shuffled, 96)).tensors[0].offset, 64u);
}

TEST(Parser, ConformanceFilesMatchTheManifest) {
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto manifest = test::read_json(dir / "conformance" / "manifest.json");
  ASSERT_EQ(manifest["files"].size(), 35u);
  for (const auto& mf : manifest["files"]) {
    const auto path = (dir / "conformance" / mf["file"].get<std::string>()).string();
    const GgufFile f = parse_gguf(FileSource(path), path);
    EXPECT_EQ(f.data_offset, mf["data_offset"].get<std::uint64_t>()) << path;
    EXPECT_EQ(f.kv.size(), mf["n_kv"].get<std::size_t>()) << path;
    ASSERT_EQ(f.tensors.size(), mf["tensors"].size()) << path;
    for (std::size_t i = 0; i < f.tensors.size(); ++i) {
      const auto& mt = mf["tensors"][i];
      const TensorInfo& t = f.tensors[i];
      EXPECT_EQ(t.name, mt["name"].get<std::string>());
      EXPECT_EQ(t.type, mt["type_id"].get<std::uint32_t>());
      EXPECT_EQ(t.file_offset, mt["file_offset"].get<std::uint64_t>());
      EXPECT_EQ(t.n_bytes, mt["nbytes"].get<std::uint64_t>());
      EXPECT_EQ(t.n_elements, mt["n_elements"].get<std::uint64_t>());
    }
  }
}

TEST(Parser, RealFilesParseAndTheMangledOneIsRefused) {
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto manifest = test::read_json(dir / "real" / "manifest.json");
  for (const auto& [name, mf] : manifest.items()) {
    const auto path = (dir / "real" / name).string();
    const GgufFile f = parse_gguf(FileSource(path), path);
    EXPECT_EQ(f.tensors.size(), mf["tensors"].size()) << path;
    for (std::size_t i = 0; i < f.tensors.size(); ++i) {
      EXPECT_EQ(f.tensors[i].file_offset, mf["tensors"][i]["data_offset"].get<std::uint64_t>());
    }
  }
  const auto bad = (dir / "real" / "corrupt" / "ggml-vocab-gpt-2.text-mangled.gguf").string();
  EXPECT_THROW(parse_gguf(FileSource(bad), bad), ParseError);
}

// The line a user is shown: the file's name escaped (printable), the problem as it is (it
// escapes what it quotes itself).
TEST(ParseErrorLine, EscapesTheFileNameOnly) {
  const ParseError e("models/a\x1b[2J.gguf", 12, "tensor 'x': type id 99 is unknown");
  EXPECT_EQ(e.line(), "models/a\\x1b[2J.gguf: at byte 12: tensor 'x': type id 99 is unknown");
  EXPECT_EQ(std::string(e.what()),
            "models/a\x1b[2J.gguf: at byte 12: tensor 'x': type id 99 is unknown");
}

}  // namespace
}  // namespace ggufs
