// The rows of the classes llama.cpp's conversion/llama.py, mistral3.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

constexpr auto kLlamaKeys = base_and({{"rope.dimension_count", "head_dim"}});

// llama.py, LlamaModel.set_gguf_parameters, as llama; base.py adds the expert counts.
constexpr auto kMixtralKeys = base_and({{"rope.dimension_count", "head_dim"},
                                        {"expert_count", "num_local_experts"},
                                        {"expert_used_count", "num_experts_per_tok"}});

// mistral3.py, Ministral3Model.set_gguf_parameters: llama's keys (llama.py) and two of YaRN's
// rope_parameters fields base.py does not write, as fields of rope_scaling (hf_config.cpp,
// add_rope_scaling). Not written: mscale (1.0 in Ministral 3's config.json and the class's) and
// the legacy "type" beside rope_type (the class's default has it; the converter asserts yarn).
constexpr auto kMinistral3Keys =
    base_and({{"rope.dimension_count", "head_dim"},
              {"rope.scaling.yarn_log_multiplier", "rope_scaling.mscale_all_dim", kNumber},
              {"attention.temperature_scale", "rope_scaling.llama_4_scaling_beta", kNumber}});

constexpr ConfigConstant kMinistral3Constants[] = {
    {"rope_scaling", R"({"mscale": 1.0, "type": "yarn"})"}};

// Mistral Small 3.x's text model (Mistral3ForConditionalGeneration's text_config, model_type
// mistral): no sliding window (every Mistral 3 checkpoint's null; MistralConfig's default is
// 4096), which the converter does not write.
constexpr ConfigConstant kMistral3TextConstants[] = {{"sliding_window", "null"}};

}  // namespace

void llama(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& ungated_mlp = b.ungated_mlp;
  const std::vector<WeightEntry>& block_sparse_moe = b.block_sparse_moe;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  const Architecture llama{.gguf_arch = "llama",
                           .model_type = "llama",
                           .class_name = "LlamaForCausalLM",
                           .keys = kLlamaKeys,
                           .defaults = {.ff = 11008, .bos = 1, .eos = 2},
                           .transforms = Transforms::kLlama,
                           .layer_prefix = kModelLayer,
                           .before = embed,
                           .layer = cat({llama_attention, gated_mlp, two_norms}),
                           .after = norm_head};
  add(llama);
  // transformers' own import takes a llama whose general.name is "mistral" for a mistral
  // (load_gguf_checkpoint); gguf-py has no mistral tensor map, so that import loads no weights.
  add({.gguf_arch = "mistral",
       .model_type = "mistral",
       .class_name = "MistralForCausalLM",
       .keys = kLlamaKeys,
       .defaults = {.bos = 1, .eos = 2},
       .no_weights = "model_type 'mistral': gguf-py has no mistral tensor map, transformers' "
                     "import loads no tensors for it"});
  // Mixtral is written as a llama with experts (llama.py, LlamaModel.modify_tensors stacks
  // block_sparse_moe.experts.X.w1/w2/w3); each expert is intermediate_size wide.
  add({.gguf_arch = "llama",
       .required_key = "expert_count",
       .model_type = "mixtral",
       .class_name = "MixtralForCausalLM",
       .keys = kMixtralKeys,
       .defaults = {.kv_heads = 8, .ff = 14336, .experts = 8, .bos = 1, .eos = 2},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, block_sparse_moe, two_norms}),
       .after = norm_head,
       .required_tensor = "ffn_gate_exps.weight",
       .mlx = {.experts = kMlxBlockSparseSwitch}});
  // SmolLM3 is a llama to the converter (llama.py, SmolLM3Model: LlamaModel's keys and q/k
  // permutation); its rope.dimension_count is hidden / heads, which SmolLM3Config has no field
  // for.
  add({.gguf_arch = "smollm3",
       .model_type = "smollm3",
       .class_name = "SmolLM3ForCausalLM",
       .keys = kBaseKeys,
       .defaults = {.kv_heads = 4, .ff = 11008, .bos = 128000, .eos = 128001, .pad = 128004},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp, two_norms}),
       .after = norm_head});
  // Arcee is a llama to the converter (llama.py, ArceeModel: LlamaModel's keys and q/k
  // permutation); its MLP has no gate (modeling_arcee.py, ArceeMLP).
  add({.gguf_arch = "arcee",
       .model_type = "arcee",
       .class_name = "ArceeForCausalLM",
       .keys = kLlamaKeys,
       .defaults = {.ff = 18432, .bos = 128000, .eos = 128001},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, ungated_mlp, two_norms}),
       .after = norm_head,
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type arcee (mlx_lm/models/)"}});
  // Ministral 3's text model: a llama (mistral3.py, Ministral3Model is a LlamaModel) under its
  // own general.architecture, with YaRN (configuration_ministral3.py; transformers 5 only),
  // told from Mistral Small 3.x's by the YaRN key the converter writes only for ministral3
  // (Ministral3Model.set_gguf_parameters).
  add({.gguf_arch = "mistral3",
       .required_key = "rope.scaling.yarn_log_multiplier",
       .model_type = "ministral3",
       .class_name = "Ministral3ForCausalLM",
       .keys = kMinistral3Keys,
       .constants = kMinistral3Constants,
       .defaults = {.kv_heads = 8, .head_dim = 128, .ff = 14336, .bos = 1, .eos = 2, .pad = 11},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp, two_norms}),
       .after = norm_head});
  // Mistral Small 3.x's text model (Mistral3ForConditionalGeneration with a mistral text_config:
  // the same Ministral3Model, llama's keys alone): a llama under mistral3, MistralForCausalLM
  // without a sliding window. hf/ of it with its Pixtral projector is the
  // Mistral3ForConditionalGeneration (hf_vision.cpp).
  Architecture mistral3 = llama;
  mistral3.gguf_arch = "mistral3";
  mistral3.model_type = "mistral";
  mistral3.class_name = "MistralForCausalLM";
  mistral3.constants = kMistral3TextConstants;
  mistral3.defaults = {.kv_heads = 8, .ff = 14336, .bos = 1, .eos = 2};
  add(std::move(mistral3));
}

}  // namespace ggufs::hf::table
