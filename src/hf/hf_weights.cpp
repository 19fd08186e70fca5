// The Hugging Face state_dict of a GGUF model as transformers 4.57.6's GGUF import builds it.
// Facts restated from transformers 4.57.6: modeling_gguf_pytorch_utils.py (load_gguf_checkpoint,
// get_gguf_hf_weights_map, the TensorProcessor subclasses and TENSOR_PROCESSORS), the
// configuration_*.py defaults and modeling_*.py parameter shapes of each model; from gguf-py
// 0.19.0: gguf/tensor_mapping.py (the HF name each GGUF tensor kind has per architecture) and
// gguf/constants.py (MODEL_ARCH_NAMES, MODEL_TENSORS).
#include "ggufs/hf_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>
#include <tuple>
#include <variant>

#include "ggufs/error.h"
#include "ggufs/hf_config.h"
#include "ggufs/names.h"
#include "hf_architectures.h"
#include "hf_plan.h"

namespace ggufs {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxWeights = 10'000'000;

using hf::Shape;
using hf::Transforms;
using hf::WeightEntry;

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

using hf::Dims;
using hf::mul;
using hf::sum;

using Size = hf::Size;

// The shape of sizes `s`, or nullopt where one overflowed.
template <typename... S>
std::optional<std::vector<std::uint64_t>> dims(S... s) {
  const std::array<Size, sizeof...(S)> sizes{Size(s)...};
  std::vector<std::uint64_t> out;
  for (const Size& n : sizes) {
    if (!n) return std::nullopt;
    out.push_back(*n);
  }
  return out;
}

// The attention, MLP and expert shapes (hf_architectures.h, Shape), else nullopt.
std::optional<std::vector<std::uint64_t>> transformer_shape(Shape s, const Dims& d) {
  const Size q = mul(d.heads, d.head_dim), kv = mul(d.kv_heads, d.head_dim);
  switch (s) {
    case Shape::kVocabHidden:
      return dims(d.vocab, d.hidden);
    case Shape::kPositionsHidden:
      return dims(d.positions, d.hidden);
    case Shape::kHidden:
      return dims(d.hidden);
    case Shape::kQ:
      return dims(q, d.hidden);
    case Shape::kKv:
      return dims(kv, d.hidden);
    case Shape::kO:
      return dims(d.hidden, q);
    case Shape::kQBias:
      return dims(q);
    case Shape::kKvBias:
      return dims(kv);
    case Shape::kFfHidden:
      return dims(d.ff, d.hidden);
    case Shape::kHiddenFf:
      return dims(d.hidden, d.ff);
    case Shape::kFf:
      return dims(d.ff);
    case Shape::kHeadDim:
      return dims(d.head_dim);
    case Shape::kVocab:
      return dims(d.vocab);
    case Shape::kFusedQkv:
      return dims(sum(q, mul(kv, 2)), d.hidden);
    case Shape::kFusedQkvBias:
      return dims(sum(q, mul(kv, 2)));
    case Shape::kFusedGateUp:
      return dims(mul(d.ff, 2), d.hidden);
    case Shape::kConvQkv:
      return dims(d.hidden, mul(d.hidden, 3));
    case Shape::kThreeHidden:
      return dims(mul(d.hidden, 3));
    case Shape::kHiddenHidden:
      return dims(d.hidden, d.hidden);
    case Shape::kHeadsHeadDim:
      return dims(d.heads, d.head_dim);
    case Shape::kKvHeadsHeadDim:
      return dims(d.kv_heads, d.head_dim);
    case Shape::kHeads:
      return dims(d.heads);
    case Shape::kQGate:
      return dims(mul(q, 2), d.hidden);
    case Shape::kBucketsHeads:
      return dims(d.buckets, d.heads);
    default:
      return std::nullopt;
  }
}

// The mixture-of-experts shapes: routers, one expert's, stacked experts, shared experts.
std::optional<std::vector<std::uint64_t>> expert_shape(Shape s, const Dims& d) {
  const Size shared_experts_ff = mul(d.expert_ff, d.shared_experts);
  switch (s) {
    case Shape::kRouter:
      return dims(d.experts, d.hidden);
    case Shape::kExpertFfHidden:
      return dims(d.expert_ff, d.hidden);
    case Shape::kExpertHiddenFf:
      return dims(d.hidden, d.expert_ff);
    case Shape::kSharedFfHidden:
      return dims(d.shared_expert_ff, d.hidden);
    case Shape::kHiddenSharedFf:
      return dims(d.hidden, d.shared_expert_ff);
    case Shape::kOneHidden:
      return dims(1, d.hidden);
    case Shape::kExpertsGateUp:
      return dims(d.experts, mul(d.ff, 2), d.hidden);
    case Shape::kExpertsDown:
      return dims(d.experts, d.hidden, d.ff);
    case Shape::kSharedGateUp:
      return dims(mul(d.shared_expert_ff, 2), d.hidden);
    case Shape::kSharedExpertsFfHidden:
      return dims(shared_experts_ff, d.hidden);
    case Shape::kHiddenSharedExpertsFf:
      return dims(d.hidden, shared_experts_ff);
    case Shape::kOneExperts:
      return dims(1, d.experts);
    case Shape::kExperts:
      return dims(d.experts);
    case Shape::kExpertsHiddenGateUp:
      return dims(d.experts, d.hidden, mul(d.ff, 2));
    case Shape::kExpertsGateUpBias:
      return dims(d.experts, mul(d.ff, 2));
    case Shape::kExpertsFfHiddenT:
      return dims(d.experts, d.ff, d.hidden);
    case Shape::kExpertsHidden:
      return dims(d.experts, d.hidden);
    default:
      return std::nullopt;
  }
}

// The SSM and short-convolution shapes (mamba, mamba2, qwen3next's linear attention, lfm2).
std::optional<std::vector<std::uint64_t>> ssm_shape(Shape s, const Dims& d) {
  // mamba2's conv channels, I + 2GN; its in_proj has z and dt besides them, I + R rows more.
  const Size gn2 = mul(mul(d.groups, d.state), 2);
  const Size channels = sum(d.inner, gn2);
  switch (s) {
    case Shape::kThreeHiddenHidden:
      return dims(mul(d.hidden, 3), d.hidden);
    case Shape::kHiddenOneConv:
      return dims(d.hidden, 1, d.conv_cache);
    case Shape::kInnerState:
      return dims(d.inner, d.state);
    case Shape::kInner:
      return dims(d.inner);
    case Shape::kInnerOneKernel:
      return dims(d.inner, 1, d.kernel);
    case Shape::kTwoInnerHidden:
      return dims(mul(d.inner, 2), d.hidden);
    case Shape::kRankStatesInner:
      return dims(sum(d.rank, mul(d.state, 2)), d.inner);
    case Shape::kInnerRank:
      return dims(d.inner, d.rank);
    case Shape::kHiddenInner:
      return dims(d.hidden, d.inner);
    case Shape::kSsmHeads:
      return dims(d.rank);
    case Shape::kConvChannelsOneKernel:
      return dims(channels, 1, d.kernel);
    case Shape::kConvChannels:
      return dims(channels);
    case Shape::kMamba2InProj:
      return dims(sum(sum(channels, d.inner), d.rank), d.hidden);
    case Shape::kLinearQkvz:
      return dims(sum(gn2, mul(d.inner, 2)), d.hidden);
    case Shape::kTwoRankHidden:
      return dims(mul(d.rank, 2), d.hidden);
    case Shape::kValueHeadDim:
      return d.rank == 0 ? std::nullopt : dims(d.inner / d.rank);
    case Shape::kLinearQkv:
      return dims(sum(gn2, d.inner), d.hidden);
    case Shape::kInnerHidden:
      return dims(d.inner, d.hidden);
    case Shape::kRankHidden:
      return dims(d.rank, d.hidden);
    case Shape::kStates:
      return dims(d.state);
    case Shape::kTwoInner:
      return dims(mul(d.inner, 2));
    default:
      return std::nullopt;
  }
}

// Gemma 4's per-layer inputs, Gemma 3n's altup and laurel, MLA's shapes.
std::optional<std::vector<std::uint64_t>> other_shape(Shape s, const Dims& d) {
  const Size per_layers = mul(d.layers, d.per_layer);
  const Size qk_head = sum(d.nope, d.rope), kv_head = sum(d.nope, d.v_head);
  switch (s) {
    case Shape::kOne:
      return dims(1);
    case Shape::kPerLayerHidden:
      return dims(d.per_layer, d.hidden);
    case Shape::kHiddenPerLayer:
      return dims(d.hidden, d.per_layer);
    case Shape::kPerLayerEmbeddings:
      return dims(d.per_layer_vocab, per_layers);
    case Shape::kPerLayerModelProjection:
      return dims(per_layers, d.hidden);
    case Shape::kPerLayerInput:
      return dims(d.per_layer);
    case Shape::kAltupInputs:
      return dims(d.altup, d.altup);
    case Shape::kAltupPredictions:
      return dims(mul(d.altup, d.altup), d.altup);
    case Shape::kAltupInputsHidden:
      return dims(d.altup, d.hidden);
    case Shape::kLaurelHidden:
      return dims(d.laurel, d.hidden);
    case Shape::kHiddenLaurel:
      return dims(d.hidden, d.laurel);
    case Shape::kQLoraHidden:
      return dims(d.q_lora, d.hidden);
    case Shape::kQLora:
      return dims(d.q_lora);
    case Shape::kMlaQ:
      return dims(mul(d.heads, qk_head), d.hidden);
    case Shape::kMlaQB:
      return dims(mul(d.heads, qk_head), d.q_lora);
    case Shape::kMlaKvB:
      return dims(mul(d.heads, kv_head), d.kv_lora);
    case Shape::kMlaO:
      return dims(d.hidden, mul(d.heads, d.v_head));
    case Shape::kKvLoraRopeHidden:
      return dims(sum(d.kv_lora, d.rope), d.hidden);
    case Shape::kKvLora:
      return dims(d.kv_lora);
    case Shape::kIndexerQB:
      return dims(mul(d.index_heads, d.index_head), d.q_lora);
    case Shape::kIndexerHeadHidden:
      return dims(d.index_head, d.hidden);
    case Shape::kIndexerHead:
      return dims(d.index_head);
    case Shape::kIndexerHeadsHidden:
      return dims(d.index_heads, d.hidden);
    default:
      return std::nullopt;
  }
}

// The torch shape the class gives a parameter of shape `s` (hf_architectures.h, Shape), or
// nullopt where a size overflows.
std::optional<std::vector<std::uint64_t>> expected_shape(Shape s, const Dims& d) {
  if (auto shape = transformer_shape(s, d)) return shape;
  if (auto shape = expert_shape(s, d)) return shape;
  if (auto shape = ssm_shape(s, d)) return shape;
  return other_shape(s, d);
}

// The converter holds these in another shape of the same elements in the same order (mamba.py:
// squeeze, reshape; lfm2.py: the Conv1d weight's squeeze(1)); only the element count must match.
bool reshaped(Shape s) {
  return s == Shape::kInner || s == Shape::kInnerOneKernel || s == Shape::kSsmHeads ||
         s == Shape::kConvChannelsOneKernel || s == Shape::kHiddenOneConv;
}

}  // namespace

std::string hf::shape_text(const std::vector<std::uint64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

std::vector<std::uint64_t> hf::numpy_shape(const TensorInfo& t) {
  std::vector<std::uint64_t> s;
  for (std::uint32_t i = t.n_dims; i > 0; --i) s.push_back(t.ne[std::min<std::uint32_t>(i, 4) - 1]);
  return s;
}

namespace {

using hf::numpy_shape;
using hf::shape_text;

HfWeightsResult refuse(std::string reason) { return {std::nullopt, std::move(reason), {}}; }

// qwen35's linear attention with fewer key heads nk (ssm.group_count) than value heads nv
// (ssm.time_step_rank): the converter reordered the value heads of every tensor that has them
// (qwen.py, _LinearAttentionVReorderBase.modify_tensors), along the rows (in_proj_qkv's and
// conv1d's v part after the q and k channels, in_proj_z, in_proj_a and in_proj_b, A_log and
// dt_bias) or out_proj's columns. Sets w's untile fields, or says why not.
std::string untile_value_heads(HfWeight& w, const hf::WeightEntry& entry, const TensorInfo& t,
                               const Dims& d) {
  const std::uint64_t nk = d.groups, nv = d.rank;
  if (nk == 0 || nv == 0 || nv % nk != 0 || d.inner % nv != 0) {
    return fmt::format(
        "{} key heads, {} value heads and inner size {} are not whole value heads "
        "per key head",
        nk, nv, d.inner);
  }
  const std::uint64_t hv = d.inner / nv;  // a value head's size
  auto qk = mul(nk, d.state);             // the q and k channels: 2 · nk · linear_key_head_dim
  if (qk) qk = mul(*qk, 2);
  const std::string_view hf = entry.hf;
  const std::uint64_t row = t.n_dims >= 2 ? t.ne[0] : 1;  // elements a numpy row
  std::uint64_t head_rows = 0, skip_rows = 0;
  if (hf.ends_with(".out_proj.weight")) {  // the columns: every row's nv runs of hv elements
    if (t.n_dims != 2 || t.ne[0] != d.inner) {
      return fmt::format("tensor '{}' does not hold {} value heads of {} columns",
                         printable(t.name), nv, hv);
    }
    w.untile_run = hv;
  } else if (hf.ends_with(".A_log") || hf.ends_with(".dt_bias") ||
             hf.ends_with(".in_proj_a.weight") || hf.ends_with(".in_proj_b.weight")) {
    head_rows = 1;
  } else if (hf.ends_with(".in_proj_z.weight")) {
    head_rows = hv;
  } else if (hf.ends_with(".in_proj_qkv.weight") || hf.ends_with(".conv1d.weight")) {
    if (!qk) return fmt::format("tensor '{}': the key channels overflow", printable(t.name));
    head_rows = hv;
    skip_rows = *qk;
  } else {
    return "";  // no value heads
  }
  if (head_rows) {
    const auto run = mul(head_rows, row), skip = mul(skip_rows, row);
    const auto heads = run ? mul(*run, nv) : std::nullopt;
    if (!heads || !skip || *skip > t.n_elements || t.n_elements - *skip != *heads) {
      return fmt::format("tensor '{}' does not hold {} value heads of {} rows after {} rows",
                         printable(t.name), nv, head_rows, skip_rows);
    }
    w.untile_run = *run;
    w.untile_skip = *skip;
  }
  w.untile_k_heads = nk;
  w.untile_v_heads = nv;
  return "";
}

// One parameter from one tensor: a row that maps two GGUF tensors to one name (granitehybrid's
// shared MLP as ffn_*_shexp and as ffn_*) would write the name twice. The reason, else "".
std::string one_tensor_a_name(const GgufFile& file, const std::vector<HfWeight>& weights) {
  std::vector<std::pair<std::string_view, std::size_t>> names;
  names.reserve(weights.size());
  for (const HfWeight& w : weights) names.emplace_back(w.hf_name, w.source);
  std::sort(names.begin(), names.end());
  for (std::size_t i = 1; i < names.size(); ++i) {
    if (names[i].first == names[i - 1].first) {
      return fmt::format("tensors '{}' and '{}' are both {}",
                         printable(file.tensors[names[i - 1].second].name),
                         printable(file.tensors[names[i].second].name), names[i].first);
    }
  }
  return "";
}

// The tensors (indices, ascending) no weight reads (HfWeightsResult::omitted).
std::vector<std::size_t> unmapped(const GgufFile& file, const std::vector<HfWeight>& weights) {
  std::vector<bool> used(file.tensors.size(), false);
  for (const HfWeight& w : weights) {
    used[w.source] = true;
    for (const std::size_t p : w.parts) used[p] = true;
  }
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) out.push_back(i);
  }
  return out;
}

// The state_dict under construction from a plan: `d` holds the dimensions of the layer being
// added (hf::Plan::layer_dims over the plan's).
struct Builder {
  const GgufFile& file;
  const hf::Plan& plan;
  hf::Dims d;
  std::vector<HfWeight> out;
};

// The inverse of a fused split (HfTransform::kConcatRows): the parts' rows (numpy axis -2)
// follow the source's, each part a matrix stack of the source's shape but its rows.
std::string concat_rows(const GgufFile& file, HfWeight& w) {
  const std::string_view name = file.tensors[w.source].name;
  for (const std::size_t part : w.parts) {
    std::vector<std::uint64_t> s = numpy_shape(file.tensors[part]);
    const std::size_t n = w.shape.size();
    if (n < 2 || s.size() != n) {
      return fmt::format("tensor '{}': not a matrix stack of the shape of '{}'",
                         printable(file.tensors[part].name), printable(name));
    }
    const std::uint64_t rows = s[n - 2];
    s[n - 2] = w.shape[n - 2];
    if (s != w.shape || rows > UINT64_MAX - w.shape[n - 2]) {
      return fmt::format("tensor '{}' {} does not fit '{}' {}", printable(file.tensors[part].name),
                         shape_text(s), printable(name), shape_text(w.shape));
    }
    w.shape[n - 2] += rows;
    w.transform = HfTransform::kConcatRows;
  }
  return "";
}

// A fused tensor the converter split in equal parts (granite.py, GraniteMoeModel.modify_tensors:
// input_linear's gate and up halves at intermediate_size), which transformers splits back at the
// same row (modeling_granitemoe.py, GraniteMoeMoE.forward: chunk(2)): each part its own width,
// not only their sum, or a gate row would be read as an up row.
std::string equal_parts(const GgufFile& file, const HfWeight& w) {
  if (w.transform != HfTransform::kConcatRows) return "";
  const std::uint64_t rows = numpy_shape(file.tensors[w.source]).rbegin()[1];
  for (const std::size_t part : w.parts) {
    if (numpy_shape(file.tensors[part]).rbegin()[1] != rows) {
      return fmt::format("tensor '{}' has not the {} rows of '{}': {} is split in equal parts",
                         printable(file.tensors[part].name), rows,
                         printable(file.tensors[w.source].name), w.hf_name);
    }
  }
  return "";
}

// LlamaTensorProcessor: q/k rows un-permuted, only when the config holds both head counts.
std::string llama_permute(const Builder& b, HfWeight& w, std::string_view name) {
  const bool q = contains(name, ".attn_q."), k = contains(name, ".attn_k.");
  const auto& config_kv = b.plan.config_kv;
  if ((!q && !k) || !config_kv) return "";
  const std::uint64_t n = (k && *config_kv != b.d.heads) ? *config_kv : b.d.heads;
  const std::uint64_t rows = w.shape.empty() ? 0 : w.shape[0];
  if (n == 0 || rows % 2 != 0 || (rows / 2) % n != 0) {  // 2·n may overflow
    return fmt::format("tensor '{}': {} rows are not a multiple of 2 × {} heads", printable(name),
                       rows, n);
  }
  w.transform = HfTransform::kReversePermute;
  w.n_head = n;
  return "";
}

// GPT2TensorProcessor: Conv1D weights transposed back (gpt2.py).
std::string gpt2_transpose(HfWeight& w, std::string_view name) {
  if (!contains(name, "attn_qkv.weight") && !contains(name, "ffn_down.weight") &&
      !contains(name, "ffn_up.weight") && !contains(name, "attn_output.weight")) {
    return "";
  }
  if (w.shape.size() != 2) return fmt::format("tensor '{}' is not 2-D", printable(name));
  std::swap(w.shape[0], w.shape[1]);
  w.transform = HfTransform::kTranspose;
  return "";
}

// gpt-oss: the experts' matrices (E, F, H) transposed, gate's and up's columns interleaved; the
// gate and up biases (E, F) interleaved; the down bias as it is.
std::string gpt_oss_interleave(HfWeight& w, const TensorInfo& t) {
  const std::string_view name = t.name;
  if (!contains(name, "_exps.weight") && w.parts.empty()) return "";
  std::vector<std::uint64_t> s = numpy_shape(t);
  const bool matrices = contains(name, ".weight");
  if (s.size() != (matrices ? 3u : 2u) || w.parts.size() > 1) {
    return fmt::format("tensor '{}' is not a stack of experts", printable(name));
  }
  if (matrices) std::swap(s[1], s[2]);
  s.back() *= 1 + w.parts.size();  // the parts' shapes: checked by concat_rows
  w.shape = std::move(s);
  w.transform = HfTransform::kInterleaveTransposed;
  return "";
}

// The converter's view (n_kv, n_head / n_kv + 2, head_dim, …) of a fused QKV needs whole groups.
std::string regroup_qkv(const hf::Dims& d, HfWeight& w, std::string_view name) {
  if (!contains(name, ".attn_qkv.")) return "";
  const std::uint64_t rows = w.shape.empty() ? 0 : w.shape[0];
  const auto kv2 = mul(d.kv_heads, 2);
  if (d.kv_heads == 0 || d.heads % d.kv_heads != 0 || !kv2 || *kv2 > UINT64_MAX - d.heads ||
      rows % (d.heads + *kv2) != 0) {
    return fmt::format("tensor '{}': {} rows are not {} query and 2 × {} KV heads", printable(name),
                       rows, d.heads, d.kv_heads);
  }
  w.transform = HfTransform::kRegroupQkv;
  w.n_head = d.heads;
  w.groups = d.kv_heads;
  return "";
}

// MLA: attn_k_b (heads, r, dn) and attn_v_b (heads, dv, r) back to kv_b_proj.
std::string mla_kv_b(const GgufFile& file, HfWeight& w, std::string_view name) {
  if (w.parts.empty()) return "";
  const std::vector<std::uint64_t> v = numpy_shape(file.tensors[w.parts[0]]);
  const bool fits = w.parts.size() == 1 && w.shape.size() == 3 && v.size() == 3 &&
                    v[0] == w.shape[0] && v[2] == w.shape[1] && w.shape[2] <= UINT64_MAX - v[1];
  const auto rows = fits ? mul(w.shape[0], w.shape[2] + v[1]) : std::nullopt;
  if (!rows) {
    return fmt::format("tensor '{}' and '{}' are not one MLA kv_b split per head", printable(name),
                       printable(file.tensors[w.parts[0]].name));
  }
  w.shape = {*rows, w.shape[1]};
  w.transform = HfTransform::kConcatTransposedRows;
  return "";
}

// qwen3next: A_log = log(-A); norms minus the converter's + 1 but ssm_norm's; attn_qkv then
// attn_gate: whole key heads of q, k and v rows, z rows per key head.
std::string qwen3next(const Builder& b, HfWeight& w, const WeightEntry& entry,
                      std::string_view name) {
  if (entry.hf.ends_with("A_log")) {
    w.transform = HfTransform::kLogOfNegated;
  } else if (contains(name, "norm.weight") && !contains(name, "ssm_norm")) {
    w.transform = HfTransform::kAddConstant;
    w.constant = -1.0f;
  } else if (!w.parts.empty()) {
    const hf::Dims& d = b.d;
    const std::uint64_t z = b.file.tensors[w.parts[0]].ne[1];
    const std::uint64_t rows = w.shape.empty() ? 0 : w.shape[0];
    const auto z2 = mul(z, 2), groups2 = mul(d.groups, 2);  // 2·g wraps to 0 near 2⁶³
    if (w.parts.size() != 1 || w.shape.size() != 2 || d.groups == 0 || z != d.inner || !z2 ||
        !groups2 || rows < *z2 || z % d.groups != 0 || (rows - *z2) % *groups2 != 0) {
      return fmt::format("tensor '{}': {} rows are not {} key heads of q, k, v and z",
                         printable(name), rows, d.groups);
    }
    w.transform = HfTransform::kRegroupQkvz;
    w.groups = d.groups;
  }
  return "";
}

// The row's transform family on `w` (hf_architectures.h, Transforms).
std::string family_transform(const Builder& b, HfWeight& w, const WeightEntry& entry) {
  const TensorInfo& t = b.file.tensors[w.source];
  const std::string_view name = t.name;
  Transforms family = b.plan.row->transforms;
  if (family == Transforms::kLlamaSsm) {  // a hybrid: A_log is the SSM's, q/k rows llama's
    family = entry.hf.ends_with("A_log") ? Transforms::kSsm : Transforms::kLlama;
  }
  // Families that read a fused tensor's parts themselves (else kConcatRows: concat_rows).
  const bool own_parts = family == Transforms::kGptOss || family == Transforms::kMla ||
                         family == Transforms::kQwen3Next;
  if (!w.parts.empty() && !own_parts) return "";
  switch (family) {
    case Transforms::kNone:
    case Transforms::kMoe:  // the experts: select_expert
    case Transforms::kLlamaSsm:
      return "";
    case Transforms::kLlama:
      return llama_permute(b, w, name);
    case Transforms::kGpt2:
      return gpt2_transpose(w, name);
    case Transforms::kGptOss:
      return gpt_oss_interleave(w, t);
    case Transforms::kGemma:
      if (contains(name, "norm.weight")) {
        w.transform = HfTransform::kAddConstant;
        w.constant = -1.0f;
      }
      return "";
    case Transforms::kRegroupQkv:
      return regroup_qkv(b.d, w, name);
    case Transforms::kSsm:
      if (entry.hf.ends_with("A_log")) w.transform = HfTransform::kLogOfNegated;
      return "";
    case Transforms::kMla:
      return mla_kv_b(b.file, w, name);
    case Transforms::kQwen35:
      if (b.d.groups != b.d.rank) {
        if (std::string why = untile_value_heads(w, entry, t, b.d); !why.empty()) return why;
      }
      return qwen3next(b, w, entry, name);
    case Transforms::kQwen3Next:
      return qwen3next(b, w, entry, name);
  }
  return "";
}

// `w`'s shape against the one the config gives its parameter: Gemma 3n's zero-padded per-layer
// embeddings (HfTransform::kFirstRows) and the reshaped shapes (hf_architectures.h, Shape) in
// the class's shape; any other difference refused (from_pretrained refuses a mismatch).
std::string fit_shape(const hf::Dims& d, HfWeight& w, const WeightEntry& entry,
                      std::string_view name) {
  const auto expected = expected_shape(entry.shape, d);
  if (!expected) return fmt::format("tensor '{}': the config's shape overflows", printable(name));
  if (entry.shape == Shape::kPerLayerEmbeddings && w.transform == HfTransform::kNone &&
      w.shape.size() == 2 && w.shape[1] == (*expected)[1] && w.shape[0] > (*expected)[0]) {
    w.shape = *expected;
    w.transform = HfTransform::kFirstRows;
  }
  if (reshaped(entry.shape) && w.parts.empty() && !entry.expert) {
    std::uint64_t have = 1, want = 1;
    for (const std::uint64_t n : w.shape) have *= n;  // a GGUF tensor's: fits 64 bits
    for (const std::uint64_t n : *expected) {
      const auto p = mul(want, n);
      if (!p) return fmt::format("tensor '{}': the config's shape overflows", printable(name));
      want = *p;
    }
    if (have == want) w.shape = *expected;
  }
  if (w.shape != *expected) {
    return fmt::format("tensor '{}': {} has shape {}, the config gives {}", printable(name),
                       w.hf_name, shape_text(w.shape), shape_text(*expected));
  }
  return "";
}

// Appends parameter `hf_name` from tensor `source` (and `parts`) with the processor's transform:
// expert `expert` of a stack where `entry` is one.
std::string add(Builder& b, std::string hf_name, const WeightEntry& entry, std::size_t source,
                std::uint64_t expert, std::vector<std::size_t> parts = {}) {
  const TensorInfo& t = b.file.tensors[source];
  HfWeight w;
  w.hf_name = std::move(hf_name);
  w.source = source;
  w.shape = numpy_shape(t);
  w.parts = std::move(parts);
  if (b.plan.row->transforms != Transforms::kMla) {  // MLA's kv_b: mla_kv_b
    if (std::string why = concat_rows(b.file, w); !why.empty()) return why;
  }
  if (entry.expert) {
    if (w.shape.empty() || w.shape[0] < b.plan.split_experts) {
      return fmt::format("tensor '{}': fewer than the {} experts transformers splits",
                         printable(t.name), b.plan.split_experts);
    }
    w.shape.erase(w.shape.begin());
    w.transform = HfTransform::kSelect;
    w.index = expert;
  }
  if (std::string why = family_transform(b, w, entry); !why.empty()) return why;
  if (std::string why = equal_parts(b.file, w); !why.empty()) return why;
  if (std::string why = fit_shape(b.d, w, entry, t.name); !why.empty()) return why;
  if (b.out.size() >= kMaxWeights) return fmt::format("more than {} tensors", kMaxWeights);
  b.out.push_back(std::move(w));
  return "";
}

// The row's global entries `entries` the file holds.
std::string add_globals(Builder& b, const std::vector<WeightEntry>& entries) {
  const hf::Dims& d = b.d;
  for (const WeightEntry& e : entries) {
    const auto it = b.plan.index.globals.find(e.gguf);
    if (it == b.plan.index.globals.end()) continue;
    if (!e.expert) {
      if (std::string why = add(b, std::string(e.hf), e, it->second, 0); !why.empty()) return why;
      continue;
    }
    // A stack of altup_num_inputs − 1 matrices (hf_architectures.h, WeightEntry), exactly.
    const std::vector<std::uint64_t> s = numpy_shape(b.file.tensors[it->second]);
    if (d.altup == 0 || s.empty() || s[0] != d.altup - 1) {
      return fmt::format("tensor '{}': {} is no stack of altup_num_inputs − 1 = {} matrices",
                         printable(e.gguf), shape_text(s), d.altup ? d.altup - 1 : 0);
    }
    for (std::uint64_t x = 0; x + 1 < d.altup; ++x) {
      const std::string hf = fmt::format(fmt::runtime(e.hf), x);
      if (std::string why = add(b, hf, e, it->second, x); !why.empty()) return why;
    }
  }
  return "";
}

// A layer's run of expert entries [first, end): expert by expert, each expert's parameters in
// entry order. Only the stacks the layer holds, each checked to hold the experts before any is
// emitted: the loop then runs at most once per stacked expert, whatever expert_count says.
std::string add_experts(Builder& b, const std::string& prefix, const hf::LayerTensors& tensors,
                        std::span<const WeightEntry> run) {
  const std::uint64_t experts = b.plan.split_experts;
  std::vector<std::pair<const WeightEntry*, std::size_t>> stacks;
  for (const WeightEntry& e : run) {
    const auto it = tensors.find(e.gguf);
    if (it == tensors.end()) continue;
    const TensorInfo& t = b.file.tensors[it->second];
    // numpy_shape's first dimension: the stack's.
    if (t.n_dims == 0 || t.ne[std::min<std::uint32_t>(t.n_dims, 4) - 1] < experts) {
      return fmt::format("tensor '{}': fewer than the {} experts transformers splits",
                         printable(t.name), experts);
    }
    stacks.emplace_back(&e, it->second);
  }
  if (!stacks.empty() && experts > kMaxWeights) {
    return fmt::format("more than {} tensors", kMaxWeights);
  }
  for (std::uint64_t x = 0; !stacks.empty() && x < experts; ++x) {
    for (const auto& [e, source] : stacks) {
      const std::string hf = prefix + fmt::format(fmt::runtime(e->hf), x);
      if (std::string why = add(b, hf, *e, source, x); !why.empty()) return why;
    }
  }
  return "";
}

// Layer `n`'s non-expert entry `e`, with the parts the converter split off it.
std::string add_layer_entry(Builder& b, const std::string& prefix, std::uint64_t n,
                            const hf::LayerTensors& tensors, const WeightEntry& e) {
  const auto it = tensors.find(e.gguf);
  if (it == tensors.end()) return "";
  std::vector<std::size_t> parts;
  for (const std::string_view then : e.then) {
    if (then.empty()) break;
    const auto part = tensors.find(then);
    if (part == tensors.end()) {
      return fmt::format("tensor 'blk.{}.{}' has no 'blk.{}.{}': {} is both", n, e.gguf, n, then,
                         e.hf);
    }
    parts.push_back(part->second);
  }
  return add(b, prefix + std::string(e.hf), e, it->second, 0, std::move(parts));
}

// The layers of `blocks` under `layer_prefix`, each with `layer`'s entries and its own dimensions
// (Plan::layer_dims; a decoder's layers have the plan's).
std::string add_layers(Builder& b, const hf::Layers& blocks, std::string_view layer_prefix,
                       const std::vector<WeightEntry>& layer, bool own_dims) {
  for (const auto& [n, tensors] : blocks) {
    const std::string prefix = fmt::format(fmt::runtime(layer_prefix), n);
    b.d = b.plan.dims;
    if (own_dims && n < b.plan.layer_dims.size()) {
      b.d.head_dim = b.plan.layer_dims[n].head_dim;
      b.d.ff = b.plan.layer_dims[n].ff;
    }
    for (std::size_t i = 0; i < layer.size();) {
      if (!layer[i].expert) {
        if (std::string why = add_layer_entry(b, prefix, n, tensors, layer[i++]); !why.empty()) {
          return why;
        }
        continue;
      }
      std::size_t end = i;
      while (end < layer.size() && layer[end].expert) ++end;
      const std::span<const WeightEntry> run(layer.data() + i, end - i);
      if (std::string why = add_experts(b, prefix, tensors, run); !why.empty()) return why;
      i = end;
    }
  }
  b.d = b.plan.dims;
  return "";
}

// The state_dict of a plan, in the row's order.
HfWeightsResult weights_of(const GgufFile& file, const hf::Plan& plan) {
  if (!plan.no_weights.empty()) return refuse(plan.no_weights);
  const hf::Architecture& row = *plan.row;
  Builder b{file, plan, plan.dims, {}};
  const hf::TensorIndex& index = plan.index;
  std::string why = add_globals(b, row.before);
  if (why.empty()) why = add_layers(b, index.blocks, row.layer_prefix, row.layer, true);
  if (why.empty()) why = add_globals(b, row.between);
  if (why.empty()) {
    why = add_layers(b, index.decoder_blocks, row.decoder_prefix, row.decoder_layer, false);
  }
  if (why.empty()) why = add_globals(b, row.after);
  if (why.empty()) why = one_tensor_a_name(file, b.out);
  if (!why.empty()) return refuse(why);
  std::vector<std::size_t> omitted = unmapped(file, b.out);
  return {std::move(b.out), "", std::move(omitted)};
}

}  // namespace

std::uint64_t hf_permuted_row(std::uint64_t hf_row, std::uint64_t rows, std::uint64_t n_head) {
  // numpy: w.reshape(n, d, 2, …).swapaxes(2, 1).reshape(rows, …): HF row (h, j, i) in the
  // (n, 2, d) layout holds GGUF row (h, i, j) in the (n, d, 2) layout.
  const std::uint64_t d = rows / n_head / 2;
  const std::uint64_t h = hf_row / (2 * d);
  const std::uint64_t j = (hf_row % (2 * d)) / d;
  const std::uint64_t i = hf_row % d;
  return h * 2 * d + 2 * i + j;
}

HfWeightsResult hf_weight_map(const GgufFile& file) {
  HfModelResult model = render_hf_model(file);
  if (!model.model) return refuse(std::move(model.reason));
  return {std::move(model.model->weights), "", std::move(model.model->omitted)};
}

HfModelResult render_hf_model(const GgufFile& file, std::string_view dtype) {
  try {
    hf::PlanResult planned = hf::plan_model(file);
    if (!planned.plan) return {std::nullopt, std::move(planned.reason)};
    HfWeightsResult weights = weights_of(file, *planned.plan);
    if (!weights.weights) return {std::nullopt, std::move(weights.reason)};
    return {HfModel{hf::config_of(*planned.plan, dtype),
                    std::move(*weights.weights),
                    std::move(weights.omitted),
                    {planned.plan->row->mlx.experts, planned.plan->row->mlx.unfused},
                    {},
                    {}},
            ""};
  } catch (const std::exception& e) {  // bad_alloc: the daemon stays up (error.h)
    return {std::nullopt, not_enough_memory(e, "build its weight map")
                              .value_or(fmt::format("no weight map: {}", e.what()))};
  }
}

std::uint64_t hf_untiled_head(std::uint64_t hf_head, std::uint64_t k_heads, std::uint64_t v_heads) {
  const std::uint64_t r = v_heads / k_heads;  // value heads per key head
  return (hf_head % r) * k_heads + hf_head / r;
}

}  // namespace ggufs
