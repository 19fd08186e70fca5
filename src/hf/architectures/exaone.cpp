// The rows of the classes llama.cpp's conversion/exaone.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

constexpr ConfigConstant kMlxExaone4[] = {{"rope_scaling", "null"}};

// exaone.py, Exaone4Model.set_gguf_parameters: the window, and its layer pattern as one flag a
// layer (Architecture::layer_types); head_dim as key_length (base.py). A model without a window
// gets neither key: sliding_window null (the class default 4096 with every layer global would
// be another model; Exaone4Config divides by the pattern 0 without layer_types).
constexpr auto kExaone4Keys = base_and(
    {{"attention.key_length", "head_dim"}, {"attention.sliding_window", "sliding_window"}});

constexpr ConfigConstant kExaone4Constants[] = {{"sliding_window", "null"}};

}  // namespace

void exaone(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& qk_norms = b.qk_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // EXAONE 4: q/k norms, and norms after attention and the MLP only (modeling_exaone4.py,
  // Exaone4DecoderLayer); the converter renames only (exaone.py, Exaone4Model; rope_freqs, made
  // from a llama3 rope_scaling, has no parameter).
  add({.gguf_arch = "exaone4",
       .model_type = "exaone4",
       .class_name = "Exaone4ForCausalLM",
       .keys = kExaone4Keys,
       .constants = kExaone4Constants,
       .defaults = {.kv_heads = 32, .ff = 16384, .bos = 0, .eos = 2},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({llama_attention,
                qk_norms,
                gated_mlp,
                {{"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"post_ffw_norm.weight", "post_feedforward_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .layer_types = {"attention.sliding_window_pattern", "sliding_attention", "full_attention"},
       .mlx = {.defaults = kMlxExaone4, .window_pattern = true}});
}

}  // namespace ggufs::hf::table
