// The Hugging Face weights of a GGUF model: the state_dict of the model llama.cpp's converter
// converted, from the architecture's row (src/hf/hf_architectures.cpp), each tensor named as
// transformers names it, with its torch shape and how its values come from one GGUF tensor (the
// inverse of the converter's transform). Where transformers' own GGUF import
// (transformers/modeling_gguf_pytorch_utils.py: load_gguf_checkpoint, TENSOR_PROCESSORS) loads
// the file, it loads the same tensors. Pure: a map only, no tensor data is read.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ggufs/gguf.h"
#include "ggufs/hf_config.h"

namespace ggufs {

/// How a Hugging Face tensor's values come from its GGUF tensor `w`, the GGUF tensor seen as
/// gguf-py reads it: a float32 array of numpy shape ne reversed (ne[n_dims-1], …, ne[0]),
/// dequantized (gguf-py's dequantize, which transformers calls for every type).
enum class HfTransform {
  /// The values as they are.
  kNone,
  /// LlamaTensorProcessor._reverse_permute_weights: undoes the q/k row permutation of llama.cpp's
  /// converter (convert_hf_to_gguf.py, LlamaModel.permute). With n = `n_head` and
  /// d = rows / n / 2, HF row h·2d + j·d + i is GGUF row h·2d + 2i + j (h < n, j < 2, i < d);
  /// see hf_permuted_row.
  kReversePermute,
  /// Qwen2MoeTensorProcessor._split_moe_expert_tensor: one expert of a stacked expert tensor,
  /// w[`index`] (the outermost numpy axis, GGUF ne[2]).
  kSelect,
  /// Gemma2TensorProcessor: w + `constant` in float32 (constant -1: gemma's norms are stored by
  /// the converter as 1 + weight).
  kAddConstant,
  /// GPT2TensorProcessor: w.T (a 2-D tensor: GPT-2's Conv1D keeps weights as [in, out]).
  kTranspose,
  /// The inverse of the converter's fused split (granite.py, GraniteMoeModel.modify_tensors:
  /// `gate, up = w.split(F, dim=-2)`): torch.cat([w, p₁, …], dim=-2) of `source` and the
  /// tensors of `parts`, each matrix's rows (ne[1]) of every part in turn, matrix by matrix
  /// (the outer axes: ne[2], ne[3]). The parts share ne[0] and the outer axes.
  kConcatRows,
  /// The inverse of the converter's fused-QKV regroup (gptneox.py, GPTNeoXModel.modify_tensors;
  /// bloom.py, BloomModel.modify_tensors; falcon.py, FalconModel.modify_tensors), which writes
  /// transformers' query_key_value rows, per KV group [q of n_head / groups heads, k, v], as
  /// [all q; all k; all v]. With n = `n_head`, g = `groups`, r = n / g and d = rows / (n + 2g)
  /// (the head size): HF group j < g holds GGUF rows [j·r·d, (j+1)·r·d) (its queries), then
  /// [(n+j)·d, (n+j+1)·d) (its key), then [(n+g+j)·d, (n+g+j+1)·d) (its value). A row is ne[0]
  /// elements of a matrix, one element of a bias.
  kRegroupQkv,
  /// The inverse of the converter's A = -exp(A_log) (mamba.py, MambaModel and
  /// Mamba2Model.modify_tensors: torch.exp on float32): log(-w) in float32 (std::log). Not
  /// always bit-exact: near A_log = 0, exp maps many float32 inputs to one output, and
  /// only one of them comes back.
  kLogOfNegated,
  /// The inverse of gpt-oss's expert split (gpt_oss.py, GptOssModel.modify_tensors: w of
  /// (E, H, 2F) transposed to (E, 2F, H), rows [::2] the gate, [1::2] the up): each matrix of
  /// `source` (and of `parts`, at most one) transposed, the columns of the two interleaved:
  /// HF[m][c][2r + j] = (j ? part : source)[m][r][c]; without a part HF[m][c][r] = source[m][r][c]
  /// (down_proj). A stack of vectors (E, F) (the biases) is a stack of one-column matrices:
  /// HF[m][2r + j].
  kInterleaveTransposed,
  /// The inverse of MLA's kv_b split (deepseek.py, DeepseekV2Model.modify_tensors: kv_b_proj
  /// viewed as (heads, dn + dv, r), k_b = [:, :dn] transposed to (heads, r, dn), v_b = [:, dn:]):
  /// head by head (the outermost axis), `source`'s matrix (r, dn) transposed, then the rows of
  /// `parts[0]`'s (dv, r); a 2-D (heads·(dn + dv), r).
  kConcatTransposedRows,
  /// The inverse of qwen3next's in_proj_qkvz split (qwen.py, Qwen3NextModel.modify_tensors:
  /// transformers' rows, per key head [q (N rows), k (N), v (V), z (V)], written as `source`
  /// [all q; all k; all v] and the part, attn_gate, [all z]). With g = `groups` (the key heads),
  /// V = the part's rows / g and N = (source's rows - g·V) / 2g: HF group j < g holds source rows
  /// [j·N, (j+1)·N), [(g+j)·N, (g+j+1)·N), [2g·N + j·V, 2g·N + (j+1)·V), then part rows
  /// [j·V, (j+1)·V).
  kRegroupQkvz,
  /// The inverse of Gemma 3n's zero padding (gemma.py, Gemma3NModel.modify_tensors pads
  /// embed_tokens_per_layer with zero rows up to vocab_size): `source`'s first rows, as many as
  /// `shape` holds (elements from 0, as stored); the rows after them are the padding.
  kFirstRows,
};

/// One tensor of the state_dict.
struct HfWeight {
  std::string hf_name;  ///< e.g. "model.layers.0.self_attn.q_proj.weight"
  /// Torch shape (elements, outermost first), after the transform; equal to the shape the
  /// model's config gives the parameter (checked).
  std::vector<std::uint64_t> shape;
  std::size_t source = 0;  ///< index of the GGUF tensor in GgufFile::tensors
  HfTransform transform = HfTransform::kNone;
  std::uint64_t n_head = 0;        ///< kReversePermute, kRegroupQkv: the head count n
  std::uint64_t index = 0;         ///< kSelect: the expert
  float constant = 0;              ///< kAddConstant: the addend
  std::vector<std::size_t> parts;  ///< kConcatRows, kInterleaveTransposed,
                                   ///< kConcatTransposedRows, kRegroupQkvz: the GGUF tensors
                                   ///< after `source`, in order
  std::uint64_t groups = 0;        ///< kRegroupQkv: the KV groups g; kRegroupQkvz: key heads
  /// On top of the transform, the inverse of qwen35's value-head reorder when its linear
  /// attention has fewer key heads nk than value heads nv (qwen.py,
  /// _LinearAttentionVReorderBase._reorder_v_heads: an axis of nv heads of d, viewed as
  /// (nk, nv / nk, d), its first two axes swapped, "grouped" to "tiled"). In GGUF order (ne[0]
  /// fastest), the elements after the first `untile_skip` are runs of `untile_run` elements
  /// (a head: d rows, or d elements of a row for out_proj's columns) in groups of nv runs; HF
  /// run o of a group is the group's GGUF run hf_untiled_head(o, nk, nv). 0: none.
  std::uint64_t untile_run = 0;
  std::uint64_t untile_skip = 0;  ///< elements before the first group (qkv's and conv's q and k)
  std::uint64_t untile_k_heads = 0, untile_v_heads = 0;  ///< nk, nv (nv a multiple of nk)
};

/// The weight map, or why there is none.
struct HfWeightsResult {
  std::optional<std::vector<HfWeight>> weights;
  /// One line naming the key or tensor at fault when `weights` is empty; empty otherwise.
  std::string reason;
  /// With `weights`: the indices (into GgufFile::tensors, ascending) of the tensors no entry of
  /// the row maps (llama3's rope_freqs.weight, the converter's appended MTP layers), which hf/
  /// names rather than drops unseen.
  std::vector<std::size_t> omitted;
};

/// The state_dict of the model the converter converted, in the order its state_dict() lists
/// it: each entry of the architecture's row (src/hf/hf_architectures.cpp; the README's table
/// lists the rows), named as transformers names it, from the GGUF tensor gguf-py's tensor map
/// (gguf/tensor_mapping.py) gives it, with the inverse of the converter's transform: per expert
/// of a stacked *_exps tensor (kSelect), q/k rows un-permuted, gemma's norms minus 1, GPT-2's
/// Conv1D transposed, granitemoe's input_linear fused again (kConcatRows), the fused
/// query_key_value of gptneox, bloom and falcon regrouped per KV group (kRegroupQkv), mamba's
/// A_log from A (kLogOfNegated), MLA's kv_b_proj from attn_k_b and attn_v_b
/// (kConcatTransposedRows), qwen35's value heads grouped by key head again (untile_run); lfm2's and
/// mamba's squeezed or reshaped tensors in the class's shape (the values as they are); phi3's and
/// glm4's fused projections stay fused, as the converter keeps them. GGUF tensors no entry names
/// are left out, and tied or absent weights are not listed (the model keeps its own). Where
/// transformers' own GGUF import (load_gguf_checkpoint) loads the file, it loads these tensors.
///
/// No map (with the reason) when: render_hf_config gives no config (its reason); the architecture
/// has no row, or its row no state_dict: mistral (also llama named "mistral": gguf-py 0.19.0 has
/// no mistral tensor map, transformers' get_gguf_hf_weights_map raises); a mapped
/// tensor's shape is not the one the config gives its parameter (from_pretrained refuses a
/// mismatch), including q/k rows not a multiple of 2 × heads (the reverse permutation's reshape
/// fails) and a fused query_key_value whose rows are not n + 2g heads of KV groups dividing n; a
/// qwen2moe/qwen3moe tensor named *_exp* that maps to no layer, or whose stack holds fewer experts
/// than num_experts (transformers raises); the map would pass 10 000 000 tensors. qwen3moe without
/// expert_count: transformers splits 60 experts (its default in Qwen2MoeTensorProcessor) of a model
/// built with Qwen3MoeConfig's 128; the map lists the 60. Never throws.
HfWeightsResult hf_weight_map(const GgufFile& file);

/// One hf/ weight of one or two GGUF tensors (HfWeight::source, then parts[0]) that mlx/ serves
/// as those tensors as stored, under mlx-lm's names `mlx` (after the layer prefix): where mlx-lm
/// takes the checkpoint's own fused layout undone (mlx_lm/models/gpt_oss.py's sanitized
/// experts.gate_proj, up_proj, down_proj), which GGUF's stacks already are.
struct MlxUnfused {
  std::string_view hf;  ///< hf/'s name after the layer prefix
  std::array<std::string_view, 2> mlx;
};

/// mlx/'s names where mlx-lm's are not hf/'s.
struct MlxNames {
  /// Expert stacks: {hf/'s per-expert name after the layer prefix, "{}" the expert; mlx-lm's
  /// stacked name}; empty where mlx/ keeps hf/'s per-expert names.
  std::span<const std::pair<std::string_view, std::string_view>> experts;
  std::span<const MlxUnfused> unfused;
};

/// A model's config and state_dict, rendered from one reading of the file.
struct HfModel {
  HfConfig config;
  std::vector<HfWeight> weights;
  std::vector<std::size_t> omitted;  ///< as HfWeightsResult::omitted
  /// mlx/'s names where mlx-lm's are not hf/'s: the row's (its mlx column,
  /// src/hf/hf_architectures.h).
  MlxNames mlx_names;
  /// Files besides the config, tokenizer and weight files, as (name, text): a vision-language
  /// model's preprocessor_config.json and processor_config.json.
  std::vector<std::pair<std::string, std::string>> extra_files;
  /// Fields added to tokenizer_config.json (a JSON object's text, empty for none): a
  /// vision-language model's processor_class and image tokens (extra_special_tokens).
  std::string tokenizer_fields;
};

/// The model, or why hf/ has none.
struct HfModelResult {
  std::optional<HfModel> model;
  std::string reason;  ///< one line naming the key or tensor at fault, when no model
};

/// render_hf_config's and hf_weight_map's results for `file` from one plan of it (the row, its
/// config fields, dimensions and each layer's tensors read and proven once): no model where
/// either refuses, with the reason. `dtype` as render_hf_config's. An out-of-memory reads "not
/// enough memory" (error.h). Never throws.
HfModelResult render_hf_model(const GgufFile& file, std::string_view dtype = {});

/// The vision-language model of a text model and its vision projector (llama.cpp's mmproj
/// GGUF: convert_hf_to_gguf.py --mmproj, conversion/base.py MmprojModel), as the original
/// `...ForConditionalGeneration` checkpoint holds it, from the vision table's row of the
/// projector's clip.projector_type (src/hf/hf_vision.cpp): `text` (render_hf_model of the text
/// model) becomes its text_config and its language model's weights, under the checkpoint's
/// names; the clip.vision.* keys its vision_config; the projector's v.* and mm.* tensors the
/// vision tower's and the projector's weights, with the inverse of the converter's transforms;
/// the image tokens' ids are looked up in the text model's vocabulary by their strings; and the
/// processor files come from the clip.vision.* keys and the processor class's defaults.
/// `paired` is paired_file of the two (model.h): the text model's keys, its tensors, then the
/// projector's (the weights' `source` index it); `projector` is the projector's own file.
///
/// No model (with the reason) when: clip.projector_type has no row; the text model is not of the
/// row's text architecture; a clip.vision.* key the row reads is absent or not a positive
/// integer (a finite float for an epsilon); clip.vision.projection_dim is not the text model's
/// hidden_size; image_size is not a multiple of patch_size (times the projector's scale
/// factor); an image token is not in the vocabulary; a tensor the vision tower needs is absent,
/// or its shape is not the one the keys give. An out-of-memory reads "not enough memory".
/// Never throws.
HfModelResult render_hf_vision(const GgufFile& paired, const GgufFile& projector,
                               const HfModel& text);

/// For kReversePermute on a tensor of `rows` rows with `n_head` heads: the GGUF row that HF row
/// `hf_row` comes from (formula in HfTransform::kReversePermute). Requires rows a multiple of
/// 2 × n_head and hf_row < rows.
std::uint64_t hf_permuted_row(std::uint64_t hf_row, std::uint64_t rows, std::uint64_t n_head);

/// For HfWeight::untile_run: the GGUF head (run) that HF value head `hf_head` comes from, with
/// nk = `k_heads` key heads and nv = `v_heads` value heads. HF groups value heads by key head
/// (head k·r + j is key head k's j-th, r = nv / nk); the converter tiles them (head j·nk + k).
/// Requires nv a multiple of nk and hf_head < nv.
std::uint64_t hf_untiled_head(std::uint64_t hf_head, std::uint64_t k_heads, std::uint64_t v_heads);

}  // namespace ggufs
