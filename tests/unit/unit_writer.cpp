// Unit tests of our own GGUF writer (read back by the parser) and our own quantizers (decoded by
// the kernels), and of the ggufs-sample tool that uses both.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/half.h"
#include "ggufs/quantize.h"
#include "test_util.h"

namespace ggufs::test {
namespace {

// --- helpers --------------------------------------------------------------------------------

Value uval(ValueType t, std::uint64_t v) { return Value{t, v}; }
Value ival(ValueType t, std::int64_t v) { return Value{t, v}; }
Value sval(std::string s) { return Value{ValueType::kString, std::move(s)}; }
Value aval(ValueType elem, std::vector<Value> items) {
  return Value{ValueType::kArray, Array{elem, std::move(items)}};
}

/// Expects `got` to be `want` exactly: type, variant alternative and value (floats bitwise).
void expect_same_value(const Value& want, const Value& got, const std::string& where) {
  ASSERT_EQ(static_cast<int>(want.type), static_cast<int>(got.type)) << where;
  ASSERT_EQ(want.data.index(), got.data.index()) << where;
  if (const auto* a = std::get_if<Array>(&want.data)) {
    const auto& b = std::get<Array>(got.data);
    ASSERT_EQ(static_cast<int>(a->elem_type()), static_cast<int>(b.elem_type())) << where;
    ASSERT_EQ(a->size(), b.size()) << where;
    for (std::size_t i = 0; i < a->size(); ++i) {
      expect_same_value(a->at(i), b.at(i), where + "[" + std::to_string(i) + "]");
    }
  } else if (const auto* f = std::get_if<float>(&want.data)) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(*f),
              std::bit_cast<std::uint32_t>(std::get<float>(got.data)))
        << where;
  } else if (const auto* d = std::get_if<double>(&want.data)) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(*d),
              std::bit_cast<std::uint64_t>(std::get<double>(got.data)))
        << where;
  } else if (const auto* u = std::get_if<std::uint64_t>(&want.data)) {
    EXPECT_EQ(*u, std::get<std::uint64_t>(got.data)) << where;
  } else if (const auto* i = std::get_if<std::int64_t>(&want.data)) {
    EXPECT_EQ(*i, std::get<std::int64_t>(got.data)) << where;
  } else if (const auto* b = std::get_if<bool>(&want.data)) {
    EXPECT_EQ(*b, std::get<bool>(got.data)) << where;
  } else {
    EXPECT_EQ(std::get<std::string>(want.data), std::get<std::string>(got.data)) << where;
  }
}

struct TensorSpec {
  std::string name;
  std::uint32_t type;
  std::vector<std::uint64_t> ne;
  std::vector<std::uint8_t> data;
};

std::vector<float> ramp(std::size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i));
  return v;
}

/// Every value type, including nesting, empty arrays and strings with control characters.
std::vector<std::pair<std::string, Value>> all_kinds_of_values() {
  return {
      {"test.u8", uval(ValueType::kUint8, 255)},
      {"test.i8", ival(ValueType::kInt8, -128)},
      {"test.u16", uval(ValueType::kUint16, 65535)},
      {"test.i16", ival(ValueType::kInt16, -32768)},
      {"test.u32", uval(ValueType::kUint32, 4000000000u)},
      {"test.i32", ival(ValueType::kInt32, -2000000000)},
      {"test.u64", uval(ValueType::kUint64, 0xfedcba9876543210u)},
      {"test.i64", ival(ValueType::kInt64, std::numeric_limits<std::int64_t>::min())},
      {"test.f32", Value{ValueType::kFloat32, -1.5e-7f}},
      {"test.f64", Value{ValueType::kFloat64, 3.141592653589793}},
      {"test.bool_true", Value{ValueType::kBool, true}},
      {"test.bool_false", Value{ValueType::kBool, false}},
      {"test.string", sval("line one\nline\ttwo \xe2\x96\x81 \xc3\xa9")},
      {"test.empty_string", sval("")},
      {"test.strings", aval(ValueType::kString, {sval("a"), sval("\n"), sval("")})},
      {"test.floats", aval(ValueType::kFloat32,
                           {Value{ValueType::kFloat32, 0.5f}, Value{ValueType::kFloat32, -0.0f}})},
      {"test.int32s",
       aval(ValueType::kInt32, {ival(ValueType::kInt32, -1), ival(ValueType::kInt32, 7)})},
      {"test.empty_array", aval(ValueType::kUint8, {})},
      {"test.nested",
       aval(ValueType::kArray, {aval(ValueType::kUint16, {uval(ValueType::kUint16, 1)}),
                                aval(ValueType::kString, {sval("x")})})},
  };
}

/// Tensors of several types and 1–4 dimensions, with sizes that are not multiples of 32.
std::vector<TensorSpec> some_tensors() {
  return {
      {"a.f32", GGML_TYPE_F32, {5}, quantize(GGML_TYPE_F32, ramp(5))},
      {"b.f16", GGML_TYPE_F16, {3, 2}, quantize(GGML_TYPE_F16, ramp(6))},
      {"c.q8_0", GGML_TYPE_Q8_0, {64, 3}, quantize(GGML_TYPE_Q8_0, ramp(192))},
      {"d.f32_3d", GGML_TYPE_F32, {2, 3, 4}, quantize(GGML_TYPE_F32, ramp(24))},
      {"e.q4_k", GGML_TYPE_Q4_K, {256}, quantize(GGML_TYPE_Q4_K, ramp(256))},
      {"f.bf16_4d", GGML_TYPE_BF16, {1, 2, 1, 3}, quantize(GGML_TYPE_BF16, ramp(6))},
      {"g.q6_k", GGML_TYPE_Q6_K, {512, 1}, quantize(GGML_TYPE_Q6_K, ramp(512))},
  };
}

/// Builds a file, parses it, and checks every key/value and tensor comes back exactly.
/// In a big-endian file the caller supplies tensor data in that order, so the stored bytes are
/// compared as written.
void expect_round_trip(std::uint32_t alignment, std::uint32_t version = 3,
                       bool big_endian = false) {
  GgufWriter w;
  if (alignment != 32) w.set_alignment(alignment);
  w.set_format(version, big_endian);
  const auto kvs = all_kinds_of_values();
  for (const auto& [k, v] : kvs) w.add(k, v);
  const auto tensors = some_tensors();
  for (const auto& t : tensors) w.add_tensor(t.name, t.type, t.ne, t.data);
  const std::vector<std::uint8_t> bytes = w.finish();

  const GgufFile f = parse_gguf(MemorySource(bytes), "mem.gguf");
  EXPECT_EQ(f.version, version);
  EXPECT_EQ(f.big_endian, big_endian);
  EXPECT_EQ(f.file_size, bytes.size());
  EXPECT_EQ(f.alignment, alignment);
  EXPECT_EQ(f.data_offset % alignment, 0u);
  EXPECT_EQ(f.tensor_count, tensors.size());

  // general.alignment comes first when it is not the default.
  const std::size_t extra = alignment != 32 ? 1 : 0;
  ASSERT_EQ(f.kv_count, kvs.size() + extra);
  ASSERT_EQ(f.kv.size(), kvs.size() + extra);
  if (extra) {
    EXPECT_EQ(f.kv[0].key, "general.alignment");
    expect_same_value(uval(ValueType::kUint32, alignment), f.kv[0].value, "general.alignment");
  }
  for (std::size_t i = 0; i < kvs.size(); ++i) {
    EXPECT_EQ(f.kv[i + extra].key, kvs[i].first);
    expect_same_value(kvs[i].second, f.kv[i + extra].value, kvs[i].first);
  }

  ASSERT_EQ(f.tensors.size(), tensors.size());
  std::uint64_t end_of_previous = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorSpec& want = tensors[i];
    const TensorInfo& got = f.tensors[i];
    SCOPED_TRACE(want.name);
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.type, want.type);
    ASSERT_EQ(got.n_dims, want.ne.size());
    for (std::size_t d = 0; d < 4; ++d) EXPECT_EQ(got.ne[d], d < want.ne.size() ? want.ne[d] : 1u);
    EXPECT_EQ(got.offset % alignment, 0u);
    EXPECT_EQ(got.file_offset, f.data_offset + got.offset);
    // Packed in order: the next aligned offset after the previous tensor.
    EXPECT_EQ(got.offset, (end_of_previous + alignment - 1) / alignment * alignment);
    ASSERT_TRUE(got.n_bytes.has_value());
    ASSERT_EQ(*got.n_bytes, want.data.size());
    ASSERT_LE(got.file_offset + want.data.size(), bytes.size());
    EXPECT_TRUE(std::equal(want.data.begin(), want.data.end(), bytes.begin() + got.file_offset));
    end_of_previous = got.offset + want.data.size();
  }
  EXPECT_EQ(f.data_offset + end_of_previous, bytes.size());  // no padding after the last tensor
}

std::vector<float> decode(std::uint32_t type, std::span<const std::uint8_t> bytes, std::size_t n) {
  const TypeTraits* t = type_traits(type);
  std::vector<float> out(n);
  if (!t || !t->to_float) {
    ADD_FAILURE() << "no decoder for type " << type;
    return out;
  }
  EXPECT_EQ(bytes.size(), n / t->block_size * t->type_size);
  t->to_float(bytes.data(), out.data(), n / t->block_size);
  return out;
}

// --- writer -------------------------------------------------------------------------------

TEST(Writer, ExactBytesOfATinyFile) {
  GgufWriter w;
  w.add("a", uval(ValueType::kUint8, 7));
  w.add_tensor("t", GGML_TYPE_F32, {1}, {0x00, 0x00, 0x80, 0x3f});
  std::vector<std::uint8_t> want = {'G', 'G', 'U', 'F', 3, 0, 0, 0,       // magic, version
                                    1,   0,   0,   0,   0, 0, 0, 0,       // tensor_count
                                    1,   0,   0,   0,   0, 0, 0, 0,       // kv_count
                                    1,   0,   0,   0,   0, 0, 0, 0, 'a',  // key
                                    0,   0,   0,   0,   7,                // uint8 7
                                    1,   0,   0,   0,   0, 0, 0, 0, 't',  // tensor name
                                    1,   0,   0,   0,                     // n_dims
                                    1,   0,   0,   0,   0, 0, 0, 0,       // ne[0]
                                    0,   0,   0,   0,                     // F32
                                    0,   0,   0,   0,   0, 0, 0, 0};      // offset
  ASSERT_EQ(want.size(), 71u);
  want.resize(96, 0);  // padding to 32
  for (std::uint8_t b : {0x00, 0x00, 0x80, 0x3f}) want.push_back(b);
  EXPECT_EQ(w.finish(), want);
}

TEST(Writer, EmptyFileIsHeaderAndPadding) {
  GgufWriter w;
  const auto bytes = w.finish();
  ASSERT_EQ(bytes.size(), 32u);
  EXPECT_EQ(bytes[0], 'G');
  EXPECT_EQ(bytes[4], 3);
  EXPECT_TRUE(std::all_of(bytes.begin() + 8, bytes.end(), [](std::uint8_t b) { return b == 0; }));
}

TEST(Writer, ByteWriterIsLittleEndian) {
  ByteWriter b;
  b.u16(0x0102);
  b.u32(0x03040506);
  b.u64(0x0708090a0b0c0d0eULL);
  b.f32(1.0f);
  b.f64(-2.0);
  b.str("hi");
  b.pad_to(8);
  const std::vector<std::uint8_t> want = {
      0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08, 0x07,
      0x00, 0x00, 0x80, 0x3f, 0,    0,    0,    0,    0,    0,    0,    0xc0, 2,    0,
      0,    0,    0,    0,    0,    0,    'h',  'i',  0,    0,    0,    0};
  EXPECT_EQ(b.data(), want);
}

TEST(Writer, ByteWriterRefusesAValueOfTheWrongShape) {
  ByteWriter b;
  EXPECT_THROW(b.value(Value{ValueType::kUint32, std::string("x")}), std::invalid_argument);
  EXPECT_THROW(b.value(Value{ValueType::kString, std::uint64_t{1}}), std::invalid_argument);
  EXPECT_THROW(b.value(aval(ValueType::kUint8, {sval("x")})), std::invalid_argument);
}

TEST(Writer, ParserGetsBackEveryKeyValueAndTensor) { expect_round_trip(32); }

TEST(Writer, Version1And2FilesRoundTrip) {
  expect_round_trip(32, 1);
  expect_round_trip(64, 1);
  expect_round_trip(32, 2);
}

TEST(Writer, BigEndianFilesRoundTrip) {
  expect_round_trip(32, 3, true);
  expect_round_trip(64, 2, true);
  expect_round_trip(32, 1, true);
}

TEST(Writer, ByteWriterIsBigEndianAndVersion1SizesAre32BitWhenAsked) {
  ByteWriter b(/*big_endian=*/true, /*version=*/1);
  b.u16(0x0102);
  b.u32(0x03040506);
  b.u64(0x0708090a0b0c0d0eULL);
  b.f32(1.0f);
  b.str("hi");
  const std::vector<std::uint8_t> want = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                                          0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x3f, 0x80,
                                          0x00, 0x00, 0,    0,    0,    2,    'h',  'i'};
  EXPECT_EQ(b.data(), want);
}

TEST(Writer, NonDefaultAlignmentIsWrittenAndHonoured) {
  expect_round_trip(64);
  expect_round_trip(256);
}

TEST(Writer, ExplicitAlignmentKeyIsNotDuplicated) {
  GgufWriter w;
  w.set_alignment(64);
  w.add_string("general.name", "x");
  w.add_u32("general.alignment", 64);
  w.add_tensor("t", GGML_TYPE_F32, {3}, quantize(GGML_TYPE_F32, ramp(3)));
  w.add_tensor("u", GGML_TYPE_F32, {3}, quantize(GGML_TYPE_F32, ramp(3)));
  const GgufFile f = parse_gguf(MemorySource(w.finish()), "mem.gguf");
  ASSERT_EQ(f.kv.size(), 2u);
  EXPECT_EQ(f.kv[0].key, "general.name");
  EXPECT_EQ(f.kv[1].key, "general.alignment");
  EXPECT_EQ(f.alignment, 64u);
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors[1].offset, 64u);
}

TEST(Writer, DefaultAlignmentWritesNoKey) {
  GgufWriter w;
  w.add_f32("x.f", 2.5f);
  const GgufFile f = parse_gguf(MemorySource(w.finish()), "mem.gguf");
  ASSERT_EQ(f.kv.size(), 1u);
  EXPECT_EQ(f.kv[0].key, "x.f");
  EXPECT_EQ(f.alignment, 32u);
}

TEST(Writer, ZeroAlignmentIsRefused) {
  GgufWriter w;
  w.set_alignment(0);
  EXPECT_THROW(w.finish(), std::invalid_argument);
}

TEST(Writer, StreamedTensorsEqualInMemoryOnesAndWriteFileEqualsFinish) {
  const std::vector<std::uint8_t> data = quantize(GGML_TYPE_Q8_0, ramp(32 * 100));
  GgufWriter mem;
  GgufWriter streamed;
  for (GgufWriter* w : {&mem, &streamed}) {
    w->add_string("general.name", "stream");
    w->add_tensor("first", GGML_TYPE_F32, {3}, quantize(GGML_TYPE_F32, ramp(3)));
  }
  mem.add_tensor("big", GGML_TYPE_Q8_0, {32, 100}, data);
  streamed.add_tensor_stream(
      "big", GGML_TYPE_Q8_0, {32, 100}, data.size(), [&](const GgufWriter::ByteSink& sink) {
        // Uneven chunks, including an empty one.
        std::span<const std::uint8_t> rest(data);
        for (std::size_t n : {std::size_t{1}, std::size_t{0}, std::size_t{1000}, std::size_t{77}}) {
          sink(rest.first(n));
          rest = rest.subspan(n);
        }
        sink(rest);
      });
  const auto bytes = mem.finish();
  EXPECT_EQ(streamed.finish(), bytes);

  TempDir dir;
  const auto path = dir.path() / "out.gguf";
  streamed.write_file(path.string());
  EXPECT_EQ(read_file(path), bytes);
  const GgufFile f = parse_gguf(FileSource(path.string()), path.string());
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors[1].name, "big");
  EXPECT_EQ(f.tensors[1].n_bytes, data.size());
}

TEST(Writer, StreamedTensorOfTheWrongSizeIsRefusedAndLeavesNoFile) {
  for (std::size_t delivered : {std::size_t{10}, std::size_t{12}}) {
    GgufWriter w;
    w.add_tensor_stream("t", GGML_TYPE_F32, {3}, 11, [=](const GgufWriter::ByteSink& sink) {
      sink(std::vector<std::uint8_t>(delivered, 1));
    });
    EXPECT_THROW(w.finish(), std::logic_error);
    TempDir dir;
    const auto path = dir.path() / "out.gguf";
    EXPECT_THROW(w.write_file(path.string()), std::logic_error);
    EXPECT_FALSE(std::filesystem::exists(path));
  }
}

TEST(Writer, UnwritablePathThrowsIoError) {
  TempDir dir;
  GgufWriter w;
  EXPECT_THROW(w.write_file((dir.path() / "no-such-dir" / "x.gguf").string()), IoError);
  EXPECT_THROW(w.write_file(dir.path().string()), IoError);  // a directory
}

// --- the ggufs-sample tool ------------------------------------------------------------------

int run_status(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#define REQUIRE_SAMPLE_BINARY()                       \
  const std::string sample_bin = GGUFS_SAMPLE_BINARY; \
  if (!std::filesystem::exists(sample_bin))           \
  GTEST_SKIP() << sample_bin << " is not built (target ggufs-sample)"

TEST(WriterSampleTool, WritesTheSampleModel) {
  REQUIRE_SAMPLE_BINARY();
  TempDir dir;
  const auto path = dir.path() / "sample.gguf";
  ASSERT_EQ(run_status(sample_bin + " '" + path.string() + "'"), 0);
  const GgufFile f = parse_gguf(FileSource(path.string()), path.string());

  struct Want {
    const char* name;
    std::uint32_t type;
    std::vector<std::uint64_t> ne;
  };
  // A llama of hidden size 256, 4 heads of 64 (2 for k and v), feed-forward size 512 and 384
  // tokens, in llama.cpp's layout: ne = [input, output].
  const std::vector<Want> want = {{"token_embd.weight", GGML_TYPE_Q4_K, {256, 384}},
                                  {"blk.0.attn_norm.weight", GGML_TYPE_F32, {256}},
                                  {"blk.0.attn_q.weight", GGML_TYPE_Q8_0, {256, 256}},
                                  {"blk.0.attn_k.weight", GGML_TYPE_F16, {256, 128}},
                                  {"blk.0.attn_v.weight", GGML_TYPE_Q6_K, {256, 128}},
                                  {"blk.0.attn_output.weight", GGML_TYPE_Q4_K, {256, 256}},
                                  {"blk.0.ffn_norm.weight", GGML_TYPE_F32, {256}},
                                  {"blk.0.ffn_gate.weight", GGML_TYPE_Q4_K, {256, 512}},
                                  {"blk.0.ffn_up.weight", GGML_TYPE_Q4_K, {256, 512}},
                                  {"blk.0.ffn_down.weight", GGML_TYPE_Q6_K, {512, 256}},
                                  {"output_norm.weight", GGML_TYPE_F32, {256}},
                                  {"output.weight", GGML_TYPE_Q6_K, {256, 384}}};
  ASSERT_EQ(f.tensors.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    const TensorInfo& t = f.tensors[i];
    EXPECT_EQ(t.name, want[i].name);
    EXPECT_EQ(t.type, want[i].type);
    ASSERT_EQ(t.n_dims, want[i].ne.size());
    for (std::size_t d = 0; d < want[i].ne.size(); ++d) EXPECT_EQ(t.ne[d], want[i].ne[d]);
    // Smooth values of moderate size: decoded, finite, within [-1.5, 1.5], not all zero.
    std::vector<std::uint8_t> raw(*t.n_bytes);
    FileSource(path.string()).read_at(t.file_offset, raw.data(), raw.size());
    const auto v = decode(t.type, raw, t.n_elements);
    float max_abs = 0;
    for (float x : v) {
      ASSERT_TRUE(std::isfinite(x));
      max_abs = std::max(max_abs, std::fabs(x));
    }
    EXPECT_GT(max_abs, 0.1f);
    EXPECT_LT(max_abs, 1.5f);
  }

  auto find = [&](std::string_view key) -> const Value* {
    for (const KeyValue& kv : f.kv) {
      if (kv.key == key) return &kv.value;
    }
    ADD_FAILURE() << "missing key " << key;
    return nullptr;
  };
  const Value* arch = find("general.architecture");
  ASSERT_NE(arch, nullptr);
  EXPECT_EQ(std::get<std::string>(arch->data), "llama");
  const Value* name = find("general.name");
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(std::get<std::string>(name->data), "ggufs sample");
  for (const char* key :
       {"general.description", "general.file_type", "llama.context_length",
        "llama.embedding_length", "llama.block_count", "llama.feed_forward_length",
        "llama.rope.dimension_count", "llama.rope.freq_base", "llama.attention.head_count",
        "llama.attention.head_count_kv", "llama.attention.layer_norm_rms_epsilon",
        "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"}) {
    EXPECT_NE(find(key), nullptr);
  }
  const Value* tokens = find("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  const Array& items = std::get<Array>(tokens->data);
  // <unk>, <s>, </s>, the 256 byte tokens <0x00>…<0xFF>, then 125 pieces.
  ASSERT_EQ(items.size(), 384u);
  EXPECT_EQ(items.string_at(1), "<s>");
  EXPECT_EQ(items.string_at(3), "<0x00>");
  EXPECT_EQ(items.string_at(258), "<0xFF>");
  auto has = [&](char c) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items.string_at(i).find(c) != std::string_view::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has('\n'));
  EXPECT_TRUE(has('\t'));
  const Value* scores = find("tokenizer.ggml.scores");
  ASSERT_NE(scores, nullptr);
  EXPECT_EQ(static_cast<int>(std::get<Array>(scores->data).elem_type()),
            static_cast<int>(ValueType::kFloat32));
  const Value* types = find("tokenizer.ggml.token_type");
  ASSERT_NE(types, nullptr);
  EXPECT_EQ(static_cast<int>(std::get<Array>(types->data).elem_type()),
            static_cast<int>(ValueType::kInt32));
  bool has_bool = false, has_f32 = false;
  for (const KeyValue& kv : f.kv) {
    has_bool |= kv.value.type == ValueType::kBool;
    has_f32 |= kv.value.type == ValueType::kFloat32;
  }
  EXPECT_TRUE(has_bool);
  EXPECT_TRUE(has_f32);
}

TEST(WriterSampleTool, WritesABenchModelOfTheRequestedSize) {
  REQUIRE_SAMPLE_BINARY();
  TempDir dir;
  const auto path = dir.path() / "bench.gguf";
  ASSERT_EQ(run_status(sample_bin + " --bench-size-mib 3 '" + path.string() + "'"), 0);
  EXPECT_GE(std::filesystem::file_size(path), 3u << 20);
  const GgufFile f = parse_gguf(FileSource(path.string()), path.string());
  std::vector<std::string> names;
  for (const TensorInfo& t : f.tensors) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"bench.f32", "bench.f16", "bench.q8_0", "bench.q4_k",
                                             "bench.q6_k"}));
  for (const TensorInfo& t : f.tensors) EXPECT_EQ(t.n_elements, f.tensors[0].n_elements);
}

TEST(WriterSampleTool, ExitCodes) {
  REQUIRE_SAMPLE_BINARY();
  TempDir dir;
  const std::string quiet = " >/dev/null 2>&1";
  EXPECT_EQ(run_status(sample_bin + " --help" + quiet), 0);
  EXPECT_EQ(run_status(sample_bin + quiet), 1);
  EXPECT_EQ(run_status(sample_bin + " --frobnicate x.gguf" + quiet), 1);
  EXPECT_EQ(run_status(sample_bin + " --bench-size-mib zero x.gguf" + quiet), 1);
  EXPECT_EQ(run_status(sample_bin + " a.gguf b.gguf" + quiet), 1);
  EXPECT_EQ(
      run_status(sample_bin + " '" + (dir.path() / "no/such/dir.gguf").string() + "'" + quiet), 2);
}

// --- quantizers -----------------------------------------------------------------------------

TEST(Quantize, F32IsTheExactBytes) {
  const std::vector<float> x = {1.0f, -0.0f, std::numeric_limits<float>::infinity(), 1e-45f};
  const auto b = quantize(GGML_TYPE_F32, x);
  ASSERT_EQ(b.size(), 16u);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x[i]);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(b[4 * i + k], static_cast<std::uint8_t>(bits >> (8 * k)));
  }
  const auto y = decode(GGML_TYPE_F32, b, x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(x[i]));
  }
}

TEST(Quantize, F16OfRepresentableValuesIsExact) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f,          -0.0f,    1.0f,     -2.5f,       65504.0f,
                                -65504,        0x1p-14f, 0x1p-24f, -0x3ffp-24f, 0.333251953125f,
                                1.0009765625f, inf,      -inf};
  const auto b = quantize(GGML_TYPE_F16, x);
  ASSERT_EQ(b.size(), 2 * x.size());
  EXPECT_EQ(b[4], 0x00);  // 1.0 = 0x3c00, little-endian
  EXPECT_EQ(b[5], 0x3c);
  const auto y = decode(GGML_TYPE_F16, b, x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(x[i])) << x[i];
  }
}

TEST(Quantize, BF16OfRepresentableValuesIsExact) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f,        -0.0f,     1.0f,       -3.5f, 0x1p100f,
                                0x1.fep127f, 0x1p-130f, 0x1.02p-5f, inf,   -inf};
  const auto b = quantize(GGML_TYPE_BF16, x);
  ASSERT_EQ(b.size(), 2 * x.size());
  EXPECT_EQ(b[4], 0x80);  // 1.0 = 0x3f80, little-endian
  EXPECT_EQ(b[5], 0x3f);
  const auto y = decode(GGML_TYPE_BF16, b, x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(x[i])) << x[i];
  }
}

TEST(Quantize, BF16RoundsToNearestEven) {
  auto bf16 = [](float f) {
    const auto b = quantize(GGML_TYPE_BF16, std::vector<float>{f});
    return static_cast<std::uint16_t>(b[0] | b[1] << 8);
  };
  EXPECT_EQ(bf16(1.0f + 0x1p-8f), 0x3f80);                     // tie, even below
  EXPECT_EQ(bf16(1.0f + 3 * 0x1p-8f), 0x3f82);                 // tie, even above
  EXPECT_EQ(bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);          // above the tie
  EXPECT_EQ(bf16(-(1.0f + 0x1p-8f - 0x1p-20f)), 0xbf80);       // below the tie
  EXPECT_EQ(bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to inf
  const std::uint16_t nan = bf16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7f80, 0x7f80);
  EXPECT_NE(nan & 0x007f, 0);
  // A NaN whose payload is only in the low 16 bits stays a NaN (not inf).
  const std::uint16_t low_nan = bf16(std::bit_cast<float>(0x7f800001u));
  EXPECT_EQ(low_nan & 0x7f80, 0x7f80);
  EXPECT_NE(low_nan & 0x007f, 0);
}

TEST(Quantize, HandCheckedLegacyBlocks) {
  // Q8_0: largest |x| = 127 gives d = 1.0 (half 0x3c00) and the values themselves.
  std::vector<float> x(32, 0.0f);
  x[0] = 127;
  x[1] = -127;
  x[2] = 5;
  std::vector<std::uint8_t> want(34, 0);
  want[1] = 0x3c;
  want[2] = 0x7f;
  want[3] = 0x81;
  want[4] = 5;
  EXPECT_EQ(quantize(GGML_TYPE_Q8_0, x), want);
  // Q4_0: all 7 gives d = 1.0 and nibbles 7 + 8 = 15; element j low, j + 16 high.
  std::vector<float> y(32, 7.0f);
  y[16] = -7.0f;  // high nibble of byte 0 becomes −7 + 8 = 1
  std::vector<std::uint8_t> want4(18, 0xff);
  want4[0] = 0x00;
  want4[1] = 0x3c;
  want4[2] = 0x1f;
  EXPECT_EQ(quantize(GGML_TYPE_Q4_0, y), want4);
}

TEST(Quantize, RefusesUnsupportedTypesAndPartialBlocks) {
  EXPECT_THROW(quantize(GGML_TYPE_Q4_1, std::vector<float>(32)), std::invalid_argument);
  EXPECT_THROW(quantize(4, std::vector<float>(32)), std::invalid_argument);  // removed id
  EXPECT_THROW(quantize(999, std::vector<float>(32)), std::invalid_argument);
  EXPECT_THROW(quantize(GGML_TYPE_Q8_0, std::vector<float>(33)), std::invalid_argument);
  EXPECT_THROW(quantize(GGML_TYPE_Q4_K, std::vector<float>(128)), std::invalid_argument);
  EXPECT_EQ(quantize(GGML_TYPE_Q6_K, std::vector<float>{}).size(), 0u);
}

// Round-trip error bounds of our quantizers (derived in src/core/quantize.cpp): for each block
// (32 elements for Q8_0/Q4_0, the 256-element super-block for the K-quants), the largest
// |decoded − input| must not exceed bound × measure, where measure is the block's largest |x|,
// or for Q4_K (which has a min) R = max(x, 0) − min(x, 0). The bounds are about half a
// quantization step; a wrong nibble order, scale packing or sub-block assignment breaks them.
struct Bound {
  std::uint32_t type;
  const char* name;
  std::size_t block;
  double bound;
  bool range_measure;  // R instead of max |x|
};

constexpr Bound kBounds[] = {
    {GGML_TYPE_Q8_0, "Q8_0", 32, 0.0040, false},
    {GGML_TYPE_Q4_0, "Q4_0", 32, 0.0715, false},
    {GGML_TYPE_Q6_K, "Q6_K", 256, 0.0165, false},
    {GGML_TYPE_Q4_K, "Q4_K", 256, 0.0350, true},
};

/// Data sets that stress the quantizers differently, each a multiple of 256 elements.
std::vector<std::pair<std::string, std::vector<float>>> datasets() {
  std::vector<std::pair<std::string, std::vector<float>>> sets;
  std::mt19937 rng(12345);
  const std::size_t n = 256 * 24;
  auto make = [&](const std::string& name, auto f) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = f(i);
    sets.emplace_back(name, std::move(v));
  };
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  make("smooth", [](std::size_t i) { return std::sin(0.05f * static_cast<float>(i)); });
  make("uniform", [&](std::size_t) { return uni(rng); });
  make("normal", [&](std::size_t) { return normal(rng); });
  // Magnitudes changing from one 32-element block to the next by up to 10^±2.
  std::vector<float> block_scale(n / 32);
  for (float& s : block_scale) s = std::pow(10.0f, 2.0f * uni(rng));
  make("block_scales", [&](std::size_t i) { return block_scale[i / 32] * uni(rng); });
  // Sub-blocks of 16 with wildly different scales inside one super-block.
  make("sub_block_scales",
       [&](std::size_t i) { return ((i / 16) % 5 == 0 ? 50.0f : 0.02f) * uni(rng); });
  make("all_positive", [&](std::size_t) { return 5.0f + uni(rng); });
  make("all_negative", [&](std::size_t) { return -3.0f + 0.5f * uni(rng); });
  make("outliers", [&](std::size_t i) { return i % 37 == 0 ? 40.0f : 0.1f * uni(rng); });
  make("constant", [](std::size_t) { return 0.75f; });
  make("zeros", [](std::size_t) { return 0.0f; });
  make("steps", [](std::size_t i) { return static_cast<float>(static_cast<int>(i % 16) - 8); });
  return sets;
}

TEST(Quantize, RoundTripErrorIsWithinTheDocumentedBound) {
  const auto sets = datasets();
  for (const Bound& b : kBounds) {
    for (const auto& [set_name, x] : sets) {
      SCOPED_TRACE(std::string(b.name) + " on " + set_name);
      const auto bytes = quantize(b.type, x);
      const auto y = decode(b.type, bytes, x.size());
      double worst = 0;  // largest error / measure seen, for the message
      for (std::size_t start = 0; start < x.size(); start += b.block) {
        double measure = 0, lo = 0, hi = 0, err = 0;
        for (std::size_t i = start; i < start + b.block; ++i) {
          measure = std::max(measure, std::fabs(static_cast<double>(x[i])));
          lo = std::min(lo, static_cast<double>(x[i]));
          hi = std::max(hi, static_cast<double>(x[i]));
          err = std::max(err, std::fabs(static_cast<double>(y[i]) - x[i]));
        }
        if (b.range_measure) measure = hi - lo;
        // 1e-6 × measure allows for the float rounding of the decoder's products.
        ASSERT_LE(err, (b.bound + 1e-6) * measure) << "block at element " << start;
        if (measure > 0) worst = std::max(worst, err / measure);
      }
      // The bound is meaningful: the error is not far below it on varied data either.
      if (set_name == "uniform") {
        EXPECT_GT(worst, b.bound / 4) << "worst " << worst;
      }
    }
  }
}

TEST(Quantize, ValuesOnAnExactGridDecodeExactly) {
  // When the chosen scales are exact (powers of two here), grid values come back unchanged.
  struct Grid {
    std::uint32_t type;
    int q_max;          // quants −q_max..q_max
    float step;         // grid step
    std::size_t block;  // every block of this size contains ±q_max × step
  };
  for (const Grid g : {Grid{GGML_TYPE_Q8_0, 127, 1.0f, 32}, Grid{GGML_TYPE_Q4_0, 7, 1.0f, 32},
                       Grid{GGML_TYPE_Q6_K, 31, 127.0f / 64, 16}}) {
    std::vector<float> x(512);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const int q = static_cast<int>((i * 7) % (2 * g.q_max + 1)) - g.q_max;
      x[i] = static_cast<float>(q) * g.step;
    }
    for (std::size_t s = 0; s < x.size(); s += g.block) x[s] = g.step * static_cast<float>(g.q_max);
    const auto y = decode(g.type, quantize(g.type, x), x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(y[i], x[i]) << "type " << g.type << " at " << i;
  }
}

}  // namespace
}  // namespace ggufs::test
