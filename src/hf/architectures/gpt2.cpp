// The rows of the classes llama.cpp's conversion/gpt2.py converts (table.h).
#include <fmt/format.h>

#include <string>

#include "../config_fields.h"
#include "ggufs/names.h"
#include "table.h"

namespace ggufs::hf::table {
namespace {

// The class refuses a hidden size its heads do not divide (modeling_gpt2.py,
// GPT2Attention.__init__), though every weight shape would fit.
std::string heads_divide_hidden(ConfigFields& f) {
  const std::string hidden = field_for(f.row, "embedding_length"),
                    heads = field_for(f.row, "attention.head_count");
  const std::uint64_t n = count_field(f.config, heads);
  if (n == 0 || count_field(f.config, hidden) % n == 0) return "";
  return fmt::format("{} does not divide {}: transformers' {} refuses it",
                     printable(f.source[heads]), printable(f.source[hidden]), f.row.class_name);
}
constexpr ConfigQuirk kGpt2Quirks[] = {{QuirkStage::kChecks, heads_divide_hidden}};

// gpt2.py writes context_length from n_ctx, which every GPT-2 checkpoint has equal to
// n_positions (the size of wpe); feed_forward_length (4·n_embd) has no GPT2Config field and is
// kept under its own name, as transformers' own import keeps it.
constexpr ConfigKey kGpt2Keys[] = {{"block_count", "n_layer"},
                                   {"context_length", "n_ctx"},
                                   {"context_length", "n_positions"},
                                   {"embedding_length", "n_embd"},
                                   {"feed_forward_length", "feed_forward_length"},
                                   {"attention.head_count", "n_head"},
                                   {"attention.layer_norm_epsilon", "layer_norm_epsilon", kNumber}};

}  // namespace

Gpt2Layout gpt2_layout(Shape qkv, Shape qkv_bias, Shape fc, Shape proj) {
  return {.before = {{"token_embd.weight", "transformer.wte.weight", Shape::kVocabHidden},
                     {"position_embd.weight", "transformer.wpe.weight", Shape::kPositionsHidden}},
          .layer = {{"attn_norm.weight", "ln_1.weight", Shape::kHidden},
                    {"attn_norm.bias", "ln_1.bias", Shape::kHidden},
                    {"attn_qkv.weight", "attn.c_attn.weight", qkv},
                    {"attn_qkv.bias", "attn.c_attn.bias", qkv_bias},
                    {"attn_output.weight", "attn.c_proj.weight", Shape::kHiddenHidden},
                    {"attn_output.bias", "attn.c_proj.bias", Shape::kHidden},
                    {"ffn_norm.weight", "ln_2.weight", Shape::kHidden},
                    {"ffn_norm.bias", "ln_2.bias", Shape::kHidden},
                    {"ffn_up.weight", "mlp.c_fc.weight", fc},
                    {"ffn_up.bias", "mlp.c_fc.bias", Shape::kFf},
                    {"ffn_down.weight", "mlp.c_proj.weight", proj},
                    {"ffn_down.bias", "mlp.c_proj.bias", Shape::kHidden}},
          .after = {{"output_norm.weight", "transformer.ln_f.weight", Shape::kHidden},
                    {"output_norm.bias", "transformer.ln_f.bias", Shape::kHidden},
                    {"output.weight", "lm_head.weight", Shape::kVocabHidden}}};
}

void gpt2(Rows& rows) {
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // Conv1D holds c_attn, c_fc and mlp.c_proj as (in, out).
  const Gpt2Layout layout =
      gpt2_layout(Shape::kConvQkv, Shape::kThreeHidden, Shape::kHiddenFf, Shape::kFfHidden);
  add({.gguf_arch = "gpt2",
       .model_type = "gpt2",
       .class_name = "GPT2LMHeadModel",
       .keys = kGpt2Keys,
       .defaults = {.positions = 1024, .bos = 50256, .eos = 50256},
       .transforms = Transforms::kGpt2,
       .layer_prefix = "transformer.h.{}.",
       .before = layout.before,
       .layer = layout.layer,
       .after = layout.after,
       .quirks = kGpt2Quirks,
       .mlx = {.absent = "mlx-lm 0.32.2's gpt2.py takes the first GPT-2 checkpoint's names "
                         "(h.N.*), not save_pretrained's (transformer.h.N.*)"}});
}

}  // namespace ggufs::hf::table
