// The rows of the classes llama.cpp's conversion/starcoder.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

constexpr ConfigKey kStarcoder2Keys[] = {{"block_count", "num_hidden_layers"},
                                         {"context_length", "max_position_embeddings"},
                                         {"embedding_length", "hidden_size"},
                                         {"feed_forward_length", "intermediate_size"},
                                         {"attention.head_count", "num_attention_heads"},
                                         {"attention.head_count_kv", "num_key_value_heads"},
                                         {"attention.layer_norm_epsilon", "norm_epsilon", kNumber},
                                         {"rope.freq_base", "rope_theta", kNumber}};

// starcoder.py, StarCoderModel.set_gguf_parameters: n_positions, n_embd, n_layer, n_head and
// layer_norm_epsilon; head_count_kv 1 (multi-query attention, GPTBigCodeConfig's default
// multi_query=True: a multi-head checkpoint's c_attn is three times hidden wide, which the
// row's shape refuses, as llama.cpp's loader does); feed_forward_length 4·n_embd whatever n_inner
// says, kept under its own name as GPT-2's row keeps it (n_inner None is 4·n_embd, and a file
// whose MLP is wider than that has the shape the row refuses).
constexpr ConfigKey kStarcoderKeys[] = {
    {"block_count", "n_layer"},
    {"context_length", "n_positions"},
    {"embedding_length", "n_embd"},
    {"feed_forward_length", "feed_forward_length"},
    {"attention.head_count", "n_head"},
    {"attention.layer_norm_epsilon", "layer_norm_epsilon", kNumber}};
// mlx-lm's gpt_bigcode.py needs n_inner as an int (ModelArgs has no default).
constexpr std::pair<std::string_view, std::string_view> kMlxStarcoderRenamed[] = {
    {"n_inner", "feed_forward_length"}};

}  // namespace

void starcoder(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& biased_attention = b.biased_attention;
  const std::vector<WeightEntry>& biased_norms = b.biased_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_bias_head = b.norm_bias_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  add({.gguf_arch = "starcoder2",
       .model_type = "starcoder2",
       .class_name = "Starcoder2ForCausalLM",
       .keys = kStarcoder2Keys,
       .defaults = {.kv_heads = 2, .ff = 12288, .bos = 50256, .eos = 50256},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({biased_attention,
                     {{"attn_output.bias", "self_attn.o_proj.bias", Shape::kHidden},
                      {"ffn_up.weight", "mlp.c_fc.weight", Shape::kFfHidden},
                      {"ffn_up.bias", "mlp.c_fc.bias", Shape::kFf},
                      {"ffn_down.weight", "mlp.c_proj.weight", Shape::kHiddenFf},
                      {"ffn_down.bias", "mlp.c_proj.bias", Shape::kHidden}},
                     biased_norms}),
       .after = norm_bias_head});
  // GPTBigCode (modeling_gpt_bigcode.py): GPT-2's layout with nn.Linear weights (no transpose)
  // and one fused c_attn of the queries and the one key and value head; the converter renames
  // only (gguf-py's tensor_mapping.py, MODEL_ARCH.STARCODER).
  const Gpt2Layout gpt =
      gpt2_layout(Shape::kFusedQkv, Shape::kFusedQkvBias, Shape::kFfHidden, Shape::kHiddenFf);
  add({.gguf_arch = "starcoder",
       .model_type = "gpt_bigcode",
       .class_name = "GPTBigCodeForCausalLM",
       .keys = kStarcoderKeys,
       .defaults = {.kv_heads = 1, .positions = 1024, .bos = 50256, .eos = 50256},
       .layer_prefix = "transformer.h.{}.",
       .before = gpt.before,
       .layer = gpt.layer,
       .after = gpt.after,
       .mlx = {.renamed = kMlxStarcoderRenamed}});
}

}  // namespace ggufs::hf::table
