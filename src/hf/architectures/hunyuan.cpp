// The rows of the classes llama.cpp's conversion/hunyuan.py converts (table.h).
#include <string>

#include "../config_fields.h"
#include "table.h"

namespace ggufs::hf::table {
namespace {

// The converter writes eod_token_id as the eos id (hunyuan.py, HunYuanModel.set_vocab); the
// config's eod_token_id (HunYuanDenseV1Config's default 3) is the file's eos id, null without one.
std::string eod_is_eos(ConfigFields& f) {
  if (f.config.contains("eos_token_id")) f.config["eod_token_id"] = f.config["eos_token_id"];
  return "";
}
constexpr ConfigQuirk kHunyuanQuirks[] = {{QuirkStage::kTokenIds, eod_is_eos}};

}  // namespace

void hunyuan(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // Hunyuan dense: per-head q/k norms named query_layernorm and key_layernorm
  // (modeling_hunyuan_v1_dense.py); the converter renames only, writes eod_token_id as the eos
  // id (hunyuan.py, HunYuanModel.set_vocab) and head_dim as key_length (base.py).
  add({.gguf_arch = "hunyuan-dense",
       .model_type = "hunyuan_v1_dense",
       .class_name = "HunYuanDenseV1ForCausalLM",
       .keys = kQwen3Keys,
       .defaults = {.ff = 11008, .bos = 1, .eos = 2, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention,
                     {{"attn_q_norm.weight", "self_attn.query_layernorm.weight", Shape::kHeadDim},
                      {"attn_k_norm.weight", "self_attn.key_layernorm.weight", Shape::kHeadDim}},
                     gated_mlp,
                     two_norms}),
       .after = norm_head,
       .quirks = kHunyuanQuirks});
}

}  // namespace ggufs::hf::table
