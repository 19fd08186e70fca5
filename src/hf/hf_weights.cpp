// The Hugging Face state_dict of a GGUF model as transformers 4.57.6's GGUF import builds it.
// Facts restated from transformers 4.57.6: modeling_gguf_pytorch_utils.py (load_gguf_checkpoint,
// get_gguf_hf_weights_map, the TensorProcessor subclasses and TENSOR_PROCESSORS), the
// configuration_*.py defaults and modeling_*.py parameter shapes of each model; from gguf-py
// 0.19.0: gguf/tensor_mapping.py (the HF name each GGUF tensor kind has per architecture) and
// gguf/constants.py (MODEL_ARCH_NAMES, MODEL_TENSORS).
#include "ggufs/hf_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <tuple>
#include <variant>

#include "ggufs/error.h"
#include "ggufs/hf_config.h"
#include "ggufs/names.h"
#include "hf_architectures.h"

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

// A count of the config, if it holds one (render_hf_config has checked every count is a
// non-negative integer).
std::optional<std::uint64_t> count_of(const json& v) {
  if (!v.is_number_integer()) return std::nullopt;
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  const std::int64_t i = v.get<std::int64_t>();
  if (i < 0) return std::nullopt;
  return static_cast<std::uint64_t>(i);
}
std::optional<std::uint64_t> count(const json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  return count_of(*it);
}

// The dimensions the model class builds its parameters from.
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
  std::uint64_t buckets = 0;            // t5's relative attention buckets
  std::uint64_t altup = 0, laurel = 0;  // Gemma 3n's altup_num_inputs and laurel_rank
};

// a·b, or nullopt past 2⁶⁴.
std::optional<std::uint64_t> mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return std::nullopt;
  return a * b;
}

std::optional<std::vector<std::uint64_t>> expected_shape(Shape s, const Dims& d) {
  const auto q = mul(d.heads, d.head_dim);
  const auto kv = mul(d.kv_heads, d.head_dim);
  using V = std::vector<std::uint64_t>;
  auto two = [](std::optional<std::uint64_t> a,
                std::optional<std::uint64_t> b) -> std::optional<V> {
    if (!a || !b) return std::nullopt;
    return V{*a, *b};
  };
  auto one = [](std::optional<std::uint64_t> a) -> std::optional<V> {
    if (!a) return std::nullopt;
    return V{*a};
  };
  switch (s) {
    case Shape::kVocabHidden:
      return V{d.vocab, d.hidden};
    case Shape::kPositionsHidden:
      return V{d.positions, d.hidden};
    case Shape::kHidden:
      return V{d.hidden};
    case Shape::kQ:
      return two(q, d.hidden);
    case Shape::kKv:
      return two(kv, d.hidden);
    case Shape::kO:
      return two(d.hidden, q);
    case Shape::kQBias:
      return one(q);
    case Shape::kKvBias:
      return one(kv);
    case Shape::kFfHidden:
      return V{d.ff, d.hidden};
    case Shape::kHiddenFf:
      return V{d.hidden, d.ff};
    case Shape::kFf:
      return V{d.ff};
    case Shape::kHeadDim:
      return V{d.head_dim};
    case Shape::kRouter:
      return V{d.experts, d.hidden};
    case Shape::kExpertFfHidden:
      return V{d.expert_ff, d.hidden};
    case Shape::kExpertHiddenFf:
      return V{d.hidden, d.expert_ff};
    case Shape::kSharedFfHidden:
      return V{d.shared_expert_ff, d.hidden};
    case Shape::kHiddenSharedFf:
      return V{d.hidden, d.shared_expert_ff};
    case Shape::kOneHidden:
      return V{1, d.hidden};
    case Shape::kExpertsGateUp: {
      const auto ff2 = mul(d.ff, 2);
      if (!ff2) return std::nullopt;
      return V{d.experts, *ff2, d.hidden};
    }
    case Shape::kExpertsDown:
      return V{d.experts, d.hidden, d.ff};
    case Shape::kSharedGateUp:
      return two(mul(d.shared_expert_ff, 2), d.hidden);
    case Shape::kVocab:
      return V{d.vocab};
    case Shape::kSharedExpertsFfHidden:
      return two(mul(d.expert_ff, d.shared_experts), d.hidden);
    case Shape::kHiddenSharedExpertsFf:
      return two(d.hidden, mul(d.expert_ff, d.shared_experts));
    case Shape::kOneExperts:
      return V{1, d.experts};
    case Shape::kExperts:
      return V{d.experts};
    case Shape::kFusedQkv: {
      const auto kv2 = kv ? mul(*kv, 2) : std::nullopt;
      if (!q || !kv2 || *q > UINT64_MAX - *kv2) return std::nullopt;
      return V{*q + *kv2, d.hidden};
    }
    case Shape::kFusedGateUp:
      return two(mul(d.ff, 2), d.hidden);
    case Shape::kConvQkv:
      return two(d.hidden, mul(d.hidden, 3));
    case Shape::kThreeHidden:
      return one(mul(d.hidden, 3));
    case Shape::kHiddenHidden:
      return V{d.hidden, d.hidden};
    case Shape::kHeadsHeadDim:
      return V{d.heads, d.head_dim};
    case Shape::kKvHeadsHeadDim:
      return V{d.kv_heads, d.head_dim};
    case Shape::kThreeHiddenHidden:
      return two(mul(d.hidden, 3), d.hidden);
    case Shape::kHiddenOneConv:
      return V{d.hidden, 1, d.conv_cache};
    case Shape::kInnerState:
      return V{d.inner, d.state};
    case Shape::kInner:
      return V{d.inner};
    case Shape::kInnerOneKernel:
      return V{d.inner, 1, d.kernel};
    case Shape::kTwoInnerHidden:
      return two(mul(d.inner, 2), d.hidden);
    case Shape::kRankStatesInner: {
      const auto states = mul(d.state, 2);
      if (!states || *states > UINT64_MAX - d.rank) return std::nullopt;
      return V{d.rank + *states, d.inner};
    }
    case Shape::kInnerRank:
      return V{d.inner, d.rank};
    case Shape::kHiddenInner:
      return V{d.hidden, d.inner};
    case Shape::kSsmHeads:
      return V{d.rank};
    case Shape::kConvChannelsOneKernel:
    case Shape::kConvChannels:
    case Shape::kMamba2InProj: {
      // conv: I + 2GN channels; in_proj: z and dt besides them, I + R rows more.
      const auto gn = mul(d.groups, d.state);
      const auto gn2 = gn ? mul(*gn, 2) : std::nullopt;
      if (!gn2 || *gn2 > UINT64_MAX - d.inner) return std::nullopt;
      const std::uint64_t channels = d.inner + *gn2;
      if (s == Shape::kConvChannels) return V{channels};
      if (s == Shape::kConvChannelsOneKernel) return V{channels, 1, d.kernel};
      if (d.inner > UINT64_MAX - d.rank || channels > UINT64_MAX - (d.inner + d.rank)) {
        return std::nullopt;
      }
      return V{channels + d.inner + d.rank, d.hidden};
    }
    case Shape::kHeads:
      return V{d.heads};
    case Shape::kExpertsHiddenGateUp: {
      const auto ff2 = mul(d.ff, 2);
      if (!ff2) return std::nullopt;
      return V{d.experts, d.hidden, *ff2};
    }
    case Shape::kExpertsGateUpBias: {
      const auto ff2 = mul(d.ff, 2);
      if (!ff2) return std::nullopt;
      return V{d.experts, *ff2};
    }
    case Shape::kExpertsFfHiddenT:
      return V{d.experts, d.ff, d.hidden};
    case Shape::kExpertsHidden:
      return V{d.experts, d.hidden};
    case Shape::kOne:
      return V{1};
    case Shape::kPerLayerHidden:
      return V{d.per_layer, d.hidden};
    case Shape::kHiddenPerLayer:
      return V{d.hidden, d.per_layer};
    case Shape::kPerLayerEmbeddings:
      return two(d.per_layer_vocab, mul(d.layers, d.per_layer));
    case Shape::kPerLayerModelProjection:
      return two(mul(d.layers, d.per_layer), d.hidden);
    case Shape::kPerLayerInput:
      return V{d.per_layer};
    case Shape::kAltupInputs:
      return V{d.altup, d.altup};
    case Shape::kAltupPredictions:
      return two(mul(d.altup, d.altup), d.altup);
    case Shape::kAltupInputsHidden:
      return V{d.altup, d.hidden};
    case Shape::kLaurelHidden:
      return V{d.laurel, d.hidden};
    case Shape::kHiddenLaurel:
      return V{d.hidden, d.laurel};
    case Shape::kQLoraHidden:
      return V{d.q_lora, d.hidden};
    case Shape::kQLora:
      return V{d.q_lora};
    case Shape::kMlaQ:
    case Shape::kMlaQB:
    case Shape::kMlaKvB:
    case Shape::kMlaO: {
      const bool kv = s == Shape::kMlaKvB || s == Shape::kMlaO;
      const std::uint64_t head = d.nope + (kv ? d.v_head : d.rope);  // config counts: no overflow
      const std::uint64_t per_head = s == Shape::kMlaO ? d.v_head : head;
      const auto rows = mul(d.heads, per_head);
      if (!rows) return std::nullopt;
      if (s == Shape::kMlaO) return V{d.hidden, *rows};
      return V{*rows, s == Shape::kMlaQ ? d.hidden : s == Shape::kMlaQB ? d.q_lora : d.kv_lora};
    }
    case Shape::kKvLoraRopeHidden:
      return V{d.kv_lora + d.rope, d.hidden};
    case Shape::kKvLora:
      return V{d.kv_lora};
    case Shape::kQGate: {
      const auto q2 = q ? mul(*q, 2) : std::nullopt;
      return two(q2, d.hidden);
    }
    case Shape::kLinearQkvz: {
      const auto gn = mul(d.groups, d.state);
      const auto gn2 = gn ? mul(*gn, 2) : std::nullopt;
      const auto i2 = mul(d.inner, 2);
      if (!gn2 || !i2 || *gn2 > UINT64_MAX - *i2) return std::nullopt;
      return V{*gn2 + *i2, d.hidden};
    }
    case Shape::kTwoRankHidden:
      return two(mul(d.rank, 2), d.hidden);
    case Shape::kValueHeadDim:
      if (d.rank == 0) return std::nullopt;
      return V{d.inner / d.rank};
    case Shape::kLinearQkv: {
      const auto gn = mul(d.groups, d.state);
      const auto gn2 = gn ? mul(*gn, 2) : std::nullopt;
      if (!gn2 || *gn2 > UINT64_MAX - d.inner) return std::nullopt;
      return V{*gn2 + d.inner, d.hidden};
    }
    case Shape::kInnerHidden:
      return V{d.inner, d.hidden};
    case Shape::kRankHidden:
      return V{d.rank, d.hidden};
    case Shape::kBucketsHeads:
      return V{d.buckets, d.heads};
    case Shape::kStates:
      return V{d.state};
    case Shape::kTwoInner:
      return one(mul(d.inner, 2));
  }
  return std::nullopt;
}

// The converter holds these in another shape of the same elements in the same order (mamba.py:
// squeeze, reshape; lfm2.py: the Conv1d weight's squeeze(1)); only the element count must match.
bool reshaped(Shape s) {
  return s == Shape::kInner || s == Shape::kInnerOneKernel || s == Shape::kSsmHeads ||
         s == Shape::kConvChannelsOneKernel || s == Shape::kHiddenOneConv;
}

std::string shape_text(const std::vector<std::uint64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

// The numpy shape gguf-py gives a tensor: its n_dims dimensions, outermost first.
std::vector<std::uint64_t> numpy_shape(const TensorInfo& t) {
  std::vector<std::uint64_t> s;
  for (std::uint32_t i = t.n_dims; i > 0; --i) s.push_back(t.ne[std::min<std::uint32_t>(i, 4) - 1]);
  return s;
}

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

// A tensor of no elements holds no weight, yet its ne would drive the layouts' loops (a stack of
// 300 000 empty experts): the first such tensor's reason, else "".
std::string no_elements(const GgufFile& file) {
  for (const TensorInfo& t : file.tensors) {
    if (t.n_elements == 0) {
      return fmt::format("tensor '{}' holds no elements (ne [{}])", printable(t.name),
                         fmt::join(t.ne.begin(), t.ne.begin() + std::min(t.n_dims, 4u), ", "));
    }
  }
  return "";
}

// The GGUF tensors (their indices) by name: globals, and the layer tensors by layer and by name
// after "blk.N." (an encoder-decoder's "enc.blk.N." and "dec.blk.N.").
struct TensorIndex {
  std::map<std::string_view, std::size_t> globals;
  std::map<std::uint64_t, std::map<std::string_view, std::size_t>> blocks, decoder_blocks;
};

// Fills `index` with the tensors of `file` for `row`'s `layers` (and `decoder_layers`), or says
// why the file is no such model: a layer tensor past the file's own block count (the converter's
// appended MTP layers lie below it: hf_architectures.h, appended_layers) or named as the
// converter never names one ("blk.07.", "blk.x.") is no tensor of this model, not dropped
// unseen; a layer without any tensor is a layer transformers would initialise at random (a layer
// is its tensors), as is one lacking a tensor the others hold (hf::uneven_layer); and
// transformers 4.57.6's Qwen2MoeTensorProcessor looks every "_exp" tensor up in its name map (a
// KeyError if absent).
std::string index_tensors(const GgufFile& file, const hf::Architecture& row,
                          std::string_view raw_arch, std::uint64_t layers,
                          std::uint64_t decoder_layers, TensorIndex& index) {
  const bool enc_dec = !row.decoder_prefix.empty();
  const std::string_view blk_prefix = enc_dec ? "enc.blk." : "blk.";
  std::uint64_t file_layers = layers;
  for (const KeyValue& kv : file.kv) {
    const auto* n = std::get_if<std::uint64_t>(&kv.value.data);
    if (n && kv.key == fmt::format("{}.block_count", raw_arch)) file_layers = std::max(layers, *n);
  }
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const std::string_view name = file.tensors[i].name;
    const auto blk = hf::layer_of(name, blk_prefix);
    const auto dec = enc_dec ? hf::layer_of(name, "dec.blk.") : std::nullopt;
    const bool layer_named =
        name.starts_with(blk_prefix) || (enc_dec && name.starts_with("dec.blk."));
    if (layer_named && ((!blk && !dec) || (blk && blk->first >= file_layers) ||
                        (dec && dec->first >= decoder_layers))) {
      return fmt::format(
          "tensor '{}' is no layer of the model's {}{} (the converter names them {}N. with N "
          "below the block count)",
          printable(name), file_layers, enc_dec ? fmt::format(" and {}", decoder_layers) : "",
          blk_prefix);
    }
    if (blk && blk->first < layers) {
      index.blocks[blk->first][blk->second] = i;
    } else if (dec && dec->first < decoder_layers) {
      index.decoder_blocks[dec->first][dec->second] = i;
    } else if (!blk && !dec) {
      index.globals[name] = i;
    }
    if (row.transforms == Transforms::kMoe && contains(name, "_exp")) {
      bool known = blk && blk->first < layers;
      if (known) {
        known = false;
        for (const WeightEntry& e : row.layer) known |= e.expert && e.gguf == blk->second;
      }
      if (!known) {
        return fmt::format(
            "tensor '{}': transformers 4.57.6 splits it as experts but maps it to no layer",
            printable(name));
      }
    }
  }
  for (const auto& [set, count, prefix] :
       {std::tuple{&index.blocks, layers, blk_prefix},
        std::tuple{&index.decoder_blocks, decoder_layers, std::string_view("dec.blk.")}}) {
    if (set->size() == count) continue;
    std::uint64_t missing = 0;  // the first layer absent from the ascending map
    for (const auto& [n, tensors] : *set) {
      if (n != missing) break;
      ++missing;
    }
    return fmt::format("layer {} of {} holds no tensor (no '{}{}.*')", missing, count, prefix,
                       missing);
  }
  // Each layer holds the row's tensors layer 0 holds, but those of a layer kind.
  if (std::string why = hf::uneven_layer(row, blk_prefix, index.blocks, row.layer); !why.empty())
    return why;
  return hf::uneven_layer(row, "dec.blk.", index.decoder_blocks, row.decoder_layer);
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

HfWeightsResult build(const GgufFile& file) {
  if (std::string why = no_elements(file); !why.empty()) return refuse(why);
  const HfConfigResult rendered = render_hf_config(file);
  if (!rendered.config) return refuse(rendered.reason);
  const json config = json::parse(rendered.config->config_json);
  const std::string model_type = config.value("model_type", "");
  std::string_view raw_arch;
  for (const KeyValue& kv : file.kv) {
    if (const auto* s = std::get_if<std::string>(&kv.value.data);
        s && kv.key == "general.architecture") {
      raw_arch = *s;
    }
  }
  // Of a model_type's rows, the file's general.architecture's (nemotron_h's dense and MoE forms).
  const hf::RowChoice proven =
      hf::with_layer_tensors(hf::find_architecture(model_type, raw_arch), file);
  const hf::Architecture* arch = proven.row;
  if (!arch && !proven.reason.empty()) return refuse(proven.reason);
  if (!arch) return refuse(fmt::format("model_type '{}' has no weight map", printable(model_type)));
  if (arch->layer.empty()) return refuse(std::string(arch->no_weights));
  // The converter writes the row's general.architecture; a qwen3moe file named "qwen3_moe"
  // (transformers' name) gets no expert split in transformers' import (TENSOR_PROCESSORS is
  // keyed by the name as written), and its stacked experts would match no parameter.
  if (raw_arch != arch->gguf_arch) {
    return refuse(fmt::format(
        "general.architecture '{}' is not '{}': transformers' import processes its tensors as "
        "another architecture's",
        printable(raw_arch), arch->gguf_arch));
  }

  // A dimension: the config field the row writes GGUF key `<arch>.<suffix>` to as a count, if it
  // has one, or the product a quotient field was taken from (qwen3next's ssm.inner_size is
  // linear_value_head_dim · linear_num_value_heads).
  auto dim = [&](std::string_view suffix) -> std::optional<std::uint64_t> {
    for (const hf::ConfigKey& k : arch->keys) {
      if (k.gguf == suffix &&
          (k.kind == hf::ValueKind::kCount || k.kind == hf::ValueKind::kLayerMax ||
           k.kind == hf::ValueKind::kLayerMin || k.kind == hf::ValueKind::kLayerCounts)) {
        return count(config, std::string(k.config).c_str());
      }
      if (k.gguf == suffix && k.kind == hf::ValueKind::kQuotient) {
        const auto a = count(config, std::string(k.config).c_str());
        const auto b = count(config, std::string(k.over).c_str());
        if (a && b) return mul(*a, *b);
      }
    }
    return std::nullopt;
  };
  Dims d;
  d.vocab = count(config, "vocab_size").value_or(0);
  d.hidden = dim("embedding_length").value_or(0);
  d.heads = dim("attention.head_count").value_or(0);
  const std::uint64_t layers = dim("block_count").value_or(0);
  // SSM rows have no attention heads (the converter writes head_count 0, mamba.py).
  const bool attention =
      std::any_of(arch->keys.begin(), arch->keys.end(),
                  [](const hf::ConfigKey& k) { return k.gguf == "attention.head_count"; });
  if (d.hidden == 0 || (attention && d.heads == 0)) {
    return refuse("the config has no positive hidden size and head count");
  }
  const auto config_kv = dim("attention.head_count_kv");
  const hf::ClassDefaults& defaults = arch->defaults;
  d.kv_heads = config_kv.value_or(defaults.kv_heads ? defaults.kv_heads : d.heads);
  d.head_dim = count(config, "head_dim")
                   .value_or(dim("attention.key_length")  // t5's d_kv
                                 .value_or(defaults.head_dim ? defaults.head_dim
                                           : d.heads         ? d.hidden / d.heads
                                                             : 0));
  if (defaults.ff == 0) {  // gpt2: n_inner None, 4·n_embd
    const auto ff = mul(d.hidden, 4);
    if (!ff) return refuse("4 × hidden size overflows");
    d.ff = *ff;
  } else {
    d.ff = dim("feed_forward_length").value_or(defaults.ff);
  }
  d.experts = dim("expert_count").value_or(defaults.experts);
  d.expert_ff = dim("expert_feed_forward_length").value_or(defaults.expert_ff);
  d.shared_expert_ff = dim("expert_shared_feed_forward_length").value_or(defaults.shared_expert_ff);
  d.positions = count(config, "n_positions").value_or(defaults.positions);
  d.shared_experts = dim("expert_shared_count").value_or(defaults.shared_experts);
  d.conv_cache = dim("shortconv.l_cache").value_or(0);
  // mamba2 holds ssm.inner_size as expand (· hidden), mamba as intermediate_size too: the
  // count, else the first quotient key's field times its divisor.
  d.inner = dim("ssm.inner_size").value_or(0);
  for (const hf::ConfigKey& k : arch->keys) {
    if (d.inner != 0 || k.gguf != "ssm.inner_size" || k.kind != hf::ValueKind::kQuotient) continue;
    const auto a = count(config, std::string(k.config).c_str());
    const auto b = count(config, std::string(k.over).c_str());
    if (a && b) d.inner = mul(*a, *b).value_or(0);
  }
  d.state = dim("ssm.state_size").value_or(0);
  d.rank = dim("ssm.time_step_rank").value_or(0);
  d.groups = dim("ssm.group_count").value_or(0);
  d.kernel = dim("ssm.conv_kernel").value_or(0);
  d.per_layer = dim("embedding_length_per_layer_input").value_or(0);
  d.per_layer_vocab = count(config, "vocab_size_per_layer_input").value_or(0);
  d.layers = layers;
  d.q_lora = dim("attention.q_lora_rank").value_or(0);
  d.kv_lora = dim("attention.kv_lora_rank").value_or(0);
  d.rope = dim("rope.dimension_count").value_or(0);
  d.nope = count(config, "qk_nope_head_dim").value_or(0);
  d.v_head = dim("attention.value_length_mla").value_or(0);
  d.buckets = dim("attention.relative_buckets_count").value_or(0);
  d.altup = dim("altup.num_inputs").value_or(0);
  d.laurel = count(config, "laurel_rank").value_or(0);
  // An encoder-decoder's layers: "enc.blk.N." and "dec.blk.N." (hf_architectures.h).
  const std::uint64_t decoder_layers =
      arch->decoder_prefix.empty() ? 0 : dim("decoder_block_count").value_or(layers);
  // Qwen2MoeTensorProcessor splits config.get("num_experts", 60) experts; other rows' classes
  // build expert_count's.
  const std::uint64_t split_experts =
      arch->transforms == Transforms::kMoe ? count(config, "num_experts").value_or(60) : d.experts;

  // The GGUF tensors by name: globals, and "blk.N.*" of the model's layers.
  TensorIndex index;
  if (std::string why = index_tensors(file, *arch, raw_arch, layers, decoder_layers, index);
      !why.empty()) {
    return refuse(why);
  }
  // Plain references, not a structured binding: the lambdas below capture them (clang 14, the
  // fuzz build's, captures no structured binding).
  const auto& globals = index.globals;
  const auto& blocks = index.blocks;
  const auto& decoder_blocks = index.decoder_blocks;

  std::vector<HfWeight> out;
  // Appends the parameter `hf_name` from tensor `source` with the processor's transform.
  auto add = [&](std::string hf_name, const WeightEntry& entry, std::size_t source,
                 std::uint64_t expert, std::vector<std::size_t> parts = {}) -> std::string {
    const TensorInfo& t = file.tensors[source];
    const std::string_view name = t.name;
    HfWeight w;
    w.hf_name = std::move(hf_name);
    w.source = source;
    w.shape = numpy_shape(t);
    // The fused split's inverse: the parts' rows (numpy axis -2) follow one another (MLA's
    // kv_b: below).
    for (const std::size_t part :
         arch->transforms == Transforms::kMla ? std::vector<std::size_t>{} : parts) {
      std::vector<std::uint64_t> s = numpy_shape(file.tensors[part]);
      const std::size_t n = w.shape.size();
      if (n < 2 || s.size() != n) {
        return fmt::format("tensor '{}': not a matrix stack of the shape of '{}'",
                           printable(file.tensors[part].name), printable(name));
      }
      const std::uint64_t rows = s[n - 2];
      s[n - 2] = w.shape[n - 2];
      if (s != w.shape || rows > UINT64_MAX - w.shape[n - 2]) {
        return fmt::format("tensor '{}' {} does not fit '{}' {}",
                           printable(file.tensors[part].name), shape_text(s), printable(name),
                           shape_text(w.shape));
      }
      w.shape[n - 2] += rows;
      w.transform = HfTransform::kConcatRows;
    }
    w.parts = std::move(parts);
    if (entry.expert) {
      if (w.shape.empty() || w.shape[0] < split_experts) {
        return fmt::format("tensor '{}': fewer than the {} experts transformers splits",
                           printable(name), split_experts);
      }
      w.shape.erase(w.shape.begin());
      w.transform = HfTransform::kSelect;
      w.index = expert;
    }
    Transforms family = arch->transforms;
    if (family == Transforms::kLlamaSsm) {  // a hybrid: A_log is the SSM's, q/k rows llama's
      family = entry.hf.ends_with("A_log") ? Transforms::kSsm : Transforms::kLlama;
    }
    // Families that read a fused tensor's parts themselves (else kConcatRows, set above).
    const bool own_parts = family == Transforms::kGptOss || family == Transforms::kMla ||
                           family == Transforms::kQwen3Next;
    switch (w.parts.empty() || own_parts ? family : Transforms::kNone) {
      case Transforms::kNone:
        break;
      case Transforms::kLlama: {
        // LlamaTensorProcessor: only when the config holds both head counts.
        const bool q = contains(name, ".attn_q."), k = contains(name, ".attn_k.");
        if ((q || k) && config_kv) {
          const std::uint64_t n = (k && *config_kv != d.heads) ? *config_kv : d.heads;
          const std::uint64_t rows = w.shape.empty() ? 0 : w.shape[0];
          if (n == 0 || rows % 2 != 0 || (rows / 2) % n != 0) {  // 2·n may overflow
            return fmt::format("tensor '{}': {} rows are not a multiple of 2 × {} heads",
                               printable(name), rows, n);
          }
          w.transform = HfTransform::kReversePermute;
          w.n_head = n;
        }
        break;
      }
      case Transforms::kMoe:  // the experts: above
        break;
      case Transforms::kGpt2:
        if (contains(name, "attn_qkv.weight") || contains(name, "ffn_down.weight") ||
            contains(name, "ffn_up.weight") || contains(name, "attn_output.weight")) {
          if (w.shape.size() != 2) {
            return fmt::format("tensor '{}' is not 2-D", printable(name));
          }
          std::swap(w.shape[0], w.shape[1]);
          w.transform = HfTransform::kTranspose;
        }
        break;
      case Transforms::kGptOss:
        // The experts' matrices (E, F, H) transposed, gate's and up's columns interleaved; the
        // gate and up biases (E, F) interleaved; the down bias as it is.
        if (contains(name, "_exps.weight") || !w.parts.empty()) {
          std::vector<std::uint64_t> s = numpy_shape(t);
          const bool matrices = contains(name, ".weight");
          if (s.size() != (matrices ? 3u : 2u) || w.parts.size() > 1) {
            return fmt::format("tensor '{}' is not a stack of experts", printable(name));
          }
          if (matrices) std::swap(s[1], s[2]);
          s.back() *= 1 + w.parts.size();  // the parts' shapes: checked above
          w.shape = std::move(s);
          w.transform = HfTransform::kInterleaveTransposed;
        }
        break;
      case Transforms::kGemma:
        if (contains(name, "norm.weight")) {
          w.transform = HfTransform::kAddConstant;
          w.constant = -1.0f;
        }
        break;
      case Transforms::kRegroupQkv:
        if (contains(name, ".attn_qkv.")) {
          // The converter's view (n_kv, n_head / n_kv + 2, head_dim, …) needs whole groups.
          const std::uint64_t rows = w.shape.empty() ? 0 : w.shape[0];
          const auto kv2 = mul(d.kv_heads, 2);
          if (d.kv_heads == 0 || d.heads % d.kv_heads != 0 || !kv2 || *kv2 > UINT64_MAX - d.heads ||
              rows % (d.heads + *kv2) != 0) {
            return fmt::format("tensor '{}': {} rows are not {} query and 2 × {} KV heads",
                               printable(name), rows, d.heads, d.kv_heads);
          }
          w.transform = HfTransform::kRegroupQkv;
          w.n_head = d.heads;
          w.groups = d.kv_heads;
        }
        break;
      case Transforms::kSsm:
        if (entry.hf.ends_with("A_log")) w.transform = HfTransform::kLogOfNegated;
        break;
      case Transforms::kLlamaSsm:  // resolved above
        break;
      case Transforms::kMla:
        // attn_k_b (heads, r, dn) and attn_v_b (heads, dv, r) back to kv_b_proj.
        if (!w.parts.empty()) {
          const std::vector<std::uint64_t> v = numpy_shape(file.tensors[w.parts[0]]);
          const bool fits = w.parts.size() == 1 && w.shape.size() == 3 && v.size() == 3 &&
                            v[0] == w.shape[0] && v[2] == w.shape[1] &&
                            w.shape[2] <= UINT64_MAX - v[1];
          const auto rows = fits ? mul(w.shape[0], w.shape[2] + v[1]) : std::nullopt;
          if (!rows) {
            return fmt::format("tensor '{}' and '{}' are not one MLA kv_b split per head",
                               printable(name), printable(file.tensors[w.parts[0]].name));
          }
          w.shape = {*rows, w.shape[1]};
          w.transform = HfTransform::kConcatTransposedRows;
        }
        break;
      case Transforms::kQwen35:
        if (d.groups != d.rank) {
          if (std::string why = untile_value_heads(w, entry, t, d); !why.empty()) return why;
        }
        [[fallthrough]];
      case Transforms::kQwen3Next:
        if (entry.hf.ends_with("A_log")) {
          w.transform = HfTransform::kLogOfNegated;
        } else if (contains(name, "norm.weight") && !contains(name, "ssm_norm")) {
          w.transform = HfTransform::kAddConstant;
          w.constant = -1.0f;
        } else if (!w.parts.empty()) {
          // attn_qkv then attn_gate: whole key heads of q, k and v rows, z rows per key head.
          const std::uint64_t z = file.tensors[w.parts[0]].ne[1];
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
        break;
    }
    // A fused tensor the converter split in equal parts (granite.py, GraniteMoeModel.
    // modify_tensors: input_linear's gate and up halves at intermediate_size), which transformers
    // splits back at the same row (modeling_granitemoe.py, GraniteMoeMoE.forward: chunk(2)): each
    // part its own width, not only their sum, or a gate row would be read as an up row.
    if (w.transform == HfTransform::kConcatRows) {
      const std::uint64_t rows = numpy_shape(t).rbegin()[1];
      for (const std::size_t part : w.parts) {
        if (numpy_shape(file.tensors[part]).rbegin()[1] != rows) {
          return fmt::format("tensor '{}' has not the {} rows of '{}': {} is split in equal parts",
                             printable(file.tensors[part].name), rows, printable(name), w.hf_name);
        }
      }
    }
    const auto expected = expected_shape(entry.shape, d);
    if (!expected) return fmt::format("tensor '{}': the config's shape overflows", printable(name));
    // Gemma 3n's per-layer embeddings, zero-padded to vocab_size (HfTransform::kFirstRows).
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
    if (out.size() >= kMaxWeights) return fmt::format("more than {} tensors", kMaxWeights);
    out.push_back(std::move(w));
    return "";
  };
  auto add_globals = [&](const std::vector<WeightEntry>& entries) -> std::string {
    for (const WeightEntry& e : entries) {
      const auto it = globals.find(e.gguf);
      if (it == globals.end()) continue;
      if (!e.expert) {
        if (std::string why = add(std::string(e.hf), e, it->second, 0); !why.empty()) return why;
        continue;
      }
      // A stack of altup_num_inputs − 1 matrices (hf_architectures.h, WeightEntry), exactly.
      const std::vector<std::uint64_t> s = numpy_shape(file.tensors[it->second]);
      if (d.altup == 0 || s.empty() || s[0] != d.altup - 1) {
        return fmt::format("tensor '{}': {} is no stack of altup_num_inputs − 1 = {} matrices",
                           printable(e.gguf), shape_text(s), d.altup ? d.altup - 1 : 0);
      }
      for (std::uint64_t x = 0; x + 1 < d.altup; ++x) {
        const std::string hf = fmt::format(fmt::runtime(e.hf), x);
        if (std::string why = add(hf, e, it->second, x); !why.empty()) return why;
      }
    }
    return "";
  };

  const std::uint64_t head_dim = d.head_dim, ff = d.ff;
  const auto per_layer_config = config.find("per_layer_config");
  // Gemma 4's double-wide MLP: twice as wide in the layers that reuse another's keys and values
  // (modeling_gemma4.py, Gemma4TextMLP).
  const bool double_wide = config.value("use_double_wide_mlp", json(false)) == json(true);
  const std::uint64_t kv_shared = count(config, "num_kv_shared_layers").value_or(0);
  // Gemma 3n's intermediate_size, one a layer (ValueKind::kLayerCounts).
  const json* ff_list = nullptr;
  for (const hf::ConfigKey& k : arch->keys) {
    const auto it = config.find(std::string(k.config));
    if (k.gguf == "feed_forward_length" && it != config.end() && it->is_array()) ff_list = &*it;
  }
  // The layers of `blocks` under `layer_prefix`, each with `layer`'s entries.
  auto add_layers = [&](const auto& blocks, std::string_view layer_prefix,
                        const std::vector<WeightEntry>& layer) -> std::string {
    for (const auto& [n, tensors] : blocks) {
      const std::string prefix = fmt::format(fmt::runtime(layer_prefix), n);
      // A layer's own head_dim (Gemma4TextConfig's per_layer_config: the full-attention layers').
      d.head_dim = head_dim;
      d.ff = ff;
      if (double_wide && kv_shared <= layers && n >= layers - kv_shared) {
        d.ff = mul(ff, 2).value_or(0);
      }
      if (ff_list) {
        d.ff = n < ff_list->size() ? count_of((*ff_list)[n]).value_or(0) : 0;
      }
      if (per_layer_config != config.end() && per_layer_config->is_object()) {
        const auto layer_config = per_layer_config->find(std::to_string(n));
        if (layer_config != per_layer_config->end() && layer_config->is_object()) {
          d.head_dim = count(*layer_config, "head_dim").value_or(head_dim);
        }
      }
      for (std::size_t i = 0; i < layer.size();) {
        if (!layer[i].expert) {
          const WeightEntry& e = layer[i++];
          const auto it = tensors.find(e.gguf);
          if (it == tensors.end()) continue;
          std::vector<std::size_t> parts;
          for (const std::string_view then : e.then) {
            if (then.empty()) break;
            const auto part = tensors.find(then);
            if (part == tensors.end()) {
              return fmt::format("tensor 'blk.{}.{}' has no 'blk.{}.{}': {} is both", n, e.gguf, n,
                                 then, e.hf);
            }
            parts.push_back(part->second);
          }
          if (std::string why = add(prefix + std::string(e.hf), e, it->second, 0, std::move(parts));
              !why.empty()) {
            return why;
          }
          continue;
        }
        // A run of expert entries: expert by expert, each expert's parameters in entry order.
        // Only the stacks this layer holds, each checked to hold the experts before any is
        // emitted: the loop then runs at most once per stacked expert, whatever expert_count says.
        std::size_t end = i;
        std::vector<std::pair<const WeightEntry*, std::size_t>> stacks;
        for (; end < layer.size() && layer[end].expert; ++end) {
          const auto it = tensors.find(layer[end].gguf);
          if (it == tensors.end()) continue;
          const TensorInfo& t = file.tensors[it->second];
          // numpy_shape's first dimension: the stack's.
          if (t.n_dims == 0 || t.ne[std::min<std::uint32_t>(t.n_dims, 4) - 1] < split_experts) {
            return fmt::format("tensor '{}': fewer than the {} experts transformers splits",
                               printable(t.name), split_experts);
          }
          stacks.emplace_back(&layer[end], it->second);
        }
        if (!stacks.empty() && split_experts > kMaxWeights) {
          return fmt::format("more than {} tensors", kMaxWeights);
        }
        for (std::uint64_t x = 0; !stacks.empty() && x < split_experts; ++x) {
          for (const auto& [e, source] : stacks) {
            const std::string hf = prefix + fmt::format(fmt::runtime(e->hf), x);
            if (std::string why = add(hf, *e, source, x); !why.empty()) return why;
          }
        }
        i = end;
      }
    }
    return "";
  };
  if (std::string why = add_globals(arch->before); !why.empty()) return refuse(why);
  if (std::string why = add_layers(blocks, arch->layer_prefix, arch->layer); !why.empty()) {
    return refuse(why);
  }
  if (std::string why = add_globals(arch->between); !why.empty()) return refuse(why);
  if (std::string why = add_layers(decoder_blocks, arch->decoder_prefix, arch->decoder_layer);
      !why.empty()) {
    return refuse(why);
  }
  if (std::string why = add_globals(arch->after); !why.empty()) return refuse(why);
  if (std::string why = one_tensor_a_name(file, out); !why.empty()) return refuse(why);
  std::vector<std::size_t> omitted = unmapped(file, out);
  return {std::move(out), "", std::move(omitted)};
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
  try {
    return build(file);
  } catch (const std::exception& e) {  // bad_alloc, a malformed rendered config
    return refuse(not_enough_memory(e, "build its weight map")
                      .value_or(fmt::format("no weight map: {}", e.what())));
  }
}

std::uint64_t hf_untiled_head(std::uint64_t hf_head, std::uint64_t k_heads, std::uint64_t v_heads) {
  const std::uint64_t r = v_heads / k_heads;  // value heads per key head
  return (hf_head % r) * k_heads + hf_head / r;
}

}  // namespace ggufs
