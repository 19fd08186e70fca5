// The plan of hf/: what a GGUF file proves of the model llama.cpp's converter converted, read
// once. plan_model chooses the row (hf_architectures.h), renders its config fields from the
// file's keys and tensors (hf_config.cpp), then reads the dimensions the class builds its
// parameters from and indexes each layer's tensors (hf_plan.cpp). config.json and
// generation_config.json (render_hf_config) and the state_dict (hf_weight_map) render from the
// plan, each without reading the file's keys again. Internal to the hf layer.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufs/gguf.h"
#include "ggufs/hf_config.h"
#include "hf_architectures.h"

namespace ggufs::hf {

/// A size in elements, nullopt where it overflowed 64 bits.
using Size = std::optional<std::uint64_t>;

/// a·b, or nullopt where either is or the product passes 2⁶⁴: with sum, the one checked
/// arithmetic of the hf layer's sizes.
inline Size mul(Size a, Size b) {
  if (!a || !b || (*a != 0 && *b > UINT64_MAX / *a)) return std::nullopt;
  return *a * *b;
}

/// a + b, or nullopt where either is or the sum passes 2⁶⁴.
inline Size sum(Size a, Size b) {
  if (!a || !b || *b > UINT64_MAX - *a) return std::nullopt;
  return *a + *b;
}

/// The dimensions the model class builds its parameters from (Shape names them), in elements.
struct Dims {
  std::uint64_t vocab = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ff = 0;
  std::uint64_t experts = 0, expert_ff = 0, shared_expert_ff = 0, positions = 0;
  std::uint64_t shared_experts = 0, conv_cache = 0;
  // SSMs: inner size, state size, time-step rank (mamba2: its heads), groups, conv kernel.
  std::uint64_t inner = 0, state = 0, rank = 0, groups = 0, kernel = 0;
  // Gemma 4's per-layer inputs: width, vocabulary, and the layers they are packed for.
  std::uint64_t per_layer = 0, per_layer_vocab = 0, layers = 0;
  // MLA: the query and KV LoRA ranks, a head's nope, rope and value dims.
  std::uint64_t q_lora = 0, kv_lora = 0, nope = 0, rope = 0, v_head = 0;
  std::uint64_t index_heads = 0, index_head = 0;  // DSA's indexer: its heads, a head's dims
  std::uint64_t buckets = 0;                      // t5's relative attention buckets
  std::uint64_t altup = 0, laurel = 0;            // Gemma 3n's altup_num_inputs and laurel_rank
};

/// What differs from layer to layer (elements): Gemma 4's per_layer_config head_dim and
/// double-wide MLP, Gemma 3n's per-layer intermediate_size.
struct LayerDims {
  std::uint64_t head_dim = 0, ff = 0;
};

/// The GGUF tensors (their indices into GgufFile::tensors) by name: globals, and the layer
/// tensors by layer and by name after "blk.N." (an encoder-decoder's "enc.blk.N." and
/// "dec.blk.N.").
struct TensorIndex {
  std::map<std::string_view, std::size_t> globals;
  Layers blocks, decoder_blocks;
};

/// Everything hf/ renders from.
struct Plan {
  const Architecture* row = nullptr;
  std::string arch;  ///< general.architecture as the file holds it
  /// config.json's fields but transformers_version and dtype, and generation_config.json's.
  nlohmann::json config, generation;
  /// Why the file has no state_dict though it has a config (mistral's row has none; a layer
  /// without its tensors), else empty and the fields below planned.
  std::string no_weights;
  Dims dims;
  /// num_key_value_heads where config.json holds it: transformers' LlamaTensorProcessor
  /// un-permutes q/k rows only then (modeling_gguf_pytorch_utils.py).
  std::optional<std::uint64_t> config_kv;
  /// The experts a stack is split into: Qwen2MoeTensorProcessor's config.get("num_experts", 60)
  /// for Transforms::kMoe, else expert_count's.
  std::uint64_t split_experts = 0;
  /// Layer n's (below block_count); the decoder's layers take `dims`.
  std::vector<LayerDims> layer_dims;
  TensorIndex index;
};

struct PlanResult {
  std::optional<Plan> plan;
  std::string reason;  ///< one line naming the key or tensor at fault, when no plan
};

/// The double whose shortest decimal is the shortest one that reads back as float32 `x`
/// (hf_config.cpp): the converter stores hyperparameters as float32 (gguf_writer.py,
/// add_float32), so a config's 1e-06 comes back as 1e-06. NaN and infinities pass unchanged.
double shortest_decimal(float x);

/// The value of key `key` of `file` (the first where a key repeats), or nullptr (hf_config.cpp).
const Value* find_key(const GgufFile& file, std::string_view key);

/// Where transformers' reader (gguf-py 0.19.0's GGUFReader, _gguf_parse_value) fails on `file`,
/// the reason, else "" (hf_config.cpp): a version other than 2 or 3, a key, string or tensor name
/// that is not strict UTF-8, a nested array, a tensor type gguf-py does not know. Any of them
/// fails transformers' whole import.
std::string unreadable_file(const GgufFile& file);

/// The numpy shape gguf-py gives a tensor: its n_dims dimensions of ne, outermost first.
std::vector<std::uint64_t> numpy_shape(const TensorInfo& t);

/// A shape as messages write it: "[2, 3]".
std::string shape_text(const std::vector<std::uint64_t>& s);

/// The plan of `file`, or why hf/ has no config for it (render_hf_config's refusals). Never
/// throws for any file.
PlanResult plan_model(const GgufFile& file);

/// plan_model's first step (hf_config.cpp): the row and the config fields into `plan`, or why
/// there are none.
std::string plan_config(const GgufFile& file, Plan& plan);

/// config.json and generation_config.json of a plan (hf_config.cpp): its fields, with
/// "transformers_version" and, when not empty, "dtype" (HfConfig).
HfConfig config_of(const Plan& plan, std::string_view dtype);

/// plan_model's second step (hf_plan.cpp): the dimensions and the layers' tensors into `plan`,
/// or why the file holds no state_dict of the row (set as Plan::no_weights).
std::string plan_weights(const GgufFile& file, Plan& plan);

}  // namespace ggufs::hf
