// The Hugging Face config files of a GGUF model: config.json and generation_config.json of the
// model llama.cpp's converter (convert_hf_to_gguf.py) converted, read back from the keys it wrote,
// one row per architecture (src/hf/hf_architectures.cpp). Where transformers' own GGUF import
// (transformers/modeling_gguf_pytorch_utils.py, load_gguf_checkpoint) reads the same file the
// same way, AutoConfig.from_pretrained(<folder holding our config.json>) equals
// AutoConfig.from_pretrained(<dir>, gguf_file=<file>). Pure: renders from the parsed model only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ggufs/gguf.h"

namespace ggufs {

/// The rendered files of one model.
struct HfConfig {
  /// config.json: model_type and architectures of the row, each config field the row maps from
  /// a `<general.architecture>.*` key, general.name as _model_name_or_path, the tokenizer's
  /// special token ids, tie_word_embeddings (no output.weight), vocab_size (else the token
  /// count), the row's constants and derived fields (stablelm's flags from tensor names,
  /// gemma's query_pre_attn_scalar), rope_scaling of a linear or YaRN rope.scaling.type,
  /// "transformers_version": "4.57.6"; JSON with sorted keys,
  /// indent 2, final newline (as PretrainedConfig.to_json_string writes). Integers as integers,
  /// float32 as the shortest decimal that reads back as it, float64 as it is.
  std::string config_json;
  /// generation_config.json: what GenerationConfig.from_model_config(config).save_pretrained()
  /// writes (transformers/generation/configuration_utils.py). from_pretrained(dir, gguf_file=...)
  /// finds no generation_config.json for a GGUF and keeps that one (modeling_utils.py,
  /// PreTrainedModel.__init__ and from_pretrained): "_from_model_config": true, the bos, eos, pad
  /// and decoder_start token ids that are not None (the GGUF's, else the config class's
  /// defaults), "transformers_version".
  std::string generation_config_json;
  /// The dtype of the model transformers loads from the GGUF, as torch names it: always
  /// "float32" (gguf-py's dequantize gives float32 for every type, and from_pretrained without
  /// dtype takes torch's default float32: modeling_utils.py, _get_dtype).
  std::string torch_dtype;
  /// transformers' model_type of the config ("llama", "qwen2_moe", "gemma3_text", …).
  std::string model_type;
  /// mlx/'s config.json (before its "quantization"): config_json with the fields mlx-lm 0.32.2's
  /// ModelArgs requires that transformers' class defaults (the row's mlx column: its defaults,
  /// renamed fields) and head_dim as hidden_size / num_attention_heads where the plan leaves it
  /// out (every class's default: getattr(config, "head_dim", hidden_size // num_heads)). Empty
  /// with `mlx_absent` set.
  std::string mlx_config_json;
  /// Why mlx-lm cannot load the model (mlx/ is then not offered); empty where it can.
  std::string mlx_absent;
};

/// The config, or why there is none.
struct HfConfigResult {
  std::optional<HfConfig> config;
  /// One line naming the key (or tensor) at fault when `config` is empty; empty otherwise.
  std::string reason;
};

/// Renders config.json and generation_config.json of `file` for the architectures of the table:
/// llama (mistral when general.name is "mistral", as transformers' import takes it), mistral,
/// qwen2, qwen2moe, qwen3, qwen3moe, gemma2, gemma3, phi3, gpt2, starcoder2 and stablelm.
///
/// No config (with the reason) when: general.architecture is missing, not a string, or has no
/// row; a key, string value or tensor name is not valid UTF-8, an array is nested, a tensor type
/// is unknown to gguf-py, or the file is GGUF version 1 (transformers' reader, gguf-py's
/// GGUFReader, fails on each); a structural value the config needs is missing or not a positive
/// integer (block count, embedding length, head count, context length, vocab size from
/// <arch>.vocab_size or the length of tokenizer.ggml.tokens); another count is not a
/// non-negative integer; an epsilon or rope base is not a finite number; a token id is not an
/// integer; a list value has more than 65536 elements; rope.scaling.type is not a string, or a
/// linear/YaRN one has a factor or YaRN parameter that is not a finite number, or a YaRN one no
/// original_context_length. Never throws for any metadata.
///
/// `dtype` (a torch dtype name, "bfloat16"), when not empty, is written as config.json's "dtype",
/// as save_pretrained writes it for a model of that dtype (from_pretrained(..., dtype="auto")
/// takes it).
HfConfigResult render_hf_config(const GgufFile& file, std::string_view dtype = {});

}  // namespace ggufs
