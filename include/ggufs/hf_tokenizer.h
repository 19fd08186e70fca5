// The tokenizer files of a GGUF model's Hugging Face folder: tokenizer.json,
// tokenizer_config.json and special_tokens_map.json, as transformers 4.57.6's own GGUF import
// builds the tokenizer (AutoTokenizer.from_pretrained(<dir>, gguf_file=<file>):
// tokenization_utils_fast.py, PreTrainedTokenizerFast.__init__; integrations/ggml.py,
// GGUF_TOKENIZER_MAPPING, GGUFTokenizerSkeleton, GGUF_TO_FAST_CONVERTERS and the GGUF*Converter
// classes) and then writes it (tokenization_utils_base.py, save_pretrained), so that
// AutoTokenizer.from_pretrained(<folder holding our files and config.json>) tokenizes as the
// import does. Pure: renders from the parsed model only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ggufs/gguf.h"

namespace ggufs {

/// The rendered files of one model (JSON texts, indent 2, final newline).
struct HfTokenizer {
  /// tokenizer.json: the `tokenizers` serialization of the backend tokenizer (Tokenizer.to_str):
  /// model (BPE), added_tokens, normalizer, pre_tokenizer, post_processor, decoder.
  std::string tokenizer_json;
  /// tokenizer_config.json: the fast tokenizer's init kwargs as save_pretrained writes them
  /// (special token strings, the *_token_id keys the GGUF has, added_tokens_decoder,
  /// tokenizer_class, chat_template when the GGUF has tokenizer.chat_template). model_max_length
  /// is left out: its saved value (int(1e30)) does not fit a JSON integer of nlohmann-json, and
  /// from_pretrained gives the same default without it.
  std::string tokenizer_config_json;
  /// special_tokens_map.json: the bos/eos/unk/pad tokens that are set.
  std::string special_tokens_map_json;
  /// The class from_pretrained builds: "LlamaTokenizerFast", "GPT2TokenizerFast",
  /// "Qwen2TokenizerFast".
  std::string tokenizer_class;
};

/// The tokenizer, or why there is none.
struct HfTokenizerResult {
  std::optional<HfTokenizer> tokenizer;
  /// One line naming the key at fault when `tokenizer` is empty; empty otherwise.
  std::string reason;
};

/// Upper bound on tokenizer.ggml.tokens (elements) and on tokenizer.ggml.merges: larger is
/// refused as hostile (the largest real vocabularies have about 260 000 tokens).
inline constexpr std::size_t kMaxHfTokenizerVocab = std::size_t{1} << 21;

/// Bounds on the merges the llama converter builds from tokenizer.ggml.scores when the file has
/// no tokenizer.ggml.merges (GGUFTokenizerSkeleton: every split of a token into two tokens):
/// at most this many per token, and at most this many bytes of merged tokens (the length of
/// each merge's token, summed) per byte of tokenizer.ggml.tokens as stored (8 + its length per
/// token). LLaMA's 32 000-token SentencePiece vocabulary gives 1.9 merges per token and 0.9 bytes
/// per byte; a vocabulary "a", "aa", … gives a number quadratic in its tokens.
inline constexpr std::uint64_t kMaxBuiltMergesPerToken = 16;
inline constexpr std::uint64_t kMaxBuiltMergeBytesPerVocabByte = 16;

/// Renders the three tokenizer files of `file`. The converter is chosen, as transformers
/// chooses it, by the config's model_type (render_hf_config): llama → GGUFLlamaConverter
/// (SentencePiece BPE with byte fallback for tokenizer.ggml.model "llama", or absent; the
/// "llama-3" byte-level variant for any other model, e.g. "gpt2"); gpt2 and starcoder2 →
/// GGUFGPTConverter; qwen2, qwen2_moe, qwen3, qwen3_moe → GGUFQwen2Converter; phi3 →
/// GGUFPhi3Converter; gemma2, gemma3_text → GGUFGemmaConverter (Unigram); stablelm →
/// GGUFGPTConverter with GPTNeoXTokenizerFast.
///
/// No tokenizer (with the reason) when: there is no config (render_hf_config's reason); the
/// model_type has no GGUF converter in transformers (mistral); tokenizer.ggml.tokens is missing,
/// not an array of strings, of fewer than 2 elements (transformers unwraps a one-element array into
/// its string), larger than kMaxHfTokenizerVocab, or repeats a token; tokenizer.ggml.scores or
/// token_type is not an array of numbers (integers) of the tokens' length, or a score is not
/// finite; merges are not an array of strings each "LEFT RIGHT" (one space) with LEFT, RIGHT and
/// LEFT+RIGHT tokens (the `tokenizers` BPE builder refuses others); the llama converter has neither
/// merges nor scores, or merges built from scores would pass kMaxBuiltMergesPerToken or
/// kMaxBuiltMergeBytesPerVocabByte; a bos/eos/unk/pad id
/// is not an integer scalar below the token count; the llama converter has an eos id without a bos
/// id (transformers' import indexes tokens[None]) or no eos id (its bos token is then None, which
/// LlamaTokenizerFast refuses); tokenizer.ggml.model, add_space_prefix or chat_template has the
/// wrong type. Never throws for any metadata.
HfTokenizerResult render_hf_tokenizer(const GgufFile& file);

}  // namespace ggufs
