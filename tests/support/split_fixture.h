// A split model written by our own writer, for the tests of split models with and without a
// mount.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/model.h"

namespace ggufs::test {

// Tensor `k` of the model: 4 float32 values k, k + 0.25, k + 0.5, k + 0.75.
inline std::vector<std::uint8_t> tensor_bytes(int k) {
  std::vector<std::uint8_t> b(16);
  for (int i = 0; i < 4; ++i) {
    const float v = static_cast<float>(k) + 0.25f * static_cast<float>(i);
    std::memcpy(b.data() + 4 * i, &v, 4);
  }
  return b;
}

constexpr std::uint32_t kAll = 0xffffffffu;

// What to change in one shard of write_split.
struct ShardEdit {
  std::uint32_t shard = 0;  // 1-based; 0: none; kAll: every shard
  std::string key;          // key to set (or remove, with no value)
  std::optional<Value> value;
  bool big_endian = false;  // write that shard big-endian (its tensor data byte-swapped too)
};

// Writes `n` shards `<dir>/m-0000i-of-0000n.gguf`, shard i holding tensors "t<i>.a", "t<i>.b"
// (tensor k's values from tensor_bytes(k)); the first also general.architecture.
inline std::string write_split(const std::filesystem::path& dir, std::uint32_t n,
                               const ShardEdit& edit = {}, const std::string& duplicate = "") {
  const std::string prefix = (dir / "m").string();
  for (std::uint32_t i = 1; i <= n; ++i) {
    std::vector<std::pair<std::string, Value>> kv;
    if (i == 1) kv.emplace_back("general.architecture", Value{ValueType::kString, "llama"});
    kv.emplace_back("split.no", Value{ValueType::kUint16, std::uint64_t{i - 1}});
    kv.emplace_back("split.count", Value{ValueType::kUint16, std::uint64_t{n}});
    kv.emplace_back("split.tensors.count", Value{ValueType::kInt32, std::int64_t{2 * n}});
    if (edit.shard == i || edit.shard == kAll) {
      std::erase_if(kv, [&](const auto& p) { return p.first == edit.key; });
      if (edit.value) kv.emplace_back(edit.key, *edit.value);
    }
    const bool swap = edit.big_endian && (edit.shard == i || edit.shard == kAll);
    // An F32 tensor of a big-endian file holds each float's bytes reversed.
    const auto bytes = [swap](int k) {
      std::vector<std::uint8_t> b = tensor_bytes(k);
      for (std::size_t at = 0; swap && at < b.size(); at += 4) std::reverse(&b[at], &b[at + 4]);
      return b;
    };
    GgufWriter g;
    if (swap) g.set_format(3, true);
    for (auto& [k, v] : kv) g.add(k, v);
    g.add_tensor(fmt::format("t{}.a", i), GGML_TYPE_F32, {4}, bytes(2 * static_cast<int>(i)));
    g.add_tensor(i == n && !duplicate.empty() ? duplicate : fmt::format("t{}.b", i), GGML_TYPE_F32,
                 {4}, bytes(2 * static_cast<int>(i) + 1));
    g.write_file(shard_path(prefix, i, n));
  }
  return prefix;
}

// Deterministic stand-in bytes for tensor data: byte i is (37 i + seed) mod 256.
inline std::vector<std::uint8_t> pattern_bytes(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(37 * i + seed);
  return b;
}

// Writes a 3-shard model `<dir>/r-0000i-of-00003.gguf` that exercises the rules of a merge:
// split.count is not the last key of the first shard, keys of many value types follow it,
// tensor sizes that need padding (6, 34, 28 bytes), a tensor stored with trailing ne of 1
// (n_dims 3 for ne {4, 1, 1}), quantized and plain types. Returns the first shard's path.
inline std::string write_rich_split(const std::filesystem::path& dir) {
  const std::string prefix = (dir / "r").string();
  struct T {
    std::string name;
    std::uint32_t type;
    std::vector<std::uint64_t> ne;
    std::size_t bytes;
  };
  const std::vector<std::vector<T>> shards = {
      {{"a.f16", GGML_TYPE_F16, {3}, 6},
       {"b.q4_k", GGML_TYPE_Q4_K, {256, 2}, 288},
       {"c.column", GGML_TYPE_F32, {4, 1, 1}, 16}},
      {{"d.q8_0", GGML_TYPE_Q8_0, {32}, 34}, {"e.i32", GGML_TYPE_I32, {7}, 28}},
      {{"f.bf16", GGML_TYPE_BF16, {7, 2}, 28}},
  };
  std::uint8_t seed = 1;
  for (std::uint32_t i = 1; i <= 3; ++i) {
    GgufWriter g;
    if (i == 1) {
      g.add_string("general.architecture", "llama");
      g.add_string("general.name", "rich");
    }
    g.add("split.no", Value{ValueType::kUint16, std::uint64_t{i - 1}});
    g.add("split.count", Value{ValueType::kUint16, std::uint64_t{3}});
    g.add("split.tensors.count", Value{ValueType::kInt32, std::int64_t{6}});
    if (i == 1) {
      g.add("test.bool", Value{ValueType::kBool, true});
      g.add("test.f64", Value{ValueType::kFloat64, 0.1});
      g.add("test.i8", Value{ValueType::kInt8, std::int64_t{-5}});
      g.add("test.u64", Value{ValueType::kUint64, std::uint64_t{1} << 40});
      Array words(ValueType::kString);
      for (const char* w : {"a", "b\xc3\xa9", "<s>"}) words.push_string(w);
      g.add("test.words", Value{ValueType::kArray, words});
      Array ints(ValueType::kInt32);
      for (std::int64_t v : {-1, 2, 3}) ints.push_back(Value{ValueType::kInt32, v});
      g.add("test.ints", Value{ValueType::kArray, ints});
    }
    for (const T& t : shards[i - 1])
      g.add_tensor(t.name, t.type, t.ne, pattern_bytes(t.bytes, seed++));
    g.write_file(shard_path(prefix, i, 3));
  }
  return shard_path(prefix, 1, 3);
}

}  // namespace ggufs::test
