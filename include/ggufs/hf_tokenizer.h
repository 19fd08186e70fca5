// The tokenizer files of a GGUF's Hugging Face folder: tokenizer.json, tokenizer_config.json
// and special_tokens_map.json of the original tokenizer llama.cpp's converter read, so that
// AutoTokenizer.from_pretrained(<folder>) under transformers 4.57.6 and 5.24.0 encodes as that
// original does. Keyed on tokenizer.ggml.model and tokenizer.ggml.pre, as llama.cpp's own
// tokenizer is (src/llama-vocab.cpp), never on the architecture. Pure: renders from the parsed
// file only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ggufs/gguf.h"

namespace ggufs {

/// The rendered files of one model (JSON texts, indent 2, final newline).
struct HfTokenizer {
  /// tokenizer.json: the `tokenizers` serialization of the backend tokenizer (Tokenizer.to_str):
  /// model (BPE or WordPiece), added_tokens, normalizer, pre_tokenizer, post_processor, decoder.
  std::string tokenizer_json;
  /// tokenizer_config.json: tokenizer_class "PreTrainedTokenizerFast" (which both transformers
  /// lines build from tokenizer.json as written), the special token strings,
  /// added_tokens_decoder, clean_up_tokenization_spaces, chat_template when the GGUF has
  /// tokenizer.chat_template. model_max_length is left to its default.
  std::string tokenizer_config_json;
  /// special_tokens_map.json: the bos/eos/unk/sep/pad/cls/mask tokens that are set.
  std::string special_tokens_map_json;
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

/// Upper bound on tokenizer.ggml.precompiled_charsmap (bytes): SentencePiece's compiled
/// normalization rules; nmt_nfkc's are about 240 000 bytes.
inline constexpr std::size_t kMaxPrecompiledCharsmap = std::size_t{1} << 24;

/// Bounds on the merges the llama converter builds from tokenizer.ggml.scores when the file has
/// no tokenizer.ggml.merges (GGUFTokenizerSkeleton: every split of a token into two tokens):
/// at most this many per token, and at most this many bytes of merged tokens (the length of
/// each merge's token, summed) per byte of tokenizer.ggml.tokens as stored (8 + its length per
/// token). LLaMA's 32 000-token SentencePiece vocabulary gives 1.9 merges per token and 0.9 bytes
/// per byte; a vocabulary "a", "aa", … gives a number quadratic in its tokens.
inline constexpr std::uint64_t kMaxBuiltMergesPerToken = 16;
inline constexpr std::uint64_t kMaxBuiltMergeBytesPerVocabByte = 16;

/// Renders the three tokenizer files of `file`, whatever its architecture and with or without
/// tensors. tokenizer.ggml.model picks the model, as llama.cpp's llama_vocab::impl::load does:
/// - "llama" (SPM) → SentencePiece BPE as transformers' LlamaConverter writes it (Prepend("▁")
///   per tokenizer.ggml.add_space_prefix, Replace(" ", "▁"), byte_fallback, merges built from the
///   scores when there are none);
/// - "gemma4" (BPE of pre-tokenizer type GEMMA4) → Gemma 4's BPE: Replace(" ", "▁"), no
///   pre-tokenizer, byte_fallback, the file's merges; bos always added (as llama.cpp does);
/// - "gpt2" (BPE) → byte-level BPE whose pre-tokenizer (Split regexes, Digits, ByteLevel),
///   ignore_merges, normalizer and clean_up_tokenization_spaces are the row of tokenizer.ggml.pre
///   in a table of llama.cpp's pre-tokenizer types (an unknown or absent name, or "default",
///   gets GPT-2's regex);
/// - "bert" (WPM) → WordPiece as the original BERT tokenizer: the vocabulary with the
///   converter's phantom-space form undone ("▁x" → "x", "x" → "##x", CONTROL and "[...]" tokens
///   as stored), "##" prefix, max_input_chars_per_word 100; BertNormalizer (clean_text,
///   handle_chinese_chars, lowercase = tokenizer.ggml.normalizer.lowercase else true,
///   strip_accents = tokenizer.ggml.normalizer.strip_accents else lowercase);
///   BertPreTokenizer; TemplateProcessing "[CLS] $A [SEP]" ([CLS] = bos_token_id, else
///   cls_token_id, else 101; [SEP] = seperator_token_id, else 102; [UNK] else 100; [PAD] else
///   0; [MASK] = mask_token_id, else 103); WordPiece decoder;
/// - "t5" (UGM) → Unigram as transformers' SpmConverter writes T5's: each token with its score,
///   unk = unknown_token_id (else 2); normalizer Precompiled (tokenizer.ggml.
///   precompiled_charsmap, base64), Strip(right), Replace(Regex(" {2,}"), "▁"); Metaspace
///   pre-tokenizer and decoder, prepend_scheme "always" per tokenizer.ggml.add_space_prefix
///   (else "never"); "$A </s>" (add_eos_token, else true, as llama.cpp's default for UGM).
/// Added tokens: token_type 3 (special) and 4 (not special), then the special tokens of the
/// tokenizer.ggml.*_token_id keys. For the BPE models bos/eos are added by a TemplateProcessing
/// post-processor per tokenizer.ggml.add_bos_token / add_eos_token (else llama.cpp's defaults:
/// bos for "llama" and the Llama 3 pre-tokenizer). tokenizer_config.json names
/// PreTrainedTokenizerFast, and "unk_token": null where there is no unknown token.
///
/// No tokenizer (with the reason) when: tokenizer.ggml.model is missing, not a string, or
/// another model (rwkv, plamo2, ...); tokenizer.ggml.tokens is missing, not an array of
/// strings, of fewer than 2 elements, larger than kMaxHfTokenizerVocab, or repeats a token (for
/// "bert": also once the phantom-space form is undone); tokenizer.ggml.scores or token_type is
/// not an array of numbers (integers) of the tokens' length, or a score is not finite; merges
/// are not an array of strings each "LEFT RIGHT" (one space) with LEFT, RIGHT and LEFT+RIGHT
/// tokens; "llama" has neither merges nor scores, or merges built from scores would pass
/// kMaxBuiltMergesPerToken or kMaxBuiltMergeBytesPerVocabByte; "gpt2" or "gemma4" has no
/// merges; "bert" has no [CLS], [SEP] or [UNK] token; "t5" has no scores or unknown token, or
/// its precompiled_charsmap is not an array of (u)int8 of at most kMaxPrecompiledCharsmap; a
/// bos/eos/unk/pad/cls/sep/mask id is not an integer scalar below the token count; a
/// bos/eos/[CLS]/[SEP] token to add cannot stand in a TemplateProcessing template;
/// tokenizer.ggml.pre, add_space_prefix, add_bos_token, add_eos_token, normalizer.lowercase,
/// normalizer.strip_accents or chat_template has the wrong type. Never throws for any metadata.
HfTokenizerResult render_hf_tokenizer(const GgufFile& file);

}  // namespace ggufs
