#include "corpus.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string_view>

#include "gguf_bytes.h"
#include "ggufs/byte_source.h"
#include "ggufs/folder_views.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/half.h"
#include "ggufs/hf_config.h"
#include "ggufs/hf_weights.h"
#include "hf_architectures.h"

namespace ggufs::corpus {
namespace {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

// Value type tags (the GGUF specification, ggml docs/gguf.md).
constexpr std::uint32_t kTU8 = 0, kTI16 = 3, kTU32 = 4, kTF32 = 6, kTBool = 7, kTStr = 8, kTArr = 9,
                        kTU64 = 10, kTF64 = 12;

std::uint64_t pos(ByteWriter& w) { return w.data().size(); }

ByteWriter header(std::uint64_t n_tensors, std::uint64_t n_kv, std::uint32_t version = 3) {
  return test::gguf_header(n_tensors, n_kv, version);
}
using test::tensor_info;

// Pads to the data section and appends `data_bytes` bytes.
Bytes with_data(ByteWriter w, std::size_t data_bytes, std::uint64_t alignment = 32) {
  w.pad_to(alignment);
  for (std::size_t i = 0; i < data_bytes; ++i) w.u8(static_cast<std::uint8_t>(i * 37 + 11));
  return w.data();
}

Value str_value(std::string s) { return Value{ValueType::kString, std::move(s)}; }
Value u_value(ValueType t, std::uint64_t v) { return Value{t, v}; }
Value i_value(ValueType t, std::int64_t v) { return Value{t, v}; }
Value array_value(ValueType elem, std::vector<Value> items) {
  return Value{ValueType::kArray, Array{elem, std::move(items)}};
}

Bytes random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// A small valid file: one key, one F32 tensor of 4 elements and one Q8_0 tensor of 32.
Bytes small_valid() {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_tensor("a", GGML_TYPE_F32, {4}, random_bytes(16, 1));
  g.add_tensor("b", GGML_TYPE_Q8_0, {32}, random_bytes(34, 2));
  return g.finish();
}

// header(0, 1) followed by key "k" and the value type tag `type`: the value starts at byte 37.
ByteWriter one_key(std::uint32_t type, std::string_view key = "k") {
  ByteWriter w = header(0, 1);
  w.str(key);
  w.u32(type);
  return w;
}

class Builder {
 public:
  void refuse(std::string name, Bytes b, std::uint64_t offset, std::string problem) {
    out_.push_back({std::move(name), std::move(b), false, offset, std::move(problem)});
  }
  void accept(std::string name, Bytes b) {
    out_.push_back({std::move(name), std::move(b), true, 0, ""});
  }
  std::vector<Hostile> take() { return std::move(out_); }

 private:
  std::vector<Hostile> out_;
};

void header_cases(Builder& c) {
  c.refuse("header.empty", {}, 0, "file is 0 bytes, too short for a GGUF header (8 bytes)");
  Bytes short_file = header(0, 0).data();
  short_file.pop_back();
  c.refuse("header.short", short_file, 0, "file is 23 bytes, too short for a GGUF header");
  Bytes magic = small_valid();
  magic[3] = 'L';
  magic[2] = 'M';
  c.refuse("header.magic_ggml", magic, 0, "not a GGUF file: magic is 47 47 4d 4c, expected");
  Bytes lower = small_valid();
  for (int i = 0; i < 4; ++i) lower[i] = static_cast<std::uint8_t>("gguf"[i]);
  c.refuse("header.magic_lowercase", lower, 0, "not a GGUF file: magic is 67 67 75 66");
  c.refuse("header.version_0", with_data(header(0, 0, 0), 0), 4, "unsupported GGUF version 0");
  {
    ByteWriter v1(/*big_endian=*/false, /*version=*/1);  // 32-bit counts
    v1.bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>("GGUF"), 4));
    v1.u32(1);
    v1.u32(0xffffffffu);
    v1.u32(0);
    c.refuse("header.version_1_tensor_count_past_end", v1.data(), 8,
             "tensor_count 4294967295 cannot fit in the 4 bytes left in the file");
  }
  c.refuse("header.version_4", with_data(header(0, 0, 4), 0), 4, "unsupported GGUF version 4 ");
  c.refuse("header.version_max", with_data(header(0, 0, 0xffffffffu), 0), 4,
           "unsupported GGUF version 4294967295");
  {
    ByteWriter be(/*big_endian=*/true, /*version=*/3);
    be.bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>("GGUF"), 4));
    be.u32(3);
    be.u64(0);
    be.u64(1ull << 40);
    c.refuse("header.big_endian_kv_count_past_end", be.data(), 16,
             "metadata_kv_count 1099511627776 cannot fit in the 0 bytes left in the file");
  }
  c.refuse("header.tensor_count_2^64-1", with_data(header(kU64Max, 0), 64), 8,
           "tensor_count 18446744073709551615 is negative as int64");
  c.refuse("header.tensor_count_2^62", with_data(header(1ull << 62, 0), 64), 8,
           "tensor_count 4611686018427387904 cannot fit in the 80 bytes left in the file");
  c.refuse("header.tensor_count_past_end", header(1, 0).data(), 8,
           "tensor_count 1 cannot fit in the 8 bytes left in the file");
  c.refuse("header.kv_count_2^64-1", with_data(header(0, kU64Max), 64), 16,
           "metadata_kv_count 18446744073709551615 is negative as int64");
  c.refuse("header.kv_count_2^40", with_data(header(0, 1ull << 40), 64), 16,
           "metadata_kv_count 1099511627776 cannot fit in the 72 bytes left in the file");
  ByteWriter two = header(0, 2);  // two key/values announced, one present
  two.str("k");
  two.u32(kTStr);
  two.str(std::string(30, 's'));
  const std::uint64_t end = pos(two);
  c.refuse("header.kv_count_past_end", two.data(), end,
           "unexpected end of file reading key of metadata entry 1 (8 bytes needed, 0 left)");
}

void key_value_cases(Builder& c) {
  ByteWriter huge = header(0, 1);
  huge.u64(kU64Max - 1);
  huge.u64(0);
  c.refuse("kv.key_length_2^64-2", huge.data(), 24,
           "key of metadata entry 0: string length 18446744073709551614 exceeds the 8 bytes left");
  ByteWriter past = header(0, 1);
  past.u64(8);  // 7 bytes follow
  past.bytes(std::vector<std::uint8_t>{'k', 'k', 0, 0, 0, 0, 0});
  c.refuse("kv.key_length_one_past_end", past.data(), 24,
           "string length 8 exceeds the 7 bytes left in the file");
  ByteWriter empty = one_key(kTU8, "");
  empty.u8(0);
  c.refuse("kv.key_empty", empty.data(), 24, "metadata entry 0 has an empty key");
  for (std::string_view key : {std::string_view("k"), std::string_view("a\x1b[2J")}) {
    ByteWriter dup = header(0, 2);
    dup.str(key);
    dup.u32(kTU8);
    dup.u8(1);
    const std::uint64_t second = pos(dup);
    dup.str(key);
    dup.u32(kTU8);
    dup.u8(2);
    // Text from the file is escaped in messages: no terminal sequence reaches the user.
    c.refuse(key == "k" ? "kv.key_duplicate" : "kv.key_duplicate_escape_sequence", dup.data(),
             second, key == "k" ? "duplicate key 'k'" : "duplicate key 'a\\x1b[2J'");
  }
  for (std::uint32_t bad : {13u, 0xffffffffu}) {
    ByteWriter w = one_key(bad);
    w.u64(0);
    c.refuse("kv.value_type_" + std::to_string(bad), w.data(), 33,
             "invalid value type of key 'k' " + std::to_string(bad) + " (valid: 0..12)");
  }
  for (std::uint8_t bad : {std::uint8_t{2}, std::uint8_t{255}}) {
    ByteWriter w = one_key(kTBool);
    w.u8(bad);
    c.refuse("kv.bool_" + std::to_string(bad), w.data(), 37,
             "invalid bool value " + std::to_string(bad) + " (must be 0 or 1)");
  }
  ByteWriter long_str = one_key(kTStr);
  long_str.u64(1000);
  long_str.bytes(std::vector<std::uint8_t>{'a', 'b', 'c'});
  c.refuse("kv.string_value_length_past_end", long_str.data(), 37,
           "string value: string length 1000 exceeds the 3 bytes left in the file");
  ByteWriter u64 = one_key(kTU64);
  u64.u32(7);
  c.refuse("kv.uint64_truncated", u64.data(), 37,
           "unexpected end of file reading uint64 value (8 bytes needed, 4 left)");
  ByteWriter f64 = one_key(kTF64);
  for (int i = 0; i < 7; ++i) f64.u8(0);
  c.refuse("kv.float64_truncated", f64.data(), 37,
           "unexpected end of file reading float64 value (8 bytes needed, 7 left)");
  ByteWriter i16 = one_key(kTI16);
  i16.u8(1);
  c.refuse("kv.int16_truncated", i16.data(), 37,
           "unexpected end of file reading int16 value (2 bytes needed, 1 left)");
  c.refuse("kv.value_missing", one_key(kTF32).data(), 37,
           "unexpected end of file reading float32 value (4 bytes needed, 0 left)");

  ByteWriter elem = one_key(kTArr);
  elem.u32(13);
  elem.u64(0);
  c.refuse("kv.array_element_type_13", elem.data(), 37,
           "invalid array element type 13 (valid: 0..12)");
  ByteWriter neg = one_key(kTArr);
  neg.u32(kTU8);
  neg.u64(kU64Max);
  c.refuse("kv.array_length_2^64-1", neg.data(), 41,
           "array length 18446744073709551615 is negative as int64");
  ByteWriter big = one_key(kTArr);
  big.u32(kTU64);
  big.u64(1ull << 61);
  big.u64(0);
  c.refuse("kv.array_length_2^61", big.data(), 41,
           "array length 2305843009213693952 cannot fit in the 8 bytes left in the file");
  ByteWriter strs = one_key(kTArr);  // three strings announced, two present
  strs.u32(kTStr);
  strs.u64(3);
  strs.str("aaaaaaaaaa");
  strs.str("bbbbbbbbbb");
  const std::uint64_t third = pos(strs);
  c.refuse("kv.array_strings_past_end", strs.data(), third,
           "unexpected end of file reading string value (8 bytes needed, 0 left)");
  ByteWriter slen = one_key(kTArr);
  slen.u32(kTStr);
  slen.u64(1);
  slen.u64(1ull << 63);
  c.refuse("kv.array_string_length_2^63", slen.data(), 49,
           "string value: string length 9223372036854775808 exceeds the 0 bytes left");
  ByteWriter deep = one_key(kTArr);  // 100 nested arrays of one element each
  for (int i = 0; i < 100; ++i) {
    deep.u32(kTArr);
    deep.u64(1);
  }
  c.refuse("kv.array_nested_17_levels", deep.data(), 37 + 12 * 16,
           "arrays nested deeper than 16 levels");
  ByteWriter ok16 = one_key(kTArr);  // exactly 16 levels: the limit, accepted
  for (int i = 0; i < 15; ++i) {
    ok16.u32(kTArr);
    ok16.u64(1);
  }
  ok16.u32(kTU8);
  ok16.u64(1);
  ok16.u8(7);
  c.accept("ok.array_nested_16_levels", with_data(ok16, 0));
  ByteWriter bools = one_key(kTArr);
  bools.u32(kTBool);
  bools.u64(3);
  bools.u8(1);
  bools.u8(0);
  bools.u8(3);
  c.refuse("kv.array_bool_3", bools.data(), 51, "invalid bool value 3");
  ByteWriter inner = one_key(kTArr);
  inner.u32(kTArr);
  inner.u64(1);
  inner.u32(99);
  inner.u64(0);
  c.refuse("kv.array_inner_element_type_99", inner.data(), 49, "invalid array element type 99");

  ByteWriter a64 = one_key(kTU64, "general.alignment");
  a64.u64(64);
  c.refuse("kv.alignment_uint64", a64.data(), 24,
           "general.alignment must be a uint32, is a uint64");
  ByteWriter astr = one_key(kTStr, "general.alignment");
  astr.str("32");
  c.refuse("kv.alignment_string", astr.data(), 24,
           "general.alignment must be a uint32, is a string");
  for (std::uint32_t bad : {0u, 3u, 48u, 0x80000001u}) {
    ByteWriter w = one_key(kTU32, "general.alignment");
    w.u32(bad);
    c.refuse("kv.alignment_" + std::to_string(bad), w.data(), 24,
             "general.alignment " + std::to_string(bad) + " is not a power of two");
  }
  // Keys too long for a file name (NAME_MAX 255) are served under a shortened name.
  ByteWriter long_key = one_key(kTStr, std::string(300, 'k'));
  long_key.str("long");
  c.accept("ok.key_300_bytes", with_data(long_key, 0));
  std::string slashes;
  for (int i = 0; i < 700; ++i) slashes += i % 7 == 0 ? "\xc3\xa9" : "/";
  ByteWriter escaped_key = one_key(kTStr, slashes);  // escapes to about 1800 bytes
  escaped_key.str("slashes");
  c.accept("ok.key_escaping_to_1800_bytes", with_data(escaped_key, 0));
  ByteWriter huge_align = one_key(kTU32, "general.alignment");
  huge_align.u32(0x80000000u);  // the data section starts far past the end: nothing is in it
  c.accept("ok.alignment_2^31_no_tensors", huge_align.data());
}

void tensor_info_cases(Builder& c) {
  ByteWriter name_len = header(1, 0);
  name_len.u64(kU64Max);
  name_len.u64(0);
  name_len.u64(0);
  c.refuse("tensor.name_length_2^64-1", name_len.data(), 24,
           "name of tensor 0: string length 18446744073709551615 exceeds");
  ByteWriter name65 = header(1, 0);
  tensor_info(name65, std::string(65, 'n'), {4}, GGML_TYPE_F32, 0);
  c.refuse("tensor.name_65_bytes", with_data(name65, 16), 24,
           "tensor 0 name is 65 bytes; the GGUF spec allows at most 64");
  for (std::string_view name : {std::string_view("x"), std::string_view("\x1b]0;pwned\x07")}) {
    ByteWriter dup = header(2, 0);
    tensor_info(dup, name, {4}, GGML_TYPE_F32, 0);
    const std::uint64_t second = pos(dup);
    tensor_info(dup, name, {4}, GGML_TYPE_F32, 32);
    c.refuse(
        name == "x" ? "tensor.name_duplicate" : "tensor.name_duplicate_escape_sequence",
        with_data(dup, 48), second,
        name == "x" ? "duplicate tensor name 'x'" : "duplicate tensor name '\\x1b]0;pwned\\x07'");
  }
  for (std::uint32_t n_dims : {5u, 0xffffffffu}) {
    ByteWriter w = header(1, 0);
    w.str("x");
    w.u32(n_dims);
    for (int i = 0; i < 5; ++i) w.u64(1);
    c.refuse("tensor.n_dims_" + std::to_string(n_dims), with_data(w, 16), 33,
             "tensor 'x': n_dims " + std::to_string(n_dims) + " exceeds 4");
  }
  ByteWriter neg = header(1, 0);
  tensor_info(neg, "x", {4, 1ull << 63}, GGML_TYPE_F32, 0);
  c.refuse("tensor.ne1_2^63", with_data(neg, 16), 45,
           "tensor 'x': ne[1] = 9223372036854775808 is negative as int64");
  ByteWriter max0 = header(1, 0);
  tensor_info(max0, "x", {kU64Max}, GGML_TYPE_F32, 0);
  c.refuse("tensor.ne0_2^64-1", with_data(max0, 16), 37,
           "tensor 'x': ne[0] = 18446744073709551615 is negative as int64");
  ByteWriter wrap = header(1, 0);  // 2^32 × 2^32 wraps to exactly 0 in 64 bits
  tensor_info(wrap, "x", {1ull << 32, 1ull << 32}, GGML_TYPE_F32, 0);
  c.refuse("tensor.elements_wrap_to_0", with_data(wrap, 16), 33,
           "tensor 'x': element count overflows int64");
  ByteWriter e63 = header(1, 0);  // 2^63: fits uint64, not int64
  tensor_info(e63, "x", {1ull << 31, 1ull << 31, 2}, GGML_TYPE_F32, 0);
  c.refuse("tensor.elements_2^63", with_data(e63, 16), 33,
           "tensor 'x': element count overflows int64");
  ByteWriter block = header(1, 0);
  tensor_info(block, "x", {255}, GGML_TYPE_Q4_K, 0);
  c.refuse("tensor.ne0_not_a_block_multiple", with_data(block, 160), 45,
           "tensor 'x': ne[0] = 255 is not a multiple of the Q4_K block size 256");
  ByteWriter bytes64 = header(1, 0);  // F32 of 2^62 elements: 2^64 bytes
  tensor_info(bytes64, "x", {1ull << 31, 1ull << 31}, GGML_TYPE_F32, 0);
  c.refuse("tensor.bytes_2^64", with_data(bytes64, 16), 53, "tensor 'x': byte size overflows");
  ByteWriter bytes63 = header(1, 0);  // I64 of 2^60 elements: 2^63 bytes
  tensor_info(bytes63, "x", {1ull << 60}, GGML_TYPE_I64, 0);
  c.refuse("tensor.bytes_2^63", with_data(bytes63, 16), 45, "tensor 'x': byte size overflows");
  ByteWriter dims = header(1, 0);  // 3 dimensions announced, the file ends in the second
  dims.str("x");
  dims.u32(3);
  dims.u64(4);
  dims.bytes(std::vector<std::uint8_t>{0, 0, 0});
  c.refuse("tensor.dims_truncated", dims.data(), 45,
           "unexpected end of file reading dimension (8 bytes needed, 3 left)");
  ByteWriter type = header(1, 0);  // the file ends before the type
  type.str("xxxxxxxxxxxx");
  type.u32(1);
  type.u64(4);
  c.refuse("tensor.type_missing", type.data(), 56,
           "unexpected end of file reading ggml type (4 bytes needed, 0 left)");
  ByteWriter off = header(1, 0);  // the file ends inside the offset
  off.str("xxxxxxxx");
  off.u32(1);
  off.u64(4);
  off.u32(GGML_TYPE_F32);
  off.u32(0);
  c.refuse("tensor.offset_truncated", off.data(), 56,
           "unexpected end of file reading tensor data offset (8 bytes needed, 4 left)");
  ByteWriter unknown_block = header(1, 0);  // unknown types skip the block check: kept, no data
  tensor_info(unknown_block, "future", {33, 3}, 99, 1ull << 40);
  c.accept("ok.unknown_type_99_far_offset", with_data(unknown_block, 0));
  ByteWriter removed = header(1, 0);
  tensor_info(removed, "removed", {32}, 4, 0);
  c.accept("ok.removed_type_4", with_data(removed, 0));
  ByteWriter zero = header(1, 0);  // a zero dimension: an empty tensor, however large the others
  tensor_info(zero, "empty", {0, 1ull << 40, 1ull << 40, 1ull << 40}, GGML_TYPE_Q4_0, 0);
  c.accept("ok.zero_dimension", with_data(zero, 0));
  ByteWriter scalar = header(1, 0);  // n_dims 0: one element
  tensor_info(scalar, "scalar", {}, GGML_TYPE_F32, 0);
  c.accept("ok.scalar_n_dims_0", with_data(scalar, 4));
}

void data_cases(Builder& c) {
  ByteWriter mis = header(1, 0);
  tensor_info(mis, "x", {4}, GGML_TYPE_F32, 8);
  c.refuse("data.offset_unaligned", with_data(mis, 64), 49,
           "tensor 'x': data offset 8 is not a multiple of the alignment 32");
  ByteWriter mis64 = header(1, 1);
  mis64.str("general.alignment");
  mis64.u32(kTU32);
  mis64.u32(64);
  const std::uint64_t info = pos(mis64);
  tensor_info(mis64, "x", {4}, GGML_TYPE_F32, 32);
  c.refuse("data.offset_unaligned_64", with_data(mis64, 128, 64), info + 25,
           "data offset 32 is not a multiple of the alignment 64");
  ByteWriter past = header(1, 0);
  tensor_info(past, "x", {4}, GGML_TYPE_F32, 32);
  c.refuse("data.past_end", with_data(past, 40), 49,
           "tensor 'x': data [64 + 32, +16 bytes) extends past the end of the file (104 bytes)");
  ByteWriter short1 = header(1, 0);
  tensor_info(short1, "x", {4}, GGML_TYPE_F32, 0);
  c.refuse("data.one_byte_short", with_data(short1, 15), 49,
           "tensor 'x': data [64 + 0, +16 bytes) extends past the end of the file (79 bytes)");
  ByteWriter wrap = header(1, 0);
  tensor_info(wrap, "x", {4}, GGML_TYPE_F32, kU64Max - 31);
  c.refuse("data.offset_wraps", with_data(wrap, 16), 49,
           "tensor 'x': data offset 18446744073709551584 overflows");
  ByteWriter far = header(1, 0);
  tensor_info(far, "x", {4}, GGML_TYPE_F32, 1ull << 63);
  c.refuse("data.offset_2^63", with_data(far, 16), 49, "extends past the end of the file");
  ByteWriter empty_far = header(1, 0);  // even an empty tensor must lie inside the file
  tensor_info(empty_far, "x", {0}, GGML_TYPE_F32, 1 << 20);
  c.refuse("data.empty_tensor_past_end", with_data(empty_far, 0), 49,
           "tensor 'x': data [64 + 1048576, +0 bytes) extends past the end of the file");
  ByteWriter overlap = header(2, 0);
  tensor_info(overlap, "a", {16}, GGML_TYPE_F32, 0);
  tensor_info(overlap, "b", {16}, GGML_TYPE_F32, 32);
  c.refuse("data.overlap", with_data(overlap, 128), 82, "tensor 'b': data overlaps tensor 'a'");
  ByteWriter reverse = header(2, 0);  // listed in the other order: the later extent is named
  tensor_info(reverse, "b", {8}, GGML_TYPE_F32, 32);
  tensor_info(reverse, "a", {16}, GGML_TYPE_F32, 0);
  c.refuse("data.overlap_listed_backwards", with_data(reverse, 96), 49,
           "tensor 'b': data overlaps tensor 'a'");
  ByteWriter inside = header(2, 0);  // one tensor strictly inside another
  tensor_info(inside, "big", {64}, GGML_TYPE_F32, 0);
  tensor_info(inside, "small", {4}, GGML_TYPE_F32, 128);
  c.refuse("data.overlap_nested", with_data(inside, 256), 88,
           "tensor 'small': data overlaps tensor 'big'");

  ByteWriter shuffled = header(2, 0);  // any non-overlapping placement is served
  tensor_info(shuffled, "a", {8}, GGML_TYPE_F32, 64);
  tensor_info(shuffled, "b", {8}, GGML_TYPE_F32, 0);
  c.accept("ok.data_not_in_file_order", with_data(shuffled, 96));
  ByteWriter trailing = header(1, 0);  // bytes after the last tensor are ignored
  tensor_info(trailing, "x", {4}, GGML_TYPE_F32, 0);
  c.accept("ok.trailing_bytes", with_data(trailing, 16 + 1000));
  ByteWriter align1 = header(2, 1);  // alignment 1: tensors at any byte
  align1.str("general.alignment");
  align1.u32(kTU32);
  align1.u32(1);
  tensor_info(align1, "a", {3}, GGML_TYPE_F32, 0);
  tensor_info(align1, "b", {32}, GGML_TYPE_Q8_0, 13);
  c.accept("ok.alignment_1", with_data(align1, 13 + 34, 1));
  c.accept("ok.version_2", with_data(header(0, 0, 2), 0));
  c.accept("ok.empty_file_of_24_bytes", header(0, 0).data());
}

// --- hf/: models of the architectures hf/ serves, and variants it must refuse -------------------

// A model's metadata and tensors, kept apart so that a hostile variant can edit them before the
// file is written.
struct ModelSpec {
  struct Tensor {
    std::string name;
    std::vector<std::uint64_t> shape;  // numpy order: the outermost dimension first
    std::uint32_t type;
  };
  std::vector<std::pair<std::string, Value>> kv;
  std::vector<Tensor> tensors;
  bool big_endian = false;  // the converter's --bigendian: header and F32/F16 data byte-swapped

  void add(std::string key, Value v) { kv.emplace_back(std::move(key), std::move(v)); }
  // Tensors alternate F32 and F16 (hf/ splices the one and decodes the other) unless typed.
  void tensor(std::string name, std::vector<std::uint64_t> shape, int type = -1) {
    const auto t = type >= 0            ? static_cast<std::uint32_t>(type)
                   : tensors.size() % 2 ? std::uint32_t{GGML_TYPE_F16}
                                        : std::uint32_t{GGML_TYPE_F32};
    tensors.push_back({std::move(name), std::move(shape), t});
  }
  Value& at(std::string_view key) {
    for (auto& [k, v] : kv) {
      if (k == key) return v;
    }
    throw std::logic_error("no key " + std::string(key));
  }
  void erase(std::string_view key) {
    std::erase_if(kv, [&](const auto& e) { return e.first == key; });
  }

  Bytes write(std::uint32_t seed) const {
    GgufWriter g;
    g.set_format(3, big_endian);
    for (const auto& [k, v] : kv) g.add(k, v);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (const Tensor& t : tensors) {
      std::vector<std::uint64_t> ne(t.shape.rbegin(), t.shape.rend());
      std::uint64_t dims[4] = {1, 1, 1, 1};
      std::copy(ne.begin(), ne.end(), dims);
      const std::uint64_t n = dims[0] * dims[1] * dims[2] * dims[3];
      ByteWriter w(big_endian, 3);
      if (t.type == GGML_TYPE_F32 || t.type == GGML_TYPE_F16) {
        // Finite values, as a converter writes them.
        for (std::uint64_t i = 0; i < n; ++i) {
          const float x = value(rng);
          t.type == GGML_TYPE_F32 ? w.f32(x) : w.u16(float_to_half(x));
        }
      } else {  // quantized: random blocks (their scales may be anything)
        const std::uint64_t bytes = *tensor_bytes(*type_traits(t.type), dims);
        for (std::uint64_t i = 0; i < bytes; ++i) w.u8(static_cast<std::uint8_t>(rng()));
      }
      g.add_tensor(t.name, t.type, std::move(ne), std::move(w.data()));
    }
    return g.finish();
  }
};

Value u32_value(std::uint64_t v) { return u_value(ValueType::kUint32, v); }
Value f32_value(float v) { return Value{ValueType::kFloat32, v}; }
Value strings(std::vector<std::string> s) {
  std::vector<Value> items;
  for (std::string& x : s) items.push_back(str_value(std::move(x)));
  return array_value(ValueType::kString, std::move(items));
}

constexpr std::uint64_t kVocab = 16, kHidden = 16, kFf = 40;

// The hyperparameters convert_hf_to_gguf.py's TextModel.set_gguf_parameters writes, under
// `arch`: one layer, hidden 16, 4 heads, 2 kv heads.
ModelSpec hparams(const std::string& arch, std::uint64_t context = 128, std::uint64_t ff = kFf,
                  bool kv_heads = true, bool rms = true) {
  ModelSpec m;
  m.add("general.architecture", str_value(arch));
  m.add("general.name", str_value("tiny"));
  m.add(arch + ".block_count", u32_value(1));
  m.add(arch + ".context_length", u32_value(context));
  m.add(arch + ".embedding_length", u32_value(kHidden));
  m.add(arch + ".feed_forward_length", u32_value(ff));
  m.add(arch + ".attention.head_count", u32_value(4));
  if (kv_heads) m.add(arch + ".attention.head_count_kv", u32_value(2));
  if (rms) {
    m.add(arch + ".rope.freq_base", f32_value(10000.0f));
    m.add(arch + ".attention.layer_norm_rms_epsilon", f32_value(1e-6f));
  } else {
    m.add(arch + ".attention.layer_norm_epsilon", f32_value(1e-5f));
  }
  return m;
}

// SentencePiece vocabulary (gguf-py's add_token_list, add_token_scores, add_token_types; types
// 2 unknown, 3 control, 1 normal).
void llama_tokenizer(ModelSpec& m, std::uint64_t bos = 1, std::uint64_t eos = 2,
                     std::uint64_t n = kVocab) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<Value> scores, types = {i_value(ValueType::kInt32, 2), i_value(ValueType::kInt32, 3),
                                      i_value(ValueType::kInt32, 3)};
  for (std::uint64_t i = 3; i < n; ++i) {
    tokens.push_back("\u2581t" + std::to_string(i - 3));
    types.push_back(i_value(ValueType::kInt32, 1));
  }
  for (std::uint64_t i = 0; i < n; ++i) scores.push_back(f32_value(-static_cast<float>(i)));
  m.add("tokenizer.ggml.model", str_value("llama"));
  m.add("tokenizer.ggml.tokens", strings(std::move(tokens)));
  m.add("tokenizer.ggml.scores", array_value(ValueType::kFloat32, std::move(scores)));
  m.add("tokenizer.ggml.token_type", array_value(ValueType::kInt32, std::move(types)));
  m.add("tokenizer.ggml.bos_token_id", u32_value(bos));
  m.add("tokenizer.ggml.eos_token_id", u32_value(eos));
  m.add("tokenizer.ggml.unknown_token_id", u32_value(0));
}

// Byte-level BPE vocabulary with two merges (gguf-py's add_token_merges; one merge alone would be
// unwrapped into its string by transformers' reader).
void gpt2_tokenizer(ModelSpec& m) {
  std::vector<std::string> tokens = {"a", "b", "ab", "c", "abc"};
  std::vector<Value> types(kVocab, i_value(ValueType::kInt32, 1));
  for (std::uint64_t i = 5; i < kVocab; ++i) tokens.push_back("t" + std::to_string(i - 5));
  m.add("tokenizer.ggml.model", str_value("gpt2"));
  m.add("tokenizer.ggml.pre", str_value("default"));
  m.add("tokenizer.ggml.tokens", strings(std::move(tokens)));
  m.add("tokenizer.ggml.token_type", array_value(ValueType::kInt32, std::move(types)));
  m.add("tokenizer.ggml.merges", strings({"a b", "ab c"}));
  m.add("tokenizer.ggml.bos_token_id", u32_value(0));
  m.add("tokenizer.ggml.eos_token_id", u32_value(1));
}

// q, k, v and o of 4 heads and 2 kv heads of `head_dim`.
void attention(ModelSpec& m, std::uint64_t head_dim) {
  m.tensor("blk.0.attn_q.weight", {4 * head_dim, kHidden});
  m.tensor("blk.0.attn_k.weight", {2 * head_dim, kHidden});
  m.tensor("blk.0.attn_v.weight", {2 * head_dim, kHidden});
  m.tensor("blk.0.attn_output.weight", {kHidden, 4 * head_dim});
}

void gated_ffn(ModelSpec& m) {
  m.tensor("blk.0.ffn_gate.weight", {kFf, kHidden});
  m.tensor("blk.0.ffn_up.weight", {kFf, kHidden});
  m.tensor("blk.0.ffn_down.weight", {kHidden, kFf});
}

// llama with head_dim 8 (rope.dimension_count; not hidden / heads = 4), or the same under
// another general.architecture (mistral3: Mistral Small 3.x's text model).
ModelSpec hf_llama(const std::string& arch = "llama") {
  ModelSpec m = hparams(arch);
  m.add(arch + ".vocab_size", u32_value(kVocab));
  m.add(arch + ".rope.dimension_count", u32_value(8));
  llama_tokenizer(m);
  m.tensor("token_embd.weight", {kVocab, kHidden});
  attention(m, 8);
  gated_ffn(m);
  m.tensor("blk.0.attn_norm.weight", {kHidden});
  m.tensor("blk.0.ffn_norm.weight", {kHidden});
  m.tensor("output_norm.weight", {kHidden});
  m.tensor("output.weight", {kVocab, kHidden});
  return m;
}

// gpt2: GPT2TensorProcessor transposes attn_qkv, attn_output, ffn_up and ffn_down; GPT2Config's
// n_positions (1024) is never mapped from the GGUF, so position_embd has 1024 rows.
ModelSpec hf_gpt2() {
  ModelSpec m = hparams("gpt2", 1024, 4 * kHidden, /*kv_heads=*/false, /*rms=*/false);
  gpt2_tokenizer(m);
  m.tensor("token_embd.weight", {kVocab, kHidden});
  m.tensor("position_embd.weight", {1024, kHidden}, GGML_TYPE_F16);
  m.tensor("blk.0.attn_qkv.weight", {3 * kHidden, kHidden});
  m.tensor("blk.0.attn_qkv.bias", {3 * kHidden});
  m.tensor("blk.0.attn_output.weight", {kHidden, kHidden});
  m.tensor("blk.0.attn_output.bias", {kHidden});
  m.tensor("blk.0.ffn_up.weight", {4 * kHidden, kHidden});
  m.tensor("blk.0.ffn_up.bias", {4 * kHidden});
  m.tensor("blk.0.ffn_down.weight", {kHidden, 4 * kHidden});
  m.tensor("blk.0.ffn_down.bias", {kHidden});
  for (const char* n : {"blk.0.attn_norm", "blk.0.ffn_norm", "output_norm"}) {
    m.tensor(std::string(n) + ".weight", {kHidden});
    m.tensor(std::string(n) + ".bias", {kHidden});
  }
  m.tensor("output.weight", {kVocab, kHidden});
  return m;
}

// qwen3moe with 2 experts of 64: the three stacks Qwen3MoeSparseMoeBlock builds in every layer
// (hf/ refuses a layer 0 without one), the down stack Q4_0 with expert 1 starting mid-tensor.
ModelSpec hf_qwen3moe() {
  ModelSpec m = hparams("qwen3moe");
  m.add("qwen3moe.attention.key_length", u32_value(8));
  m.add("qwen3moe.attention.value_length", u32_value(8));
  m.add("qwen3moe.expert_count", u32_value(2));
  m.add("qwen3moe.expert_used_count", u32_value(1));
  m.add("qwen3moe.expert_feed_forward_length", u32_value(64));
  gpt2_tokenizer(m);
  m.tensor("token_embd.weight", {kVocab, kHidden});
  attention(m, 8);
  m.tensor("blk.0.attn_q_norm.weight", {8});
  m.tensor("blk.0.attn_k_norm.weight", {8});
  m.tensor("blk.0.ffn_gate_inp.weight", {2, kHidden});
  m.tensor("blk.0.ffn_gate_exps.weight", {2, 64, kHidden});
  m.tensor("blk.0.ffn_up_exps.weight", {2, 64, kHidden});
  m.tensor("blk.0.ffn_down_exps.weight", {2, kHidden, 64}, GGML_TYPE_Q4_0);
  m.tensor("blk.0.attn_norm.weight", {kHidden});
  m.tensor("blk.0.ffn_norm.weight", {kHidden});
  m.tensor("output_norm.weight", {kHidden});
  m.tensor("output.weight", {kVocab, kHidden});
  return m;
}

// gemma2: Gemma2TensorProcessor subtracts 1 from every norm. `arch` "gemma3" (gemma.py,
// Gemma3Model): the same with per-head q/k norms and a rope base.
ModelSpec hf_gemma2(const std::string& arch = "gemma2") {
  ModelSpec m = hparams(arch, 128, kFf, true, true);
  if (arch == "gemma2") m.erase("gemma2.rope.freq_base");
  m.add(arch + ".attention.key_length", u32_value(8));
  m.add(arch + ".attention.value_length", u32_value(8));
  m.add(arch + ".attention.sliding_window", u32_value(64));
  llama_tokenizer(m, 2, 1);
  m.add("tokenizer.ggml.padding_token_id", u32_value(0));
  m.tensor("token_embd.weight", {kVocab, kHidden});
  attention(m, 8);
  gated_ffn(m);
  if (arch == "gemma3") {
    m.tensor("blk.0.attn_q_norm.weight", {8});
    m.tensor("blk.0.attn_k_norm.weight", {8});
  }
  for (const char* n : {"attn_norm", "ffn_norm", "post_attention_norm", "post_ffw_norm"}) {
    m.tensor("blk.0." + std::string(n) + ".weight", {kHidden});
  }
  m.tensor("output_norm.weight", {kHidden});
  return m;
}

// llama quantized to `type` (Q4_K by default; rows of 256, every quantized type's block size
// divides it: hidden 256, 2 heads of 4, 1 kv head), with a byte-level BPE vocabulary (the llama
// converter's "llama-3" variant); o and down stay F16.
ModelSpec hf_llama_q4k(GgmlType type = GGML_TYPE_Q4_K) {
  constexpr std::uint64_t h = 256, ff = 8;
  ModelSpec m;
  m.add("general.architecture", str_value("llama"));
  m.add("general.name", str_value("tiny-q4k"));
  m.add("llama.block_count", u32_value(1));
  m.add("llama.context_length", u32_value(128));
  m.add("llama.embedding_length", u32_value(h));
  m.add("llama.feed_forward_length", u32_value(ff));
  m.add("llama.attention.head_count", u32_value(2));
  m.add("llama.attention.head_count_kv", u32_value(1));
  m.add("llama.rope.dimension_count", u32_value(4));
  m.add("llama.attention.layer_norm_rms_epsilon", f32_value(1e-5f));
  m.add("general.file_type", u32_value(15));  // MOSTLY_Q4_K_M
  gpt2_tokenizer(m);
  m.tensor("token_embd.weight", {kVocab, h}, type);
  m.tensor("blk.0.attn_q.weight", {8, h}, type);
  m.tensor("blk.0.attn_k.weight", {4, h}, type);
  m.tensor("blk.0.attn_v.weight", {4, h}, type);
  m.tensor("blk.0.attn_output.weight", {h, 8}, GGML_TYPE_F16);
  m.tensor("blk.0.ffn_gate.weight", {ff, h}, type);
  m.tensor("blk.0.ffn_up.weight", {ff, h}, type);
  m.tensor("blk.0.ffn_down.weight", {h, ff}, GGML_TYPE_F16);
  m.tensor("blk.0.attn_norm.weight", {h}, GGML_TYPE_F32);
  m.tensor("blk.0.ffn_norm.weight", {h}, GGML_TYPE_F32);
  m.tensor("output_norm.weight", {h}, GGML_TYPE_F32);
  m.tensor("output.weight", {kVocab, h}, type);
  return m;
}

}  // namespace

std::vector<Hostile> hostile_files() {
  Builder c;
  header_cases(c);
  key_value_cases(c);
  tensor_info_cases(c);
  data_cases(c);
  return c.take();
}

std::vector<Fixture> valid_fixtures() {
  std::vector<Fixture> out;
  {
    GgufWriter g;  // one small tensor of every known type, random bytes
    g.add_string("general.architecture", "all-types");
    std::uint32_t seed = 100;
    for (const TypeTraits& t : all_types()) {
      const std::vector<std::uint64_t> ne{std::uint64_t{t.block_size} * 2, 3};
      g.add_tensor(std::string(t.name), t.id, ne, random_bytes(t.type_size * 2 * 3, seed++));
    }
    out.push_back({"valid.all_types", g.finish()});
  }
  {
    GgufWriter g;  // every value type, nested and empty arrays, awkward strings and floats
    g.add("u8", u_value(ValueType::kUint8, 255));
    g.add("i8", i_value(ValueType::kInt8, -128));
    g.add("u16", u_value(ValueType::kUint16, 65535));
    g.add("i16", i_value(ValueType::kInt16, -32768));
    g.add("u32", u_value(ValueType::kUint32, 4294967295u));
    g.add("i32", i_value(ValueType::kInt32, -2147483647 - 1));
    g.add("u64", u_value(ValueType::kUint64, kU64Max));
    g.add("i64", i_value(ValueType::kInt64, std::numeric_limits<std::int64_t>::min()));
    g.add_f32("f32.nan", std::numeric_limits<float>::quiet_NaN());
    g.add_f32("f32.-inf", -std::numeric_limits<float>::infinity());
    g.add_f32("f32.denorm", std::numeric_limits<float>::denorm_min());
    g.add("f64", Value{ValueType::kFloat64, -0.0});
    g.add("bool", Value{ValueType::kBool, true});
    g.add("str.control", str_value(std::string("a\0b\n\t\x1b[31m\x7f", 10)));
    g.add("str.invalid_utf8", str_value("\xff\xfe\xc3(\xe2\x82"));
    g.add("str.empty", str_value(""));
    g.add("arr.empty", array_value(ValueType::kInt32, {}));
    g.add("arr.strings", array_value(ValueType::kString, {str_value("x\ny"), str_value("\"\\"),
                                                          str_value("\x01\xff")}));
    g.add("arr.floats",
          array_value(ValueType::kFloat32,
                      {Value{ValueType::kFloat32, 1.5f},
                       Value{ValueType::kFloat32, std::numeric_limits<float>::infinity()}}));
    g.add("arr.nested",
          array_value(ValueType::kArray,
                      {array_value(ValueType::kBool, {Value{ValueType::kBool, false}}),
                       array_value(ValueType::kString, {str_value("deep")})}));
    g.add_tensor("t", GGML_TYPE_F32, {2, 2}, random_bytes(16, 7));
    out.push_back({"valid.all_value_types", g.finish()});
  }
  {
    GgufWriter g;  // names that need escaping
    g.add_string("a/b", "slash");
    g.add_string("..", "dots");
    g.add_string(".", "dot");
    g.add_string("100%", "percent");
    g.add_string(std::string("nul\0key", 7), "nul");
    g.add_string("tab\tkey", "tab");
    g.add_tensor("../evil", GGML_TYPE_F32, {4}, random_bytes(16, 8));
    g.add_tensor("", GGML_TYPE_F32, {4}, random_bytes(16, 9));
    g.add_tensor("%2F", GGML_TYPE_F32, {4}, random_bytes(16, 10));
    out.push_back({"valid.names", g.finish()});
  }
  {
    GgufWriter g;  // alignment 64, a quantized tensor with several dimensions
    g.set_alignment(64);
    g.add_u32("llama.block_count", 1);
    g.add_tensor("q4_0", GGML_TYPE_Q4_0, {64, 2, 2}, random_bytes(18 * 2 * 2 * 2, 11));
    g.add_tensor("q4_k", GGML_TYPE_Q4_K, {256, 2}, random_bytes(144 * 2, 12));
    g.add_tensor("empty", GGML_TYPE_F32, {0, 5}, {});
    g.add_tensor("future", 99, {32}, {});
    out.push_back({"valid.alignment_64", g.finish()});
  }
  {
    GgufWriter g;  // big-endian (gguf-py's endianess=BIG): the data is written as given
    g.set_format(3, /*big_endian=*/true);
    g.add_string("general.architecture", "big");
    g.add_u32("llama.block_count", 1);
    g.add_tensor("f32", GGML_TYPE_F32, {4}, random_bytes(16, 13));
    g.add_tensor("f16", GGML_TYPE_F16, {3}, random_bytes(6, 14));
    g.add_tensor("i32", GGML_TYPE_I32, {2}, random_bytes(8, 15));
    g.add_tensor("q8_0", GGML_TYPE_Q8_0, {32}, random_bytes(34, 16));
    out.push_back({"valid.big_endian", g.finish()});
  }
  out.push_back({"valid.small", small_valid()});
  return out;
}

// The image tokens of the vision table's rows, in place of ordinary tokens from id `first` on:
// a SentencePiece vocabulary's (llama_tokenizer: ids 3 on are "▁tN"), or a BPE one's from 5
// (gpt2_tokenizer: ids 5 on are "tN", the ones no merge makes).
void image_tokens(ModelSpec& m, const std::vector<std::string>& tokens, std::size_t first = 3) {
  const Array& a = std::get<Array>(m.at("tokenizer.ggml.tokens").data);
  std::vector<std::string> all;
  for (std::size_t i = 0; i < a.size(); ++i) all.emplace_back(a.string_at(i));
  for (std::size_t i = 0; i < tokens.size(); ++i) all.at(first + i) = tokens[i];
  m.at("tokenizer.ggml.tokens") = strings(std::move(all));
}

// A projector as MmprojModel.set_gguf_parameters writes it (conversion/base.py): a SigLIP tower
// of one layer, hidden 8, feed-forward 12, 2 heads, 16-pixel images of 4-pixel patches.
ModelSpec clip_projector(const std::string& type) {
  ModelSpec m;
  m.add("general.architecture", str_value("clip"));
  m.add("general.type", str_value("mmproj"));
  m.add("clip.has_vision_encoder", Value{ValueType::kBool, true});
  m.add("clip.projector_type", str_value(type));
  m.add("clip.vision.projection_dim", u32_value(kHidden));
  m.add("clip.vision.image_size", u32_value(16));
  m.add("clip.vision.patch_size", u32_value(4));
  m.add("clip.vision.embedding_length", u32_value(8));
  m.add("clip.vision.feed_forward_length", u32_value(12));
  m.add("clip.vision.block_count", u32_value(1));
  m.add("clip.vision.attention.head_count", u32_value(2));
  m.add("clip.vision.attention.layer_norm_epsilon", f32_value(1e-6f));
  m.add("clip.vision.image_mean",
        array_value(ValueType::kFloat32, {f32_value(0.5f), f32_value(0.5f), f32_value(0.5f)}));
  m.add("clip.vision.image_std",
        array_value(ValueType::kFloat32, {f32_value(0.5f), f32_value(0.5f), f32_value(0.5f)}));
  m.tensor("v.patch_embd.weight", {8, 3, 4, 4});
  m.tensor("v.patch_embd.bias", {8});
  m.tensor("v.position_embd.weight", {16, 8});
  for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
    m.tensor(fmt::format("v.blk.0.{}.weight", n), {8, 8});
    m.tensor(fmt::format("v.blk.0.{}.bias", n), {8});
  }
  for (const char* n : {"ln1", "ln2"}) {
    m.tensor(fmt::format("v.blk.0.{}.weight", n), {8});
    m.tensor(fmt::format("v.blk.0.{}.bias", n), {8});
  }
  m.tensor("v.blk.0.ffn_up.weight", {12, 8});
  m.tensor("v.blk.0.ffn_up.bias", {12});
  m.tensor("v.blk.0.ffn_down.weight", {8, 12});
  m.tensor("v.blk.0.ffn_down.bias", {8});
  m.tensor("v.post_ln.weight", {8});
  m.tensor("v.post_ln.bias", {8});
  return m;
}

// Qwen2-VL's and Qwen2.5-VL's text model (qwenvl.py, Qwen2VLModel): qwen2's tensors, M-RoPE
// sections rotating the head's 4 elements, Qwen2's pre-tokenizer and the image tokens.
ModelSpec qwen2vl_text(const std::string& arch = "qwen2vl") {
  const bool qwen3 = arch.starts_with("qwen3");  // Qwen3's head_dim 8 and q/k norms, no biases
  ModelSpec text = hparams(arch);
  if (qwen3) {
    text.add(arch + ".attention.key_length", u32_value(8));
    text.add(arch + ".attention.value_length", u32_value(8));
  }
  if (arch.ends_with("vl")) {  // qwen2vl, qwen3vl: M-RoPE
    const std::int64_t sections[] = {qwen3 ? 2 : 1, 1, qwen3 ? 1 : 0, 0};
    std::vector<Value> values;
    for (const std::int64_t n : sections) values.push_back(i_value(ValueType::kInt32, n));
    text.add(arch + ".rope.dimension_sections", array_value(ValueType::kInt32, std::move(values)));
  }
  gpt2_tokenizer(text);
  text.at("tokenizer.ggml.pre") = str_value("qwen2");
  image_tokens(text, {"<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"}, 5);
  text.tensor("token_embd.weight", {kVocab, kHidden});
  attention(text, qwen3 ? 8 : 4);
  if (qwen3) {
    text.tensor("blk.0.attn_q_norm.weight", {8});
    text.tensor("blk.0.attn_k_norm.weight", {8});
  } else {
    text.tensor("blk.0.attn_q.bias", {16});
    text.tensor("blk.0.attn_k.bias", {8});
    text.tensor("blk.0.attn_v.bias", {8});
  }
  gated_ffn(text);
  text.tensor("blk.0.attn_norm.weight", {kHidden});
  text.tensor("blk.0.ffn_norm.weight", {kHidden});
  text.tensor("output_norm.weight", {kHidden});
  text.tensor("output.weight", {kVocab, kHidden});
  return text;
}

// A Qwen2-VL projector (qwenvl.py, Qwen2VLVisionModel): the Conv3d's two frames, q, k and v
// split, the merger over 2 × 2 patches (mm.0, mm.2); Qwen2-VL's LayerNorms and fc1/fc2 (whose
// width 16 is twice the tower's; feed_forward_length is the merger's output), or Qwen2.5-VL's
// RMSNorms and gated MLP of feed_forward_length 12.
ModelSpec qwen2vl_projector(const std::string& type, bool gated) {
  ModelSpec proj = clip_projector(type);
  const std::uint64_t ff = gated ? 12 : 16;
  if (!gated) proj.at("clip.vision.feed_forward_length") = u32_value(kHidden);
  proj.tensors.clear();
  proj.tensor("v.patch_embd.weight", {8, 3, 4, 4});
  proj.tensor("v.patch_embd.weight.1", {8, 3, 4, 4});
  for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
    proj.tensor(fmt::format("v.blk.0.{}.weight", n), {8, 8});
    proj.tensor(fmt::format("v.blk.0.{}.bias", n), {8});
  }
  for (const char* n : {"ln1", "ln2"}) {
    proj.tensor(fmt::format("v.blk.0.{}.weight", n), {8});
    if (!gated) proj.tensor(fmt::format("v.blk.0.{}.bias", n), {8});
  }
  for (const char* n : gated ? std::vector{"ffn_gate", "ffn_up"} : std::vector{"ffn_up"}) {
    proj.tensor(fmt::format("v.blk.0.{}.weight", n), {ff, 8});
    proj.tensor(fmt::format("v.blk.0.{}.bias", n), {ff});
  }
  proj.tensor("v.blk.0.ffn_down.weight", {8, ff});
  proj.tensor("v.blk.0.ffn_down.bias", {8});
  proj.tensor("v.post_ln.weight", {8});
  if (!gated) proj.tensor("v.post_ln.bias", {8});
  proj.tensor("mm.0.weight", {32, 32});
  proj.tensor("mm.0.bias", {32});
  proj.tensor("mm.2.weight", {kHidden, 32});
  proj.tensor("mm.2.bias", {kHidden});
  return proj;
}

// Mistral Small 3.x's text model (mistral3.py, Ministral3Model: a llama under mistral3) with
// PixtralProcessor's tokens, and its projector (llava.py, LlavaVisionModel): Pixtral's tower (no
// biases, RMSNorms before the layers and in them, a gated MLP, q and k permuted), the patch
// merger over 2 × 2 patches, mm.1 and mm.2 to the text width.
ModelSpec mistral3_text() {
  ModelSpec text = hf_llama("mistral3");
  image_tokens(text, {"[IMG]", "[IMG_BREAK]", "[IMG_END]"});
  return text;
}

ModelSpec pixtral_projector() {
  ModelSpec proj = clip_projector("pixtral");
  proj.add("clip.use_silu", Value{ValueType::kBool, true});
  proj.add("clip.vision.spatial_merge_size", u32_value(2));
  proj.tensors.clear();
  proj.tensor("v.patch_embd.weight", {8, 3, 4, 4});
  proj.tensor("v.pre_ln.weight", {8});
  for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_out"}) {
    proj.tensor(fmt::format("v.blk.0.{}.weight", n), {8, 8});
  }
  for (const char* n : {"ln1", "ln2"}) proj.tensor(fmt::format("v.blk.0.{}.weight", n), {8});
  proj.tensor("v.blk.0.ffn_gate.weight", {12, 8});
  proj.tensor("v.blk.0.ffn_up.weight", {12, 8});
  proj.tensor("v.blk.0.ffn_down.weight", {8, 12});
  proj.tensor("mm.input_norm.weight", {8});
  proj.tensor("mm.patch_merger.weight", {8, 32});
  proj.tensor("mm.1.weight", {kHidden, 8});
  proj.tensor("mm.2.weight", {kHidden, kHidden});
  return proj;
}

// A Qwen3-VL projector (qwen3vl.py, Qwen3VLVisionModel): the patch bias, a 4 × 4 position
// embedding, q, k and v fused, the merger (mm.0, mm.2) and one deepstack merger reading layer 0.
ModelSpec qwen3vl_projector() {
  ModelSpec proj = clip_projector("qwen3vl_merger");
  proj.add("clip.use_gelu", Value{ValueType::kBool, true});
  proj.add("clip.vision.spatial_merge_size", u32_value(2));
  proj.add("clip.vision.is_deepstack_layers",
           array_value(ValueType::kBool, {Value{ValueType::kBool, true}}));
  proj.tensors.clear();
  proj.tensor("v.patch_embd.weight", {8, 3, 4, 4});
  proj.tensor("v.patch_embd.weight.1", {8, 3, 4, 4});
  proj.tensor("v.patch_embd.bias", {8});
  proj.tensor("v.position_embd.weight", {16, 8});
  proj.tensor("v.blk.0.attn_qkv.weight", {24, 8});
  proj.tensor("v.blk.0.attn_qkv.bias", {24});
  proj.tensor("v.blk.0.attn_out.weight", {8, 8});
  proj.tensor("v.blk.0.attn_out.bias", {8});
  for (const char* n : {"ln1", "ln2"}) {
    proj.tensor(fmt::format("v.blk.0.{}.weight", n), {8});
    proj.tensor(fmt::format("v.blk.0.{}.bias", n), {8});
  }
  proj.tensor("v.blk.0.ffn_up.weight", {12, 8});
  proj.tensor("v.blk.0.ffn_up.bias", {12});
  proj.tensor("v.blk.0.ffn_down.weight", {8, 12});
  proj.tensor("v.blk.0.ffn_down.bias", {8});
  proj.tensor("v.post_ln.weight", {8});
  proj.tensor("v.post_ln.bias", {8});
  for (const char* p : {"mm.0", "v.deepstack.0.fc1"}) {
    proj.tensor(fmt::format("{}.weight", p), {32, 32});
    proj.tensor(fmt::format("{}.bias", p), {32});
  }
  for (const char* p : {"mm.2", "v.deepstack.0.fc2"}) {
    proj.tensor(fmt::format("{}.weight", p), {kHidden, 32});
    proj.tensor(fmt::format("{}.bias", p), {kHidden});
  }
  proj.tensor("v.deepstack.0.norm.weight", {32});
  proj.tensor("v.deepstack.0.norm.bias", {32});
  return proj;
}

// InternVL's text model: qwen2's (InternVL 2.5 / 3) or qwen3's (3.5) with InternVL's image
// tokens; and its projector (internvl.py, InternVisionModel): InternViT's class token, position
// embedding of it and the 16 patches, layer scales; the projector's LayerNorm and two Linears
// over 2 × 2 patches.
ModelSpec internvl_text(const std::string& arch) {
  ModelSpec text = qwen2vl_text(arch);
  image_tokens(text, {"<IMG_CONTEXT>", "<img>", "</img>", "<video>"}, 5);
  return text;
}

ModelSpec internvl_projector() {
  ModelSpec proj = clip_projector("internvl");
  proj.add("clip.use_gelu", Value{ValueType::kBool, true});
  proj.add("clip.vision.projector.scale_factor", u32_value(2));
  std::erase_if(proj.tensors, [](const ModelSpec::Tensor& t) {
    return t.name == "v.position_embd.weight" || t.name.starts_with("v.post_ln.");
  });
  proj.tensor("v.class_embd", {1, 1, 8});
  proj.tensor("v.position_embd.weight", {1, 17, 8});
  proj.tensor("v.blk.0.ls1.weight", {8});
  proj.tensor("v.blk.0.ls2.weight", {8});
  proj.tensor("mm.model.mlp.0.weight", {32});
  proj.tensor("mm.model.mlp.0.bias", {32});
  proj.tensor("mm.model.mlp.1.weight", {kHidden, 32});
  proj.tensor("mm.model.mlp.1.bias", {kHidden});
  proj.tensor("mm.model.mlp.3.weight", {kHidden, kHidden});
  proj.tensor("mm.model.mlp.3.bias", {kHidden});
  return proj;
}

std::vector<VisionPair> vision_pairs() {
  std::vector<VisionPair> out;
  {  // gemma.py, Gemma3VisionModel: the pooling's scale 4 unwritten (4 patches a side: 1 token)
    ModelSpec text = hf_gemma2("gemma3");
    image_tokens(text, {"<start_of_image>", "<end_of_image>", "<image_soft_token>"});
    ModelSpec proj = clip_projector("gemma3");
    proj.tensor("mm.input_projection.weight", {8, kHidden}, GGML_TYPE_F16);
    proj.tensor("mm.soft_emb_norm.weight", {8});
    out.push_back({"vision.gemma3", text.write(11), proj.write(12)});
  }
  {  // smolvlm.py, SmolVLMModel: scale 2 and the preprocessor's longest edge always written
    ModelSpec text = hf_llama();
    image_tokens(text, {"<image>"});
    ModelSpec proj = clip_projector("idefics3");
    proj.add("clip.vision.projector.scale_factor", u32_value(2));
    proj.add("clip.vision.preproc_image_size", u32_value(32));
    proj.tensor("mm.model.fc.weight", {kHidden, 8 * 4});
    out.push_back({"vision.idefics3", text.write(13), proj.write(14)});
  }
  // qwenvl.py, Qwen2VLModel and Qwen2VLVisionModel: M-RoPE sections rotating the head's 4
  // elements; the Conv3d's two frames, q, k and v split; the merger over 2 × 2 patches
  const ModelSpec qwen_text = qwen2vl_text();
  {  // Qwen2-VL: LayerNorms, an MLP of fc1 and fc2, the merger's output as feed_forward_length
    ModelSpec proj = qwen2vl_projector("qwen2vl_merger", /*gated=*/false);
    out.push_back({"vision.qwen2vl", qwen_text.write(15), proj.write(16)});
  }
  {  // Qwen2.5-VL: RMSNorms, a gated MLP, full attention every n_wa_pattern layers
    ModelSpec proj = qwen2vl_projector("qwen2.5vl_merger", /*gated=*/true);
    proj.add("clip.use_silu", Value{ValueType::kBool, true});
    proj.add("clip.vision.n_wa_pattern", u32_value(1));
    out.push_back({"vision.qwen2_5_vl", qwen_text.write(17), proj.write(18)});
  }
  // qwen3vl.py (qwen3vl_projector) beside a qwen3vl text model
  out.push_back(
      {"vision.qwen3_vl", qwen2vl_text("qwen3vl").write(19), qwen3vl_projector().write(20)});
  {  // llava.py, LlavaVisionModel (Mistral 3): Pixtral's tower and projector (pixtral_projector),
     // and the text embedding's [IMG_BREAK] row as converters before base.py's filter_tensors
     // wrote it (hf/ leaves it out: the text model holds it)
    ModelSpec text = mistral3_text();
    ModelSpec proj = pixtral_projector();
    ModelSpec with_break = proj;
    with_break.tensor("v.token_embd.img_break", {kHidden});
    out.push_back({"vision.mistral3", text.write(21), with_break.write(22)});
    // Ministral 3's: the same projector beside a ministral3 text model (mistral3.py,
    // Ministral3Model.set_gguf_parameters: YaRN's two keys)
    text.add("mistral3.rope.scaling.yarn_log_multiplier", f32_value(1.0f));
    text.add("mistral3.attention.temperature_scale", f32_value(0.1f));
    out.push_back({"vision.ministral3", text.write(23), proj.write(24)});
  }
  // internvl.py (internvl_projector) beside a qwen2 text model, and InternVL 3.5's beside a
  // qwen3 one
  const ModelSpec internvl = internvl_projector();
  out.push_back({"vision.internvl", internvl_text("qwen2").write(25), internvl.write(26)});
  out.push_back({"vision.internvl3_5", internvl_text("qwen3").write(27), internvl.write(28)});
  return out;
}

std::vector<VisionRefusal> vision_refusals() {
  // SmolVLM's pair (vision_pairs), whose connector is 32 wide: it can hold a Q8_0 block.
  auto idefics3 = [](bool big_endian, std::uint32_t fc_type) {
    ModelSpec text = hf_llama();
    image_tokens(text, {"<image>"});
    ModelSpec proj = clip_projector("idefics3");
    proj.add("clip.vision.projector.scale_factor", u32_value(2));
    proj.add("clip.vision.preproc_image_size", u32_value(32));
    proj.tensor("mm.model.fc.weight", {kHidden, 8 * 4}, static_cast<int>(fc_type));
    text.big_endian = proj.big_endian = big_endian;
    return std::pair{text, proj};
  };
  std::vector<VisionRefusal> out;
  {  // quantized blocks of a big-endian file are served raw only (tree.h, decodes_to_f32)
    auto [text, proj] = idefics3(true, GGML_TYPE_Q8_0);
    out.push_back({"vision_refused.big_endian_q8_0", text.write(13), proj.write(14),
                   "its folder cannot be laid out: tensor 'mm.model.fc.weight': type 8 cannot be "
                   "decoded here"});
  }
  {  // gguf-py decodes every string of a string array too (strict UTF-8)
    auto [text, proj] = idefics3(false, GGML_TYPE_F32);
    proj.add("clip.vision.feature_layer_names", strings({"ln1", "ln\xff"}));
    out.push_back({"vision_refused.string_array_not_utf8", text.write(13), proj.write(14),
                   "the projector's key 'clip.vision.feature_layer_names': value element 1 is "
                   "not valid UTF-8"});
  }
  {  // Mistral3Config's multimodal_projector_bias, which hf/ does not render
    ModelSpec proj = pixtral_projector();
    proj.tensor("mm.1.bias", {kHidden});
    out.push_back({"vision_refused.mistral3_projector_bias", mistral3_text().write(21),
                   proj.write(22),
                   "the projector has 'mm.1.bias': a projector with biases "
                   "(multimodal_projector_bias), which hf/ does not render",
                   "MistralForCausalLM"});
  }
  // A projector is its tensors: one the class does not build is a model other than the one
  // served, refused by the first such name.
  {  // a second layer beside clip.vision.block_count 1: a one-layer tower would drop it
    auto [text, proj] = idefics3(false, GGML_TYPE_F32);
    const std::vector<ModelSpec::Tensor> tensors = proj.tensors;
    for (const ModelSpec::Tensor& t : tensors) {
      if (t.name.starts_with("v.blk.0.")) {
        proj.tensor("v.blk.1." + t.name.substr(8), t.shape);
      }
    }
    out.push_back({"vision_refused.idefics3_layer_past_block_count", text.write(13), proj.write(14),
                   "the projector's tensor 'v.blk.1.attn_q.weight' is not part of the "
                   "Idefics3ForConditionalGeneration its keys describe"});
  }
  {  // linear_2's bias alone (the row refuses linear_1's by its own reason)
    ModelSpec proj = pixtral_projector();
    proj.tensor("mm.2.bias", {kHidden});
    out.push_back({"vision_refused.mistral3_linear_2_bias", mistral3_text().write(21),
                   proj.write(22),
                   "the projector's tensor 'mm.2.bias' is not part of the "
                   "Mistral3ForConditionalGeneration its keys describe",
                   "MistralForCausalLM"});
  }
  {  // InternViT's k norm without its q norm (the row refuses the q norm by its own reason)
    ModelSpec proj = internvl_projector();
    proj.tensor("v.blk.0.attn_k_norm.weight", {8});
    out.push_back({"vision_refused.internvl_k_norm", internvl_text("qwen2").write(25),
                   proj.write(26),
                   "the projector's tensor 'v.blk.0.attn_k_norm.weight' is not part of the "
                   "InternVLForConditionalGeneration its keys describe",
                   "Qwen2ForCausalLM"});
  }
  {  // layer 0's deepstack merger, though clip.vision.is_deepstack_layers flags no layer
    ModelSpec proj = qwen3vl_projector();
    proj.at("clip.vision.is_deepstack_layers") =
        array_value(ValueType::kBool, {Value{ValueType::kBool, false}});
    out.push_back({"vision_refused.qwen3vl_deepstack_not_flagged",
                   qwen2vl_text("qwen3vl").write(19), proj.write(20),
                   "the projector's tensor 'v.deepstack.0.fc1.weight' is not part of the "
                   "Qwen3VLForConditionalGeneration its keys describe",
                   "Qwen3ForCausalLM"});
  }
  {  // M-RoPE sections of 2⁶³ + 1, which twice over wrap to 2 in 64 bits: the sum 4 would pass
     // for the head size 4 (qwen2vl_text's), though no head holds them
    ModelSpec text = qwen2vl_text();
    const Value huge = u_value(ValueType::kUint64, (std::uint64_t{1} << 63) + 1);
    const Value zero = u_value(ValueType::kUint64, 0);
    text.at("qwen2vl.rope.dimension_sections") =
        array_value(ValueType::kUint64, {huge, huge, zero, zero});
    out.push_back({"vision_refused.qwen2vl_mrope_sections_wrap", text.write(15),
                   qwen2vl_projector("qwen2vl_merger", /*gated=*/false).write(16),
                   "the model's qwen2vl.rope.dimension_sections is not three M-RoPE sections and "
                   "a 0 that together rotate its head size (4)",
                   "Qwen2ForCausalLM"});
  }
  return out;
}

std::vector<Fixture> hf_models() {
  return {{"hf.llama", hf_llama().write(1)},
          {"hf.gpt2", hf_gpt2().write(2)},
          {"hf.qwen3moe", hf_qwen3moe().write(3)},
          {"hf.gemma2", hf_gemma2().write(4)},
          {"hf.llama_q4k", hf_llama_q4k().write(5)}};
}

std::vector<Fixture> mlx_models() {
  std::vector<Fixture> out;
  for (const TypeTraits& t : all_types()) {
    if (t.block_size == 1 || !t.to_float || 256 % t.block_size != 0) continue;
    ModelSpec m = hf_llama_q4k(static_cast<GgmlType>(t.id));
    m.at("general.name") = str_value("tiny-" + std::string(t.name));
    out.push_back({"hf.mlx." + std::string(t.name), m.write(100 + t.id)});
  }
  return out;
}

std::vector<HfRefusal> hf_refusals() {
  std::vector<HfRefusal> out;
  auto refuse = [&out](std::string name, const ModelSpec& m, std::string names) {
    out.push_back({"hf_refused." + std::move(name), m.write(7), std::move(names)});
  };
  // Strings that are not UTF-8: gguf-py's GGUFReader (transformers' reader) decodes every
  // string as UTF-8 and raises.
  {
    ModelSpec m = hf_llama();
    m.at("general.architecture") = str_value("llama\xff");
    refuse("architecture_not_utf8", m, "general.architecture");
  }
  {
    ModelSpec m = hf_llama();
    m.at("general.name") = str_value("tiny\xc3(");
    refuse("name_not_utf8", m, "general.name");
  }
  {
    ModelSpec m = hf_llama();
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    for (std::uint64_t i = 3; i < kVocab; ++i) tokens.push_back("\u2581t" + std::to_string(i - 3));
    tokens[5] = "\xe2\x96";  // "▁" cut short
    m.at("tokenizer.ggml.tokens") = strings(std::move(tokens));
    refuse("token_not_utf8", m, "tokenizer.ggml.tokens");
  }
  // A vocabulary that does not match the embedding's rows: from_pretrained refuses the
  // embedding's shape (modeling_utils.py, _load_state_dict_into_meta_model's size check).
  {
    ModelSpec m = hf_llama();
    m.erase("llama.vocab_size");
    std::erase_if(m.kv, [](const auto& e) { return e.first.starts_with("tokenizer."); });
    llama_tokenizer(m, 1, 2, kVocab + 1);  // vocab_size is the tokens' count: 17, not 16
    refuse("tokens_not_embedding_rows", m, "token_embd.weight");
  }
  {
    ModelSpec m = hf_llama();
    m.at("llama.vocab_size") = u32_value(kVocab - 1);
    refuse("vocab_size_not_embedding_rows", m, "token_embd.weight");
  }
  {
    ModelSpec m = hf_llama();
    m.at("llama.vocab_size") = u_value(ValueType::kUint64, std::uint64_t{1} << 40);
    refuse("vocab_size_huge", m, "token_embd.weight");
  }
  // Missing structural keys: LlamaConfig would take its defaults (32 layers, hidden 4096), a
  // model unlike the file.
  {
    ModelSpec m = hf_llama();
    m.erase("llama.block_count");
    refuse("no_block_count", m, "llama.block_count");
  }
  {
    ModelSpec m = hf_llama();
    m.erase("llama.embedding_length");
    refuse("no_embedding_length", m, "llama.embedding_length");
  }
  // Head counts that do not divide the q/k rows: the reverse permutation's reshape fails
  // (LlamaTensorProcessor._reverse_permute_weights).
  {
    ModelSpec m = hf_llama();
    m.at("llama.attention.head_count_kv") = u32_value(3);
    refuse("kv_heads_not_dividing_rows", m, "blk.0.attn_k.weight");
  }
  {
    ModelSpec m = hf_llama();
    m.at("llama.attention.head_count") = u32_value(3);
    refuse("heads_not_dividing_rows", m, "blk.0.attn_q.weight");
  }
  // More experts than the stacks hold: Qwen2MoeTensorProcessor's split raises.
  {
    ModelSpec m = hf_qwen3moe();
    m.at("qwen3moe.expert_count") = u32_value(3);
    refuse("experts_past_the_stack", m, "blk.0.ffn_gate_inp.weight");
  }
  // gpt2: a head count that does not divide the hidden size; GPT2Attention.__init__ raises
  // (transformers/models/gpt2/modeling_gpt2.py), though every tensor has the config's shape.
  {
    ModelSpec m = hf_gpt2();
    m.at("gpt2.attention.head_count") = u32_value(3);
    refuse("gpt2_heads_not_dividing_hidden", m, "gpt2.attention.head_count");
  }
  return out;
}

namespace {

// hf_llama() with the SentencePiece vocabulary `tokens` (ids 0, 1, 2: unk, bos, eos; score
// -id; types `types`) instead of llama_tokenizer's, and the embedding and output rows, F16, as
// many as the tokens: the vocabulary hf/ needs, so only the tokenizer is stressed.
ModelSpec llama_with_vocab(std::vector<std::string> tokens, std::vector<std::int64_t> types) {
  const std::uint64_t n = tokens.size();
  ModelSpec m = hf_llama();
  m.at("llama.vocab_size") = u32_value(n);
  std::erase_if(m.kv, [](const auto& e) { return e.first.starts_with("tokenizer."); });
  std::vector<Value> scores, type_values;
  for (std::uint64_t i = 0; i < n; ++i) {
    scores.push_back(f32_value(-static_cast<float>(i)));
    type_values.push_back(i_value(ValueType::kInt32, types[i]));
  }
  m.add("tokenizer.ggml.model", str_value("llama"));
  m.add("tokenizer.ggml.tokens", strings(std::move(tokens)));
  m.add("tokenizer.ggml.scores", array_value(ValueType::kFloat32, std::move(scores)));
  m.add("tokenizer.ggml.token_type", array_value(ValueType::kInt32, std::move(type_values)));
  m.add("tokenizer.ggml.bos_token_id", u32_value(1));
  m.add("tokenizer.ggml.eos_token_id", u32_value(2));
  m.add("tokenizer.ggml.unknown_token_id", u32_value(0));
  for (ModelSpec::Tensor& t : m.tensors) {
    if (t.name == "token_embd.weight" || t.name == "output.weight") {
      t.shape = {n, kHidden};
      t.type = GGML_TYPE_F16;  // the fewest bytes per row of the float types hf/ splices
    }
  }
  return m;
}

}  // namespace

std::vector<Fixture> cost_shapes(std::size_t scale) {
  if (scale == 0) throw std::invalid_argument("cost_shapes: scale must be at least 1");
  std::vector<Fixture> out;
  const std::vector<std::string> specials = {"<unk>", "<s>", "</s>"};
  const std::vector<std::int64_t> special_types = {2, 3, 3};
  {
    // Every token a control token (type 3): each becomes an added token.
    std::vector<std::string> tokens = specials;
    for (std::size_t i = tokens.size(); i < 500 * scale; ++i) {
      tokens.push_back("<ctl" + std::to_string(i) + ">");
    }
    std::vector<std::int64_t> types(tokens.size(), 3);
    out.push_back({"cost.added_tokens", llama_with_vocab(std::move(tokens), types).write(11)});
  }
  {
    // One run "a" … "a"^k: its bytes grow as k², the merges built from it (every split of every
    // token, each as long as the token) as k³. k ∝ √scale keeps the bytes about linear in scale
    // and the old cost superlinear (scale^1.5), which runs of a fixed k would not show.
    const auto k =
        static_cast<std::size_t>(std::lround(96 * std::sqrt(static_cast<double>(scale))));
    std::vector<std::string> tokens = specials;
    std::vector<std::int64_t> types = special_types;
    for (std::size_t len = 1; len <= k; ++len) {
      tokens.emplace_back(len, 'a');
      types.push_back(1);
    }
    out.push_back({"cost.merges", llama_with_vocab(std::move(tokens), types).write(12)});
  }
  {
    // qwen3moe.expert_count 10 000 000 and 4·scale layers that hold no expert stack, only a norm
    // (F16: one 32-byte aligned block each): the expert loop must not run for them (hf/ now
    // refuses layer 0 without the tensors Qwen3MoeDecoderLayer builds, before any loop).
    ModelSpec m = hparams("qwen3moe");
    m.at("qwen3moe.block_count") = u32_value(4 * scale);
    m.add("qwen3moe.attention.key_length", u32_value(8));
    m.add("qwen3moe.attention.value_length", u32_value(8));
    m.add("qwen3moe.expert_count", u32_value(10'000'000));
    m.add("qwen3moe.expert_used_count", u32_value(1));
    m.add("qwen3moe.expert_feed_forward_length", u32_value(768));
    gpt2_tokenizer(m);
    m.tensor("token_embd.weight", {kVocab, kHidden});
    for (std::size_t i = 0; i < 4 * scale; ++i) {
      m.tensor("blk." + std::to_string(i) + ".attn_norm.weight", {kHidden}, GGML_TYPE_F16);
    }
    m.tensor("output_norm.weight", {kHidden});
    m.tensor("output.weight", {kVocab, kHidden});
    out.push_back({"cost.experts", m.write(13)});
  }
  {
    // hf_llama() and 500·scale one-element tensors named by continuation bytes (0x80..0xBF, 3 of
    // them; more past 64³ tensors): distinct names that all become the same U+FFFD text in
    // model.safetensors' keys, each needing its own "~N".
    ModelSpec m = hf_llama();
    for (std::size_t i = 0; i < 500 * scale; ++i) {
      std::string name;
      for (std::size_t v = i; name.size() < 3 || v > 0; v /= 64) {
        name += static_cast<char>(0x80 + v % 64);
      }
      m.tensor(std::move(name), {1}, GGML_TYPE_F32);
    }
    out.push_back({"cost.names", m.write(14)});
  }
  {
    // 8·scale tokens of 4096 bytes, with scores and no merges: building the merges looks up
    // every split point of each, a prefix as long as the token at worst.
    std::vector<std::string> tokens = specials;
    std::vector<std::int64_t> types = special_types;
    for (std::size_t i = 0; i < 8 * scale; ++i) {
      std::string t = std::to_string(i) + "-";
      t.resize(4096, 'a');
      tokens.push_back(std::move(t));
      types.push_back(1);
    }
    out.push_back({"cost.long_tokens", llama_with_vocab(std::move(tokens), types).write(15)});
  }
  return out;
}

std::vector<Fixture> manifest_seeds() {
  const std::string hex(64, 'a');
  // An OCI image manifest as Ollama writes it (server/manifest.go): config, then layers.
  const auto manifest = [](const std::string& model_layer) {
    return R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",)"
           R"("config":{"mediaType":"application/vnd.docker.container.image.v1+json",)"
           R"("digest":"sha256:)" +
           std::string(64, '0') + R"(","size":485},"layers":[)" + model_layer +
           R"(,{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:)" +
           std::string(64, '1') + R"(","size":1429}]})";
  };
  const auto layer = [](const std::string& digest, const std::string& size) {
    return R"({"mediaType":"application/vnd.ollama.image.model","digest":)" + digest +
           R"(,"size":)" + size + "}";
  };
  const std::string good_digest = "\"sha256:" + hex + "\"";
  const auto text = [](const std::string& name, const std::string& t) {
    return Fixture{name, Bytes(t.begin(), t.end())};
  };
  std::vector<Fixture> out;
  out.push_back(text("manifest.good", manifest(layer(good_digest, "2019393189"))));
  out.push_back(
      text("manifest.annotated",
           manifest(R"({"mediaType":"application/vnd.ollama.image.model","digest":)" + good_digest +
                    R"(,"size":10,"annotations":{"org.opencontainers.image.title":)"
                    R"("m\u00e9t\u00e0","x":[1,2.5e3,-4,true,null]}})")));
  out.push_back(text("manifest.size_string", manifest(layer(good_digest, "\"10\""))));
  out.push_back(text("manifest.size_negative", manifest(layer(good_digest, "-1"))));
  out.push_back(text("manifest.digest_traversal", manifest(layer(R"("sha256:../../x")", "1"))));
  out.push_back(text("manifest.digest_upper",
                     manifest(layer("\"sha256:" + std::string(64, 'A') + "\"", "1"))));
  out.push_back(text("manifest.digest_long",
                     manifest(layer("\"sha256:" + std::string(3000, 'b') + "\"", "1"))));
  out.push_back(text("manifest.digest_array",
                     manifest(layer(std::string(70, '[') + std::string(70, ']'), "1"))));
  // Arrays under a key of the manifest: 64 levels in all are read, 65 refused.
  for (const int levels : {64, 65}) {
    const std::string good = manifest(layer(good_digest, "1"));
    const std::string nest = std::string(levels - 1, '[') + std::string(levels - 1, ']');
    out.push_back(
        text("manifest.nested_" + std::to_string(levels), "{\"x\":" + nest + "," + good.substr(1)));
  }
  out.push_back(text("manifest.digest_object", manifest(layer(R"({"a":{"b":[{}]}})", "1"))));
  out.push_back(text("manifest.no_model_layer",
                     R"({"layers":[{"mediaType":"application/vnd.ollama.image.license"}]})"));
  out.push_back(text("manifest.layers_not_array", R"({"layers":{"mediaType":1}})"));
  out.push_back(text("manifest.syntax", manifest(layer(good_digest, "1")).substr(0, 150)));
  out.push_back(text("manifest.control_byte", "{\"layers\":\"ab\x01\"}"));
  out.push_back(text("manifest.empty", ""));
  return out;
}

std::vector<Fixture> library_name_seeds() {
  const auto text = [](const std::string& name, const std::string& t) {
    return Fixture{name, Bytes(t.begin(), t.end())};
  };
  std::vector<Fixture> out;
  out.push_back(text("names.ollama",
                     "llama3.2:3b\nllama3.2:latest\nsomeone/thing:v1\n"
                     "hf.co/org/repo:Q4_K_M\nregistry.ollama.ai/library/x:y"));
  out.push_back(text("names.folder",
                     "tiny-llama\nmodels/tiny-llama-00001-of-00003.gguf\n"
                     "/lib/a/b-00002-of-00002.gguf\nx-00000-of-00001.gguf\n"
                     "y-00003-of-00002.gguf\n-00001-of-00001.gguf"));
  out.push_back(text("names.clash", "a\na\na~2\na\n%\n\n.\n..\n%2E\n/\n%2F"));
  out.push_back(text("names.escape", std::string("ctl\x01\x1b[2J\x7f\nnul") + '\0' +
                                         "x\nutf8 \xc3\xa9\xe2\x80\xa6\xff"));
  const std::string long_name(240, 'n');
  out.push_back(text("names.long", long_name + "\n" + long_name + "\n" + std::string(300, 'm') +
                                       "\n" + std::string(300, 'm') + "\n" +
                                       std::string(100, '\x01')));
  return out;
}

Bytes pair_vocabulary_llama(std::size_t chars) {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  for (const auto& [key, v] : {std::pair{"llama.block_count", 1u},
                               {"llama.context_length", 128u},
                               {"llama.embedding_length", 16u},
                               {"llama.feed_forward_length", 40u},
                               {"llama.attention.head_count", 4u},
                               {"llama.attention.head_count_kv", 2u}}) {
    g.add_u32(key, v);
  }
  g.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  g.add_string("tokenizer.ggml.model", "llama");
  std::vector<Value> tokens, scores, types;
  auto add_token = [&](std::string t) {
    scores.push_back({ValueType::kFloat32, -static_cast<float>(tokens.size())});
    types.push_back({ValueType::kInt32, std::int64_t{tokens.size() < 3 ? 3 : 1}});
    tokens.push_back({ValueType::kString, std::move(t)});
  };
  for (const char* t : {"<unk>", "<s>", "</s>"}) add_token(t);
  std::vector<std::string> one;
  for (char32_t c = 0x100; c < 0x100 + chars; ++c) {  // two-byte UTF-8 from U+0100
    one.push_back({static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))});
  }
  for (const std::string& c : one) add_token(c);
  for (const std::string& a : one) {
    for (const std::string& b : one) add_token(a + b);
  }
  g.add("tokenizer.ggml.tokens", {ValueType::kArray, Array{ValueType::kString, std::move(tokens)}});
  g.add("tokenizer.ggml.scores",
        {ValueType::kArray, Array{ValueType::kFloat32, std::move(scores)}});
  g.add("tokenizer.ggml.token_type",
        {ValueType::kArray, Array{ValueType::kInt32, std::move(types)}});
  g.add_u32("tokenizer.ggml.bos_token_id", 1);
  g.add_u32("tokenizer.ggml.eos_token_id", 2);
  g.add_u32("tokenizer.ggml.unknown_token_id", 0);
  return g.finish();
}

// --- hf/'s architecture table: a seed per row (the hf fuzz target) ----------------------------

namespace {

// The model's layers of every seed: two, so that per-layer arrays and layer patterns have a
// layer of each kind.
constexpr std::uint64_t kSeedLayers = 2;

// The value of count key `suffix` in a seed: tiny sizes that divide as the classes need (hidden
// 8 of 2 heads of 4; an SSM of inner size 16, 2 heads, 1 group of state 4; MLA ranks of 4 and a
// key of 2 nope + 4 rope dims), and 1 for any count not listed.
std::uint64_t seed_count(std::string_view suffix) {
  static const std::map<std::string_view, std::uint64_t> kCounts = {
      {"block_count", kSeedLayers},
      {"context_length", 64},
      {"embedding_length", 8},
      {"feed_forward_length", 16},
      {"attention.head_count", 2},
      {"attention.head_count_kv", 1},
      {"attention.key_length", 4},
      {"attention.value_length", 4},
      {"attention.key_length_swa", 4},
      {"rope.dimension_count", 4},
      {"rope.scaling.original_context_length", 64},
      {"vocab_size", kVocab},
      {"expert_count", 2},
      {"expert_used_count", 1},
      {"expert_feed_forward_length", 8},
      {"expert_shared_feed_forward_length", 8},
      {"ssm.conv_kernel", 4},
      {"ssm.inner_size", 16},
      {"ssm.state_size", 4},
      {"ssm.time_step_rank", 2},
      {"ssm.group_count", 1},
      {"shortconv.l_cache", 3},
      {"attention.sliding_window", 16},
      {"attention.relative_buckets_count", 8},
      {"decoder_block_count", kSeedLayers},
      {"attention.q_lora_rank", 4},
      {"attention.kv_lora_rank", 4},
      {"attention.key_length_mla", 6},
      {"attention.value_length_mla", 4},
      {"altup.num_inputs", 2},
      {"altup.active_idx", 0},
      {"embedding_length_per_layer_input", 4},
      {"attention.shared_kv_layers", 0},
  };
  const auto it = kCounts.find(suffix);
  return it == kCounts.end() ? 1 : it->second;
}

float seed_number(std::string_view suffix) {
  if (suffix.find("epsilon") != std::string_view::npos) return 1e-5f;
  if (suffix.starts_with("rope.freq_base")) return 10000.0f;
  return 1.0f;
}

// What a row needs beyond the generic keys: tensors its config reads before any weight is mapped
// (hf_config.cpp: t5's gated MLP, UMT5's relative attention bias past layer 0, NemotronH's layer
// pattern from the layers holding a mixer or an MLP), written first with the shapes the class
// gives them; per-layer arrays; other counts.
struct RowSetup {
  std::uint64_t layers = kSeedLayers;
  std::map<std::string_view, std::vector<std::uint64_t>> arrays;
  std::map<std::string_view, std::uint64_t> counts;
  std::vector<std::pair<std::string, std::vector<std::uint64_t>>> first;
};

RowSetup setup_for(const hf::Architecture& row) {
  RowSetup s;
  if (row.gguf_arch == "t5") {
    // In every layer: hf/ refuses a layer unlike layer 0 (hf::uneven_layer), and UMT5 holds its
    // relative attention bias in each (modeling_umt5.py, UMT5Block).
    for (std::uint64_t n = 0; n < s.layers; ++n) {
      s.first.push_back({fmt::format("enc.blk.{}.ffn_gate.weight", n), {16, 8}});  // (F, H)
      for (const char* part : {"enc", "dec"}) {
        if (!row.required_tensor.empty()) {
          s.first.push_back({fmt::format("{}.blk.{}.{}", part, n, row.required_tensor),
                             {8, 2}});  // (buckets, heads)
        }
      }
    }
  }
  if (row.gguf_arch.starts_with("nemotron_h")) {
    // Three layers: attention ('*'), an MLP ('-', or experts 'E' in the MoE form), a mamba
    // mixer ('M'); in_proj (2I + 2GN + R, H) = (2·16 + 2·1·4 + 2, 8).
    const bool moe = row.gguf_arch == "nemotron_h_moe";
    s.layers = 3;
    s.arrays["attention.head_count_kv"] = {1, 0, 0};
    s.arrays["feed_forward_length"] = {0, moe ? 8u : 16u, 0};
    if (moe) {
      s.first.push_back({"blk.1.ffn_up_exps.weight", {2, 8, 8}});
    } else {
      s.first.push_back({"blk.1.ffn_up.weight", {16, 8}});
    }
    s.first.push_back({"blk.2.ssm_in.weight", {42, 8}});
  }
  // As many key heads as value heads: no value-head reorder (hf_weights.cpp, untile_value_heads),
  // whose shapes the probes do not find.
  if (row.gguf_arch.starts_with("qwen35")) s.counts["ssm.group_count"] = 2;
  return s;
}

// A seed's keys for `row`: every key of the row under "<gguf_arch>.", its required key, and the
// per-layer arrays its layer types and periods read (layer 0 set, layer 1 not), a byte-level BPE
// vocabulary of kVocab tokens.
ModelSpec row_keys(const hf::Architecture& row, const RowSetup& setup) {
  const std::string arch(row.gguf_arch);
  ModelSpec m;
  m.add("general.architecture", str_value(arch));
  m.add("general.name", str_value("tiny"));
  std::set<std::string_view> layer_arrays;
  if (!row.layer_types.gguf.empty()) layer_arrays.insert(row.layer_types.gguf);
  for (const hf::LayerPeriod& p : row.layer_periods) {
    if (!p.gguf.empty()) layer_arrays.insert(p.gguf);
  }
  auto per_layer = [&](Value v) {
    return array_value(v.type, std::vector<Value>(setup.layers, v));
  };
  std::set<std::string_view> written;
  auto add_key = [&](std::string_view suffix, hf::ValueKind kind) {
    if (!written.insert(suffix).second) return;
    const std::string key = arch + "." + std::string(suffix);
    using K = hf::ValueKind;
    if (const auto a = setup.arrays.find(suffix); a != setup.arrays.end()) {
      std::vector<Value> items;
      for (const std::uint64_t n : a->second) items.push_back(u32_value(n));
      m.add(key, array_value(ValueType::kUint32, std::move(items)));
      return;
    }
    if (layer_arrays.contains(suffix)) {
      std::vector<Value> items(setup.layers, u32_value(0));
      items[0] = u32_value(std::max<std::uint64_t>(seed_count(suffix), 1));
      m.add(key, array_value(ValueType::kUint32, std::move(items)));
      return;
    }
    std::uint64_t n = seed_count(suffix);
    if (const auto c = setup.counts.find(suffix); c != setup.counts.end()) n = c->second;
    if (suffix == "block_count" || suffix == "decoder_block_count") n = setup.layers;
    if (suffix == "block_count" && !row.appended_layers.empty())
      n += seed_count(row.appended_layers);
    switch (kind) {
      case K::kNumber:
        m.add(key, f32_value(seed_number(suffix)));
        break;
      case K::kTenth:
        m.add(key, f32_value(0.1f));
        break;
      case K::kAny:
        m.add(key, Value{ValueType::kBool, true});
        break;
      case K::kTokenId:
        m.add(key, u32_value(0));
        break;
      case K::kLayerCounts:
        m.add(key, per_layer(u32_value(n)));
        break;
      case K::kNormalCdf:
        m.add(key, per_layer(f32_value(0.0f)));
        break;
      default:
        m.add(key, u32_value(n));
        break;
    }
  };
  if (!row.required_key.empty()) add_key(row.required_key, hf::ValueKind::kCount);
  for (const hf::ConfigKey& k : row.keys) add_key(k.gguf, k.kind);
  for (const std::string_view suffix : layer_arrays) add_key(suffix, hf::ValueKind::kCount);
  for (const auto& [suffix, values] : setup.arrays) add_key(suffix, hf::ValueKind::kCount);
  gpt2_tokenizer(m);
  return m;
}

// What hf/ makes of `m`: the weight map (empty with the reason when refused), and whether the row
// chosen is `row`.
struct SeedMap {
  std::optional<std::vector<HfWeight>> weights;
  std::string reason;
  GgufFile file;
};

SeedMap map_seed(const ModelSpec& m, const hf::Architecture& row) {
  SeedMap out;
  const Bytes bytes = m.write(43);
  out.file = parse_gguf(MemorySource(bytes), "seed.gguf");
  const HfConfigResult config = render_hf_config(out.file);
  if (!config.config) {
    out.reason = config.reason;
    return out;
  }
  const hf::Architecture* chosen =
      hf::with_layer_tensors(hf::find_architecture(config.config->model_type, row.gguf_arch),
                             out.file)
          .row;
  if (chosen != &row) {
    out.reason = "another row: " + config.config->model_type;
    return out;
  }
  HfWeightsResult w = hf_weight_map(out.file);
  out.weights = std::move(w.weights);
  out.reason = std::move(w.reason);
  return out;
}

// "… the config gives [a, b]": the shape the config gives a tensor, from a refusal.
std::optional<std::vector<std::uint64_t>> config_shape(const std::string& reason) {
  const std::string_view marker = "the config gives [";
  const std::size_t at = reason.rfind(marker);
  if (at == std::string::npos || !reason.ends_with("]")) return std::nullopt;
  std::vector<std::uint64_t> out;
  std::string_view s(reason);
  s = s.substr(at + marker.size(), s.size() - at - marker.size() - 1);
  while (!s.empty()) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc()) return std::nullopt;
    out.push_back(n);
    s.remove_prefix(static_cast<std::size_t>(end - s.data()));
    if (s.starts_with(", ")) s.remove_prefix(2);
  }
  return out;
}

using Shapes = std::vector<std::vector<std::uint64_t>>;  // a tensor's, then its parts'

// The GGUF shapes (numpy order) that may give HF shape `x` to an entry with `parts` parts: as it
// is, transposed, with the last two axes swapped, split along rows or columns into the parts,
// and with an expert stack's axis in front.
std::vector<Shapes> candidates(std::vector<std::uint64_t> x, std::size_t parts, bool expert) {
  std::vector<Shapes> out;
  auto push = [&](std::vector<std::uint64_t> s, std::vector<std::uint64_t> p) {
    Shapes c = {s};
    for (std::size_t i = 0; i < parts; ++i) c.push_back(p);
    out.push_back(std::move(c));
  };
  std::vector<std::vector<std::uint64_t>> forms = {x};
  if (x.size() >= 2) {
    auto t = x;
    std::swap(t[t.size() - 1], t[t.size() - 2]);
    forms.push_back(t);
  }
  if (x.size() >= 2 && x.size() != 2) {
    forms.push_back(std::vector<std::uint64_t>(x.rbegin(), x.rend()));
  }
  for (const auto& f : forms) {
    if (parts == 0) {
      push(f, {});
      continue;
    }
    const std::size_t n = f.size();
    // Equal parts along the rows (axis -2) or the last axis, then (gpt-oss) transposed.
    for (const std::size_t axis : {n - 2, n - 1}) {
      if (n < 2 && axis == n - 2) continue;
      if (f[axis] % (parts + 1) == 0) {
        auto s = f;
        s[axis] /= parts + 1;
        push(s, s);
        if (n >= 2) {
          auto t = s;
          std::swap(t[n - 1], t[n - 2]);
          push(t, t);
        }
      }
    }
    // One part of any number of rows (qwen3next's attn_qkv and attn_gate).
    if (parts == 1 && n >= 2) {
      for (std::uint64_t p = 1; p < f[n - 2]; ++p) {
        auto s = f, q = f;
        s[n - 2] -= p;
        q[n - 2] = p;
        push(s, q);
      }
    }
  }
  // MLA's kv_b: (heads·(dn + dv), r) from attn_k_b (heads, r, dn) and attn_v_b (heads, dv, r).
  if (parts == 1 && x.size() == 2 && x[0] % 2 == 0) {
    const std::uint64_t head = x[0] / 2;
    for (std::uint64_t dn = 1; dn < head; ++dn) {
      out.push_back({{2, x[1], dn}, {2, head - dn, x[1]}});
    }
  }
  if (expert) {
    std::vector<Shapes> stacked;
    for (const std::uint64_t e : {2, 1}) {
      for (Shapes c : out) {
        for (auto& s : c) s.insert(s.begin(), e);
        stacked.push_back(std::move(c));
      }
    }
    return stacked;
  }
  return out;
}

// Adds the tensors of `entry` named `prefix` + its GGUF names to `m` with the shapes hf/ accepts
// for `row`, if any: true when the weight map then holds it. `fillers`: the tensors of `m` that
// stand, shaped {1}, for the entries a layer must hold (WeightEntry::optional) until they are
// probed; an entry replaces its own, and its shape is found once the weight map, which checks
// shapes in state_dict order, refuses a filler after it instead of it.
bool add_entry(ModelSpec& m, const hf::Architecture& row, const hf::WeightEntry& entry,
               const std::string& prefix, const std::vector<std::string>& also = {},
               std::set<std::string>* fillers = nullptr) {
  std::vector<std::string> names = {prefix + std::string(entry.gguf)};
  for (const std::string_view then : entry.then) {
    if (!then.empty()) names.push_back(prefix + std::string(then));
  }
  const std::size_t own = names.size();
  auto filler = [&](const std::string& name) { return fillers && fillers->contains(name); };
  auto holds = [&](const ModelSpec& s, const std::string& name) {
    return !filler(name) && std::any_of(s.tensors.begin(), s.tensors.end(),
                                        [&](const ModelSpec::Tensor& t) { return t.name == name; });
  };
  // The same tensors in the other layers `also` names, at once (a row's required tensor must
  // stand in every layer that needs it before the row is chosen, and every tensor not of a layer
  // kind in every layer: hf::uneven_layer).
  std::vector<std::string> layers = {prefix};
  layers.insert(layers.end(), also.begin(), also.end());
  auto in = [&](const std::string& p, std::size_t i) { return p + names[i].substr(prefix.size()); };
  // Held in every layer already: the row's required tensor or a setup's, added first.
  if (std::all_of(layers.begin(), layers.end(),
                  [&](const std::string& p) { return holds(m, in(p, 0)); })) {
    return true;
  }
  std::set<std::string> mine;  // this entry's tensors in `layers`
  for (const std::string& p : layers) {
    for (std::size_t i = 0; i < own; ++i) mine.insert(in(p, i));
  }
  auto done = [&](ModelSpec&& t) {
    m = std::move(t);
    if (fillers) std::erase_if(*fillers, [&](const std::string& n) { return mine.contains(n); });
    return true;
  };
  auto attempt = [&](const Shapes& shapes, std::string* reason) {
    ModelSpec t = m;
    std::erase_if(t.tensors, [&](const ModelSpec::Tensor& x) {
      return filler(x.name) && mine.contains(x.name);
    });
    for (const std::string& p : layers) {
      for (std::size_t i = 0; i < own; ++i) {
        if (!holds(t, in(p, i))) t.tensor(in(p, i), shapes[i]);
      }
    }
    SeedMap r = map_seed(t, row);
    if (reason) *reason = r.reason;
    if (!r.weights) {
      // Past this entry to a filler: its shapes are right.
      const bool own_fault = std::any_of(mine.begin(), mine.end(), [&](const std::string& n) {
        return r.reason.find("'" + n + "'") != std::string::npos;
      });
      const bool filler_fault =
          fillers && std::any_of(fillers->begin(), fillers->end(), [&](const std::string& n) {
            return !mine.contains(n) && r.reason.find("'" + n + "'") != std::string::npos;
          });
      return !own_fault && filler_fault && done(std::move(t));
    }
    // Two GGUF tensors the row maps to one HF name (granitehybrid's shared_mlp from ffn_*_shexp
    // or ffn_*) would write the name twice: a seed holds one of them.
    std::set<std::string_view> hf_names;
    for (const HfWeight& w : *r.weights) {
      if (!hf_names.insert(w.hf_name).second) return false;
    }
    for (const HfWeight& w : *r.weights) {
      if (r.file.tensors[w.source].name == names[0]) return done(std::move(t));
    }
    return false;
  };
  // Probe shapes whose refusal names the shape the config gives: rows a multiple of any head
  // count's doubling, a stack of experts or of one matrix, 1-D.
  std::vector<Shapes> probes;
  for (const std::vector<std::uint64_t>& probe :
       Shapes{{48, 1}, {64, 1}, {2, 48, 1}, {1, 48, 1}, {1}, {2, 48}, {1, 48}, {8, 16}}) {
    probes.push_back(Shapes(names.size(), probe));
  }
  if (names.size() == 2) {
    probes.push_back({{48, 1}, {16, 1}});      // qwen3next: z of the inner size's rows
    probes.push_back({{2, 4, 1}, {2, 1, 4}});  // MLA: k_b (heads, r, dn), v_b (heads, dv, r)
  }
  std::optional<std::vector<std::uint64_t>> x;
  for (const Shapes& probe : probes) {
    std::string reason;
    if (attempt(probe, &reason)) return true;
    if ((x = config_shape(reason))) break;
  }
  if (!x) return false;
  for (const Shapes& c : candidates(*x, names.size() - 1, entry.expert)) {
    std::uint64_t elements = 0;
    for (const auto& s : c) {
      std::uint64_t n = 1;
      for (const std::uint64_t d : s) n *= d;
      elements += n;
    }
    if (elements > 4096) continue;  // a seed stays far below 64 KiB
    if (attempt(c, nullptr)) return true;
  }
  return false;
}

// The group of `row`'s layer tensors of a kind that holds `tensor`, else nullptr.
const hf::LayerGroup* group_of(const hf::Architecture& row, std::string_view tensor) {
  for (const hf::LayerGroup& g : row.layer_groups) {
    if (std::find(g.tensors.begin(), g.tensors.end(), tensor) != g.tensors.end()) return &g;
  }
  return nullptr;
}

}  // namespace

std::vector<HfRowSeed> hf_row_seeds() {
  std::vector<HfRowSeed> out;
  const auto& rows = hf::architectures();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const hf::Architecture& row = rows[i];
    HfRowSeed seed;
    seed.index = i;
    seed.row = fmt::format("{}/{}/{}", row.gguf_arch, row.model_type, row.class_name);
    if (!row.required_tensor.empty()) seed.row += "+" + std::string(row.required_tensor);
    seed.name = fmt::format("hf_row.{:02d}.{}", i, row.model_type);
    const RowSetup setup = setup_for(row);
    ModelSpec m = row_keys(row, setup);
    // A row without a state_dict (mistral): an embedding, so that hf/ is refused as the weight
    // map refuses it, not laid out as a vocabulary-only file's tokenizer folder.
    if (row.layer.empty()) m.tensor("token_embd.weight", {kVocab, 8});
    for (const auto& [name, shape] : setup.first) m.tensor(name, shape);
    const bool enc_dec = !row.decoder_prefix.empty();
    const std::string blk = enc_dec ? "enc.blk." : "blk.";
    // A placeholder in every layer while the entries are probed one by one: hf/ needs each layer
    // to hold a tensor (a layer is its tensors), and skips one no row maps. Taken out at the end.
    constexpr std::string_view kPlaceholder = "seed_placeholder";
    std::vector<std::string> layer_prefixes;
    for (std::uint64_t n = 0; n < setup.layers; ++n) {
      layer_prefixes.push_back(fmt::format("{}{}.", blk, n));
      if (enc_dec) layer_prefixes.push_back(fmt::format("dec.blk.{}.", n));
    }
    for (const std::string& p : layer_prefixes) m.tensor(p + std::string(kPlaceholder), {1});
    // A filler for each tensor the layers must hold (hf::uneven_layer refuses a layer 0 without
    // one) in every layer, while the entries are probed (add_entry); one of entries of one HF
    // name (alternatives).
    std::set<std::string> fillers;
    // An expert stack's filler passes the stack's count (hf_weights.cpp, add_experts, checks
    // every stack's count before any expert's shape), so that an entry before it is not taken
    // for probed whatever its shape.
    auto fill_one = [&](const std::string& name, bool expert = false) {
      if (std::none_of(m.tensors.begin(), m.tensors.end(),
                       [&](const ModelSpec::Tensor& t) { return t.name == name; })) {
        m.tensor(name,
                 expert ? std::vector<std::uint64_t>{8, 1, 1} : std::vector<std::uint64_t>{1});
        fillers.insert(name);
      }
    };
    // The leading layers of the row's kind (hf::LeadingLayers): all but none, as a seed's
    // attention.shared_kv_layers is 0, or the first `count`.
    const hf::LeadingLayers& lead = row.leading_layers;
    const std::uint64_t leading =
        lead.count != 0 ? std::min(lead.count, setup.layers) : setup.layers;
    // Whether layer n is of a group's kind: the leading layers of lead.kind, or layer 0 where the
    // kind is the row's layer_types' nonzero one (row_keys sets layer 0's element only).
    auto of_kind = [&](const hf::LayerGroup& g, std::uint64_t n) {
      if (g.layer_type == lead.kind) return n < leading;
      return !row.layer_types.gguf.empty() && g.layer_type == row.layer_types.nonzero && n == 0;
    };
    auto fill = [&](const std::vector<hf::WeightEntry>& entries, std::string_view under) {
      std::set<std::string_view> hf_names;
      for (const hf::WeightEntry& e : entries) {
        // A group of alternatives in every layer too (each layer holds one of them wholly:
        // hf::LayerGroup); one a layer may lack in the layers of its kind only (T5's relative
        // attention bias past layer 0 makes it UMT5; GLM-5's indexer in its "full" layers).
        const hf::LayerGroup* group = group_of(row, e.gguf);
        const bool may_lack = group && group->choice == 0;
        if (e.optional || !hf_names.insert(e.hf).second) continue;
        for (std::uint64_t n = 0; n < setup.layers; ++n) {
          if (may_lack && !of_kind(*group, n)) continue;
          for (const std::string_view name : {e.gguf, e.then[0], e.then[1]}) {
            if (!name.empty()) fill_one(fmt::format("{}{}.{}", under, n, name), e.expert);
          }
        }
      }
    };
    fill(row.layer, blk);
    fill(row.decoder_layer, "dec.blk.");
    // The row's own layer tensor first, a filler in every layer that needs it, so that its row
    // is the one chosen from then on (probed in its place below).
    for (const std::string& p : layer_prefixes) {
      const std::uint64_t n = std::stoull(p.substr(p.find("blk.") + 4));
      if (!row.required_tensor.empty() && n >= row.required_from_layer) {
        fill_one(p + std::string(row.required_tensor));
      }
    }
    // Layer 0's entries in state_dict order (so that a filler the weight map refuses comes after
    // the entry probed), each in every layer at once (hf/ refuses a layer unlike layer 0:
    // hf::uneven_layer) but those the row lets differ by layer kind; then those, layer by layer.
    auto add_layers = [&](const std::vector<hf::WeightEntry>& entries, std::string_view under) {
      std::vector<std::string> prefixes;
      for (std::uint64_t n = 0; n < setup.layers; ++n) {
        prefixes.push_back(fmt::format("{}{}.", under, n));
      }
      if (prefixes.empty()) return;
      const std::vector<std::string> others(prefixes.begin() + 1, prefixes.end());
      auto is_varying = [&](const hf::WeightEntry& e) { return group_of(row, e.gguf) != nullptr; };
      auto has = [&](const std::string& name) {
        return std::any_of(m.tensors.begin(), m.tensors.end(),
                           [&](const ModelSpec::Tensor& t) { return t.name == name; });
      };
      auto probe = [&](const hf::WeightEntry& e, const std::string& p,
                       const std::vector<std::string>& also) {
        // An entry of the same HF name held (granitehybrid's shared MLP as ffn_*_shexp or
        // ffn_*): a seed holds one of them.
        for (const hf::WeightEntry& other : entries) {
          if (&other != &e && other.hf == e.hf && has(p + std::string(other.gguf))) return;
        }
        // The rest of the entry's group in the layer, as fillers: a layer holds a group wholly
        // or not at all (hf::LayerGroup). One a layer may lack, in the first layer only (T5's
        // relative attention bias past it makes UMT5).
        const hf::LayerGroup* group = group_of(row, e.gguf);
        if (group && group->choice == 0 && p != prefixes[0]) group = nullptr;
        for (const std::string_view name : group ? group->tensors : decltype(group->tensors){}) {
          for (const hf::WeightEntry& other : entries) {
            if (!other.optional &&
                (other.gguf == name || other.then[0] == name || other.then[1] == name)) {
              fill_one(p + std::string(name), other.expert);
            }
          }
        }
        add_entry(m, row, e, p, also, &fillers);
      };
      for (const hf::WeightEntry& e : entries) {
        probe(e, prefixes[0], is_varying(e) ? std::vector<std::string>{} : others);
      }
      for (const std::string& p : others) {
        for (const hf::WeightEntry& e : entries) {
          if (is_varying(e)) probe(e, p, {});
        }
      }
    };
    for (const hf::WeightEntry& e : row.before) add_entry(m, row, e, "", {}, &fillers);
    add_layers(row.layer, blk);
    for (const hf::WeightEntry& e : row.between) add_entry(m, row, e, "", {}, &fillers);
    add_layers(row.decoder_layer, "dec.blk.");
    for (const hf::WeightEntry& e : row.after) add_entry(m, row, e, "", {}, &fillers);
    std::erase_if(m.tensors, [&](const ModelSpec::Tensor& t) {
      return t.name.ends_with(kPlaceholder) || fillers.contains(t.name);
    });
    // The entries the weight map holds, by their GGUF tensor (after any layer prefix).
    const SeedMap final_map = map_seed(m, row);
    std::set<std::string_view> mapped;
    if (final_map.weights) {
      for (const HfWeight& w : *final_map.weights) {
        std::string_view name = final_map.file.tensors[w.source].name;
        if (name.starts_with("enc.blk.") || name.starts_with("dec.blk.")) name.remove_prefix(4);
        if (name.starts_with("blk.")) name.remove_prefix(name.find('.', 4) + 1);
        mapped.insert(name);
      }
    }
    std::set<std::string> missing;
    std::set<std::string_view> hf_names;  // entries of one HF name are alternatives
    for (const auto* list :
         {&row.before, &row.layer, &row.between, &row.decoder_layer, &row.after}) {
      for (const hf::WeightEntry& e : *list) hf_names.insert(e.hf);
    }
    seed.entries = hf_names.size();
    for (const std::string_view hf_name : hf_names) {
      bool held = false;
      for (const auto* list :
           {&row.before, &row.layer, &row.between, &row.decoder_layer, &row.after}) {
        for (const hf::WeightEntry& e : *list) held |= e.hf == hf_name && mapped.contains(e.gguf);
      }
      if (held) {
        ++seed.tensors;
      } else {
        missing.insert(std::string(hf_name));
      }
    }
    seed.bytes = m.write(static_cast<std::uint32_t>(100 + i));
    const GgufFile f = parse_gguf(MemorySource(seed.bytes), seed.name);
    std::vector<std::string> warnings;
    const FolderResult hf = hf_folder_layout(f, TreeOptions{}, warnings);
    if (!final_map.weights) {
      seed.missing = "no weight map: " + final_map.reason;
    } else if (!hf.folder) {
      seed.missing = "no hf/: " + hf.reason;
    } else if (!missing.empty()) {
      seed.missing = fmt::format("without {}", fmt::join(missing, ", "));
    }
    out.push_back(std::move(seed));
  }
  return out;
}

std::string hf_dictionary() {
  std::set<std::string> entries;
  for (const hf::Architecture& row : hf::architectures()) {
    const std::string arch(row.gguf_arch);
    entries.insert(arch);
    entries.insert(std::string(row.model_type));
    auto key = [&](std::string_view suffix) {
      if (!suffix.empty()) entries.insert(arch + "." + std::string(suffix));
    };
    for (const hf::ConfigKey& k : row.keys) key(k.gguf);
    key(row.required_key);
    key(row.layer_types.gguf);
    key(row.appended_layers);
    for (const hf::LayerPeriod& p : row.layer_periods) key(p.gguf);
    auto tensors = [&](const std::vector<hf::WeightEntry>& list,
                       std::initializer_list<std::string_view> prefixes) {
      for (const hf::WeightEntry& e : list) {
        for (const std::string_view p : prefixes) {
          entries.insert(std::string(p) + std::string(e.gguf));
          for (const std::string_view then : e.then) {
            if (!then.empty()) entries.insert(std::string(p) + std::string(then));
          }
        }
      }
    };
    tensors(row.before, {""});
    tensors(row.between, {""});
    tensors(row.after, {""});
    if (row.decoder_prefix.empty()) {
      tensors(row.layer, {"blk.0.", "blk.1."});
    } else {
      tensors(row.layer, {"enc.blk.0.", "enc.blk.1."});
      tensors(row.decoder_layer, {"dec.blk.0.", "dec.blk.1."});
    }
  }
  for (const char* k :
       {"general.architecture", "general.name", "tokenizer.ggml.model", "tokenizer.ggml.pre",
        "tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
        "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
        "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"}) {
    entries.insert(k);
  }
  // libFuzzer's dictionary format (docs/LibFuzzer: "kw1=\"blah\"", or an unnamed "blah"): one
  // quoted entry a line, with \\, \" and \xNN escapes.
  std::string out;
  for (const std::string& e : entries) {
    out += '"';
    for (const char ch : e) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '\\' || c == '"') {
        out += '\\';
        out += ch;
      } else if (c < 0x20 || c >= 0x7f) {
        out += fmt::format("\\x{:02X}", c);
      } else {
        out += ch;
      }
    }
    out += "\"\n";
  }
  return out;
}

}  // namespace ggufs::corpus
