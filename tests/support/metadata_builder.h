// Building GgufFile metadata in memory for unit tests of the renderers (hf_config, hf_weights,
// hf_tokenizer): typed values, and finding or removing a key to make a file hostile.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ggufs/gguf.h"

namespace ggufs::test {

inline Value u32(std::uint64_t x) { return Value{ValueType::kUint32, x}; }
inline Value u64(std::uint64_t x) { return Value{ValueType::kUint64, x}; }
inline Value i32(std::int64_t x) { return Value{ValueType::kInt32, x}; }
inline Value f32(float x) { return Value{ValueType::kFloat32, x}; }
inline Value boolean(bool x) { return Value{ValueType::kBool, x}; }
inline Value str(std::string s) { return Value{ValueType::kString, std::move(s)}; }
inline Value arr(ValueType elem, std::vector<Value> items) {
  return Value{ValueType::kArray, Array{elem, std::move(items)}};
}

/// The value of `key` in `f`, or nullptr.
inline Value* find(GgufFile& f, const std::string& key) {
  for (KeyValue& kv : f.kv) {
    if (kv.key == key) return &kv.value;
  }
  return nullptr;
}

/// Removes `key` from `f`.
inline void erase(GgufFile& f, const std::string& key) {
  std::erase_if(f.kv, [&](const KeyValue& kv) { return kv.key == key; });
}

}  // namespace ggufs::test
