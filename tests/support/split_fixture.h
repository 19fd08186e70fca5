// A split model written by our own writer, for the tests of split models with and without a
// mount.
#pragma once

#include <fmt/format.h>

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
    GgufWriter g;
    for (auto& [k, v] : kv) g.add(k, v);
    g.add_tensor(fmt::format("t{}.a", i), GGML_TYPE_F32, {4},
                 tensor_bytes(2 * static_cast<int>(i)));
    g.add_tensor(i == n && !duplicate.empty() ? duplicate : fmt::format("t{}.b", i), GGML_TYPE_F32,
                 {4}, tensor_bytes(2 * static_cast<int>(i) + 1));
    g.write_file(shard_path(prefix, i, n));
  }
  return prefix;
}

}  // namespace ggufs::test
