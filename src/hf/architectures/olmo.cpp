// The rows of the classes llama.cpp's conversion/olmo.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// olmo.py, OlmoeModel.set_gguf_parameters: base.py's, the rms epsilon then overwritten by 1e-5.
constexpr auto kOlmoeKeys =
    base_and({{"expert_count", "num_experts"}, {"expert_used_count", "num_experts_per_tok"}});

// olmo.py, OlmoModel.set_gguf_parameters: clip_qkv as clamp_kqv (its layer-norm epsilon is
// the fixed 1e-5 of OlmoLayerNorm, no config field).
constexpr auto kOlmoKeys = base_and({{"attention.clamp_kqv", "clip_qkv", kNumber}});

constexpr ConfigConstant kMlxAttentionBias[] = {{"attention_bias", "true"}};  // SeedOssConfig

}  // namespace

void olmo(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& biased_attention = b.biased_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // OLMoE's experts are intermediate_size wide (olmo.py, OlmoeModel.modify_tensors stacks
  // mlp.experts.X.*); its q_norm spans every head, its k_norm the KV heads.
  add({.gguf_arch = "olmoe",
       .model_type = "olmoe",
       .class_name = "OlmoeForCausalLM",
       .keys = kOlmoeKeys,
       .defaults = {.ff = 2048, .experts = 64, .eos = 50279, .pad = 1},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {llama_attention,
            {{"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kQBias},
             {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kKvBias},
             {"ffn_gate_inp.weight", "mlp.gate.weight", Shape::kRouter},
             {"ffn_gate_exps.weight", "mlp.experts.{}.gate_proj.weight", Shape::kFfHidden, true},
             {"ffn_up_exps.weight", "mlp.experts.{}.up_proj.weight", Shape::kFfHidden, true},
             {"ffn_down_exps.weight", "mlp.experts.{}.down_proj.weight", Shape::kHiddenFf, true}},
            two_norms}),
       .after = norm_head,
       .mlx = {.experts = kMlxSwitchMlp}});
  // Olmo2's q_norm and k_norm span all heads (nh·hd, nkv·hd), and its norms follow attention
  // and the MLP (modeling_olmo2.py, Olmo2Attention and Olmo2DecoderLayer); the converter renames
  // only (olmo.py, Olmo2Model).
  add({.gguf_arch = "olmo2",
       .model_type = "olmo2",
       .class_name = "Olmo2ForCausalLM",
       .keys = kBaseKeys,
       .defaults = {.ff = 11008, .eos = 50279, .pad = 1},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({llama_attention,
                {{"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kQBias},
                 {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kKvBias}},
                gated_mlp,
                {{"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"post_ffw_norm.weight", "post_feedforward_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head});
  // The converter renames only (olmo.py, SeedOssModel); head_dim is written as
  // attention.key_length (base.py), as qwen3's. gguf-py's SEED_OSS tensors have no FFN_NORM:
  // post_attention_layernorm is ATTN_POST_NORM.
  add({.gguf_arch = "seed_oss",
       .model_type = "seed_oss",
       .class_name = "SeedOssForCausalLM",
       .keys = kQwen3Keys,
       .defaults = {.kv_heads = 8, .head_dim = 128, .ff = 27648, .bos = 0, .eos = 2, .pad = 1},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {biased_attention,
            gated_mlp,
            {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
             {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .mlx = {.defaults = kMlxAttentionBias}});
  // OLMo's layer norms have no parameters (modeling_olmo.py, OlmoLayerNorm); the converter
  // permutes the q/k weights as llama's (olmo.py, OlmoModel.modify_tensors).
  add({.gguf_arch = "olmo",
       .model_type = "olmo",
       .class_name = "OlmoForCausalLM",
       .keys = kOlmoKeys,
       .defaults = {.ff = 11008, .eos = 50279, .pad = 1},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp}),
       .after = {{"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .mlx = {.absent = "mlx-lm 0.32.2's olmo.py builds the original OLMo code's model (it "
                         "imports ai2-olmo's hf_olmo), not OlmoForCausalLM"}});
}

}  // namespace ggufs::hf::table
