// plan_model and its second step: the dimensions a model class builds its parameters from
// (transformers' configuration_<model>.py and modeling_<model>.py), read from the config fields
// the first step rendered, and the layers' tensors, indexed once for the state_dict
// (hf_weights.cpp). gguf-py 0.19.0's tensor names (gguf/tensor_mapping.py: "blk.{bid}") bound what
// a layer tensor is.
#include "hf_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <variant>

#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs::hf {
namespace {

using nlohmann::json;

// A count of the config, if it holds one (plan_config has checked every count is a non-negative
// integer).
std::optional<std::uint64_t> count_of(const json& v) {
  if (!v.is_number_integer()) return std::nullopt;
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  const std::int64_t i = v.get<std::int64_t>();
  if (i < 0) return std::nullopt;
  return static_cast<std::uint64_t>(i);
}
std::optional<std::uint64_t> count(const json& config, std::string_view key) {
  const auto it = config.find(key);
  if (it == config.end()) return std::nullopt;
  return count_of(*it);
}

// A dimension: the config field the row writes GGUF key `<arch>.<suffix>` to as a count, if it
// has one, or the product a quotient field was taken from (qwen3next's ssm.inner_size is
// linear_value_head_dim · linear_num_value_heads).
std::optional<std::uint64_t> dim(const Plan& plan, std::string_view suffix) {
  for (const ConfigKey& k : plan.row->keys) {
    if (k.gguf != suffix) continue;
    if (k.kind == ValueKind::kCount || k.kind == ValueKind::kLayerMax ||
        k.kind == ValueKind::kLayerMin || k.kind == ValueKind::kLayerCounts) {
      return count(plan.config, k.config);
    }
    if (k.kind == ValueKind::kQuotient) {
      const auto a = count(plan.config, k.config), b = count(plan.config, k.over);
      if (a && b) return mul(*a, *b);
    }
  }
  return std::nullopt;
}

// The attention and MLP dimensions (the class defaults where the file has no key).
std::string attention_dims(Plan& plan) {
  Dims& d = plan.dims;
  const ClassDefaults& defaults = plan.row->defaults;
  d.vocab = count(plan.config, "vocab_size").value_or(0);
  d.hidden = dim(plan, "embedding_length").value_or(0);
  d.heads = dim(plan, "attention.head_count").value_or(0);
  // SSM rows have no attention heads (the converter writes head_count 0, mamba.py).
  const auto& keys = plan.row->keys;
  const bool attention = std::any_of(keys.begin(), keys.end(), [](const ConfigKey& k) {
    return k.gguf == "attention.head_count";
  });
  if (d.hidden == 0 || (attention && d.heads == 0)) {
    return "the config has no positive hidden size and head count";
  }
  plan.config_kv = dim(plan, "attention.head_count_kv");
  d.kv_heads = plan.config_kv.value_or(defaults.kv_heads ? defaults.kv_heads : d.heads);
  const std::uint64_t fallback_head_dim = defaults.head_dim ? defaults.head_dim
                                          : d.heads         ? d.hidden / d.heads
                                                            : 0;
  d.head_dim = count(plan.config, "head_dim")
                   .value_or(dim(plan, "attention.key_length").value_or(fallback_head_dim));
  if (defaults.ff == 0) {  // gpt2: n_inner None, 4·n_embd
    const auto ff = mul(d.hidden, 4);
    if (!ff) return "4 × hidden size overflows";
    d.ff = *ff;
  } else {
    d.ff = dim(plan, "feed_forward_length").value_or(defaults.ff);
  }
  d.experts = dim(plan, "expert_count").value_or(defaults.experts);
  d.expert_ff = dim(plan, "expert_feed_forward_length").value_or(defaults.expert_ff);
  d.shared_expert_ff =
      dim(plan, "expert_shared_feed_forward_length").value_or(defaults.shared_expert_ff);
  d.positions = count(plan.config, "n_positions").value_or(defaults.positions);
  d.shared_experts = dim(plan, "expert_shared_count").value_or(defaults.shared_experts);
  // Qwen2MoeTensorProcessor splits config.get("num_experts", 60) experts; other rows' classes
  // build expert_count's.
  plan.split_experts = plan.row->transforms == Transforms::kMoe
                           ? count(plan.config, "num_experts").value_or(60)
                           : d.experts;
  return "";
}

// The SSM, MLA, per-layer-input and other dimensions (0 where the row has none).
void other_dims(Plan& plan) {
  Dims& d = plan.dims;
  d.conv_cache = dim(plan, "shortconv.l_cache").value_or(0);
  // mamba2 holds ssm.inner_size as expand (· hidden), mamba as intermediate_size too: the
  // count, else the first quotient key's field times its divisor (dim).
  d.inner = dim(plan, "ssm.inner_size").value_or(0);
  d.state = dim(plan, "ssm.state_size").value_or(0);
  d.rank = dim(plan, "ssm.time_step_rank").value_or(0);
  d.groups = dim(plan, "ssm.group_count").value_or(0);
  d.kernel = dim(plan, "ssm.conv_kernel").value_or(0);
  d.per_layer = dim(plan, "embedding_length_per_layer_input").value_or(0);
  d.per_layer_vocab = count(plan.config, "vocab_size_per_layer_input").value_or(0);
  d.layers = dim(plan, "block_count").value_or(0);
  d.q_lora = dim(plan, "attention.q_lora_rank").value_or(0);
  d.kv_lora = dim(plan, "attention.kv_lora_rank").value_or(0);
  d.rope = dim(plan, "rope.dimension_count").value_or(0);
  d.nope = count(plan.config, "qk_nope_head_dim").value_or(0);
  d.v_head = dim(plan, "attention.value_length_mla").value_or(0);
  d.index_heads = dim(plan, "attention.indexer.head_count").value_or(0);
  d.index_head = dim(plan, "attention.indexer.key_length").value_or(0);
  d.buckets = dim(plan, "attention.relative_buckets_count").value_or(0);
  d.altup = dim(plan, "altup.num_inputs").value_or(0);
  d.laurel = count(plan.config, "laurel_rank").value_or(0);
}

// Each layer's own head_dim and MLP width: Gemma4TextConfig's per_layer_config (the
// full-attention layers' head_dim) and double-wide MLP (twice as wide in the layers that reuse
// another's keys and values: modeling_gemma4.py, Gemma4TextMLP), Gemma 3n's intermediate_size
// one a layer (ValueKind::kLayerCounts). block_count is at most 65536 here (plan_config).
void layer_dims(Plan& plan) {
  const Dims& d = plan.dims;
  const json& config = plan.config;
  const auto per_layer_config = config.find("per_layer_config");
  const bool double_wide = config.value("use_double_wide_mlp", json(false)) == json(true);
  const std::uint64_t kv_shared = count(config, "num_kv_shared_layers").value_or(0);
  const json* ff_list = nullptr;
  for (const ConfigKey& k : plan.row->keys) {
    const auto it = config.find(k.config);
    if (k.gguf == "feed_forward_length" && it != config.end() && it->is_array()) ff_list = &*it;
  }
  plan.layer_dims.assign(d.layers, LayerDims{d.head_dim, d.ff});
  for (std::uint64_t n = 0; n < d.layers; ++n) {
    LayerDims& l = plan.layer_dims[n];
    if (double_wide && kv_shared <= d.layers && n >= d.layers - kv_shared) {
      l.ff = mul(d.ff, 2).value_or(0);
    }
    if (ff_list) l.ff = n < ff_list->size() ? count_of((*ff_list)[n]).value_or(0) : 0;
    if (per_layer_config != config.end() && per_layer_config->is_object()) {
      const auto layer_config = per_layer_config->find(std::to_string(n));
      if (layer_config != per_layer_config->end() && layer_config->is_object()) {
        l.head_dim = count(*layer_config, "head_dim").value_or(d.head_dim);
      }
    }
  }
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

// The file's own block count (`<arch>.block_count` as written, the converter's appended MTP
// layers included: hf_architectures.h, appended_layers), at least `layers`.
std::uint64_t file_block_count(const GgufFile& file, std::string_view arch, std::uint64_t layers) {
  for (const KeyValue& kv : file.kv) {
    const auto* n = std::get_if<std::uint64_t>(&kv.value.data);
    if (n && kv.key == fmt::format("{}.block_count", arch)) layers = std::max(layers, *n);
  }
  return layers;
}

// transformers 4.57.6's Qwen2MoeTensorProcessor looks every "_exp" tensor up in its name map (a
// KeyError if absent): a kMoe row's "_exp" tensor must be one of a layer's expert entries.
std::string unknown_expert(const Architecture& row, std::string_view name,
                           const std::optional<std::pair<std::uint64_t, std::string_view>>& blk,
                           std::uint64_t layers) {
  if (row.transforms != Transforms::kMoe || name.find("_exp") == std::string_view::npos) return "";
  bool known = false;
  for (const WeightEntry& e : row.layer) {
    known |= blk && blk->first < layers && e.expert && e.gguf == blk->second;
  }
  if (known) return "";
  return fmt::format(
      "tensor '{}': transformers 4.57.6 splits it as experts but maps it to no layer",
      printable(name));
}

// The first layer below `count` that `layers` (ascending) lacks, as a reason, else "".
std::string missing_layer(const Layers& layers, std::uint64_t count, std::string_view prefix) {
  if (layers.size() == count) return "";
  std::uint64_t missing = 0;
  for (const auto& entry : layers) {
    if (entry.first != missing) break;
    ++missing;
  }
  return fmt::format("layer {} of {} holds no tensor (no '{}{}.*')", missing, count, prefix,
                     missing);
}

// The kinds config field `field` gives the `layers` layers, `kind_of(n)` each.
template <class KindOf>
LayerKinds::Axis kind_axis(std::string field, std::uint64_t layers, KindOf kind_of) {
  LayerKinds::Axis axis{std::move(field), {}};
  axis.of_layer.reserve(layers);
  for (std::uint64_t n = 0; n < layers; ++n) axis.of_layer.push_back(kind_of(n));
  return axis;
}

// Each of `layers` layers' kinds as the plan's config gives them (hf_architectures.h,
// LayerKinds): its layer_types element (lfm2, granitehybrid, qwen3next, qwen35), its character
// of the layer pattern (NemotronH's hybrid_override_pattern), dense or MoE
// (Architecture::moe_layers), the kinds of the row's offsets and periods (Jamba), and the
// leading layers' (Gemma's unshared KV, T5's relative attention bias); none for other rows.
// One kind per layer and axis: the layer count is bounded by the layers the file holds.
LayerKinds config_layer_kinds(const Plan& plan, std::uint64_t layers) {
  const Architecture& row = *plan.row;
  LayerKinds kinds;
  if (!row.layer_pattern.empty()) {
    const auto it = plan.config.find(std::string(row.layer_pattern));
    if (it != plan.config.end() && it->is_string()) {
      const std::string_view pattern = it->get_ref<const std::string&>();
      kinds.axes.push_back(kind_axis(std::string(row.layer_pattern), pattern.size(),
                                     [&](std::uint64_t n) { return pattern.substr(n, 1); }));
    }
  }
  if (!row.moe_layers.from.empty()) {
    const std::uint64_t from =
        count(plan.config, row.moe_layers.from).value_or(row.moe_layers.from_default);
    const std::uint64_t every =
        row.moe_layers.every.empty()
            ? 1
            : count(plan.config, row.moe_layers.every).value_or(row.moe_layers.every_default);
    kinds.axes.push_back(kind_axis(std::string(row.moe_layers.from), layers, [&](std::uint64_t n) {
      return std::string_view(n >= from && every != 0 && (n + 1) % every == 0 ? "moe" : "dense");
    }));
  }
  if (!row.layer_types.empty()) {
    const std::string field(row.layer_types.field);
    const auto it = plan.config.find(field);
    if (it != plan.config.end() && it->is_array()) {
      kinds.axes.push_back(kind_axis(field, it->size(), [&](std::uint64_t n) {
        const nlohmann::json& t = (*it)[n];
        return t.is_string() ? std::string_view(t.get_ref<const std::string&>())
                             : std::string_view();
      }));
    }
  }
  for (const LayerPeriod& p : row.layer_periods) {
    if (p.kind.empty()) continue;
    const std::uint64_t offset = count(plan.config, p.offset).value_or(0);
    const std::uint64_t period = count(plan.config, p.period).value_or(0);
    kinds.axes.push_back(kind_axis(
        fmt::format("{} and {}", p.offset, p.period), layers,
        [&](std::uint64_t n) { return period != 0 && n % period == offset ? p.kind : p.other; }));
  }
  if (const LeadingLayers& lead = row.leading_layers; !lead.kind.empty()) {
    const std::uint64_t leading =
        lead.count != 0 ? lead.count
                        : layers - std::min(layers, count(plan.config, lead.field).value_or(0));
    kinds.axes.push_back(kind_axis(std::string(lead.field), layers, [&](std::uint64_t n) {
      return std::string_view(n < leading ? lead.kind : "");
    }));
  }
  return kinds;
}

// Fills plan.index with the tensors of `file` for the row's layers (and the decoder's), or says
// why the file is no such model: a layer tensor past the file's own block count or named as the
// converter never names one ("blk.07.", "blk.x.") is no tensor of this model, not dropped
// unseen; a layer without any tensor is a layer transformers would initialise at random (a layer
// is its tensors), as is one lacking a tensor the others hold, one its class builds in every
// layer, or one of its kind (uneven_layer).
std::string index_tensors(const GgufFile& file, Plan& plan, std::uint64_t decoder_layers) {
  const Architecture& row = *plan.row;
  const std::uint64_t layers = plan.dims.layers;
  const bool enc_dec = !row.decoder_prefix.empty();
  const std::string_view blk_prefix = enc_dec ? "enc.blk." : "blk.";
  const std::uint64_t file_layers = file_block_count(file, plan.arch, layers);
  TensorIndex& index = plan.index;
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const std::string_view name = file.tensors[i].name;
    const auto blk = layer_of(name, blk_prefix);
    const auto dec = enc_dec ? layer_of(name, "dec.blk.") : std::nullopt;
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
    if (std::string why = unknown_expert(row, name, blk, layers); !why.empty()) return why;
  }
  if (std::string why = missing_layer(index.blocks, layers, blk_prefix); !why.empty()) return why;
  if (std::string why = missing_layer(index.decoder_blocks, decoder_layers, "dec.blk.");
      !why.empty()) {
    return why;
  }
  // Layer 0 holds the row's required tensors, and each layer those layer 0 holds, but those of
  // a layer kind: each of their groups whole or not at all, the one of the kind the config
  // gives the layer, one of each choice.
  if (std::string why =
          uneven_layer(row, blk_prefix, index.blocks, row.layer, config_layer_kinds(plan, layers));
      !why.empty()) {
    return why;
  }
  return uneven_layer(row, "dec.blk.", index.decoder_blocks, row.decoder_layer,
                      config_layer_kinds(plan, decoder_layers));
}

}  // namespace

std::string plan_weights(const GgufFile& file, Plan& plan) {
  if (std::string why = no_elements(file); !why.empty()) return why;
  const Architecture& row = *plan.row;
  if (row.layer.empty()) return std::string(row.no_weights);
  // The converter writes the row's general.architecture; a qwen3moe file named "qwen3_moe"
  // (transformers' name) gets no expert split in transformers' import (TENSOR_PROCESSORS is
  // keyed by the name as written), and its stacked experts would match no parameter.
  if (plan.arch != row.gguf_arch) {
    return fmt::format(
        "general.architecture '{}' is not '{}': transformers' import processes its tensors as "
        "another architecture's",
        printable(plan.arch), row.gguf_arch);
  }
  if (std::string why = attention_dims(plan); !why.empty()) return why;
  other_dims(plan);
  // An encoder-decoder's layers: "enc.blk.N." and "dec.blk.N." (hf_architectures.h).
  const std::uint64_t decoder_layers =
      row.decoder_prefix.empty() ? 0 : dim(plan, "decoder_block_count").value_or(plan.dims.layers);
  if (std::string why = index_tensors(file, plan, decoder_layers); !why.empty()) return why;
  layer_dims(plan);
  return "";
}

PlanResult plan_model(const GgufFile& file) {
  try {
    Plan plan;
    if (std::string why = plan_config(file, plan); !why.empty()) return {std::nullopt, why};
    plan.no_weights = plan_weights(file, plan);
    return {std::move(plan), ""};
  } catch (const std::exception& e) {  // bad_alloc: the daemon stays up (error.h)
    return {std::nullopt,
            not_enough_memory(e, "plan hf/").value_or(fmt::format("no hf/ plan: {}", e.what()))};
  }
}

}  // namespace ggufs::hf
