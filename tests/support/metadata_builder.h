// Building GgufFile metadata in memory for unit tests of the renderers (hf_config, hf_weights,
// hf_tokenizer): typed values, keys and tensor infos (no tensor data), a small decoder's
// hyperparameters, and finding or removing a key to make a file hostile.
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

/// Appends the key `key` = `v` to `f` (kv_count follows).
inline void add(GgufFile& f, std::string key, Value v) {
  f.kv.push_back({std::move(key), std::move(v), 0});
  f.kv_count = f.kv.size();
}

/// Appends the tensor info of an F32 tensor `name` of NumPy shape `numpy_shape` (outermost
/// first: ne[0], the fastest, is its last entry) to `f`; no data (tensor_count follows).
inline void add_tensor(GgufFile& f, std::string name,
                       const std::vector<std::uint64_t>& numpy_shape) {
  TensorInfo t;
  t.name = std::move(name);
  t.n_dims = static_cast<std::uint32_t>(numpy_shape.size());
  t.n_elements = 1;
  for (std::size_t i = 0; i < numpy_shape.size(); ++i) {
    t.ne[i] = numpy_shape[numpy_shape.size() - 1 - i];
    t.n_elements *= t.ne[i];
  }
  t.type = 0;  // F32
  f.tensors.push_back(std::move(t));
  f.tensor_count = f.tensors.size();
}

/// "tiny.gguf" (GGUF version 3): general.architecture = `arch` (the first key) and the
/// hyperparameters llama.cpp's converter writes for a decoder (convert_hf_to_gguf.py,
/// TextModel.set_gguf_parameters): `blocks` blocks, context 128, embedding 16, feed-forward 40,
/// 4 attention heads, 2 kv heads, rope freq_base 10000, RMS norm epsilon 1e-5. No tensors.
inline GgufFile tiny_decoder(const std::string& arch, std::uint32_t blocks) {
  GgufFile f;
  f.path = "tiny.gguf";
  f.version = 3;
  add(f, "general.architecture", str(arch));
  add(f, arch + ".block_count", u32(blocks));
  add(f, arch + ".context_length", u32(128));
  add(f, arch + ".embedding_length", u32(16));
  add(f, arch + ".feed_forward_length", u32(40));
  add(f, arch + ".attention.head_count", u32(4));
  add(f, arch + ".attention.head_count_kv", u32(2));
  add(f, arch + ".rope.freq_base", f32(10000.0f));
  add(f, arch + ".attention.layer_norm_rms_epsilon", f32(1e-5f));
  return f;
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
