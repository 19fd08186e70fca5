// hf/: the model as a Hugging Face model folder (folder_views.h). The files are those
// save_pretrained writes for the model transformers' GGUF import builds; the rules for each
// are in hf_config.h, hf_tokenizer.h and hf_weights.h, the sharding here.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <variant>

#include "ggufs/error.h"
#include "ggufs/folder_views.h"
#include "ggufs/ggml_type.h"
#include "ggufs/hf_config.h"
#include "ggufs/hf_tokenizer.h"
#include "ggufs/hf_weights.h"
#include "ggufs/names.h"
#include "ggufs/render.h"
#include "mlx_folder.h"
#include "safetensors_file.h"

namespace ggufs {
namespace {

// The folders laid out here: hf/, hf-mxfp4/ (gpt-oss's experts as the Hub stores them) and mlx/
// (linear and embedding modules in MLX's quantized form where ggml's blocks have one).
enum class Flavor { kHf, kHfMxfp4, kMlx };

std::string_view folder_name(Flavor f) {
  return f == Flavor::kHf ? "hf" : f == Flavor::kHfMxfp4 ? "hf-mxfp4" : "mlx";
}

// torch's name of a dtype of hf/ (config.json's "dtype").
std::string_view torch_name(ViewData d) {
  return d == ViewData::kFloat16 ? "float16" : d == ViewData::kBFloat16 ? "bfloat16" : "float32";
}

// The ggml type whose stored elements are `d`'s, bit for bit (spliced when no transform applies).
std::uint32_t stored_type_of(ViewData d) {
  return d == ViewData::kFloat16    ? GGML_TYPE_F16
         : d == ViewData::kBFloat16 ? GGML_TYPE_BF16
                                    : GGML_TYPE_F32;
}

// A weight's pieces, or the reason it cannot be served.
using PiecesResult = std::variant<std::vector<Piece>, std::string>;

// What every piece of a weight is cut from: the GGUF and the dtype hf/ serves.
struct PieceSource {
  const GgufFile& file;
  ViewData d;

  // Where a range of a tensor's elements comes from: its stored bytes where they are the
  // weight's (spliced), else decoded.
  Piece range(std::size_t tensor, std::uint64_t first, std::uint64_t n, bool as_stored) const {
    const TensorInfo& t = file.tensors[tensor];
    Piece p;
    p.size = n * element_bytes(d);
    if (as_stored && t.type == stored_type_of(d) && !file.big_endian) {
      p.kind = Piece::Kind::kSource;
      p.from = t.file_offset + first * element_bytes(d);
      p.shard = t.shard;
      return p;
    }
    p.kind = Piece::Kind::kTensor;
    p.tensor = tensor;
    p.data = d;
    p.from = first;
    return p;
  }

  // `n` elements of a tensor from `first` on, decoded, as a matrix's transpose
  // (Piece::Order::kTransposed): the transposing transforms' pieces.
  Piece transposed(std::size_t tensor, std::uint64_t first, std::uint64_t n) const {
    Piece p = range(tensor, first, n, false);
    p.order = Piece::Order::kTransposed;
    return p;
  }
};

// The GGUF tensors a weight is made of: `source`, then its parts.
std::vector<std::size_t> sources_of(const HfWeight& w) {
  std::vector<std::size_t> sources = {w.source};
  sources.insert(sources.end(), w.parts.begin(), w.parts.end());
  return sources;
}

// Why a weight's GGUF tensors (`what`: the source and its parts or part) cannot give its
// `count` elements.
std::string not_held(const TensorInfo& t, std::string_view what, std::uint64_t count,
                     const HfWeight& w) {
  return fmt::format("tensor '{}'{} {} the {} elements of {}", printable(t.name), what,
                     what.empty() ? "does not hold" : "do not hold", count, w.hf_name);
}

// kInterleaveTransposed (gpt-oss's experts; gpt_oss.py, GptOssModel.modify_tensors): matrix
// by matrix (expert by expert): a stack of matrices (ne[1] rows of ne[0]), or of vectors (ne[0]
// rows of one element).
PiecesResult interleave_transposed(const PieceSource& src, const HfWeight& w, std::uint64_t count,
                                   std::uint64_t elements) {
  const TensorInfo& t = src.file.tensors[w.source];
  const bool vectors = t.n_dims == 2;
  const std::uint64_t rows = vectors ? t.ne[0] : t.ne[1], cols = vectors ? 1 : t.ne[0];
  const std::uint64_t matrices = vectors ? t.ne[1] : t.ne[2];
  if (count != elements || w.parts.size() > 1 || (!vectors && t.n_dims != 3) ||
      (vectors && w.parts.empty())) {
    return not_held(t, " and its parts", count, w);
  }
  std::vector<Piece> pieces;
  for (std::uint64_t m = 0; m < matrices; ++m) {
    Piece p = src.transposed(w.source, m * rows * cols, rows * cols * (1 + w.parts.size()));
    if (!w.parts.empty()) {
      p.order = Piece::Order::kInterleavedTransposed;
      p.tensor2 = w.parts[0];
      p.rows = rows;
      p.cols = cols;
    }
    pieces.push_back(p);
  }
  return pieces;
}

// kConcatRows (granitemoe's input_linear fused again; granite.py,
// GraniteMoeModel.modify_tensors): matrix by matrix (ne[2]·ne[3] of them, the same in every
// part: hf_weight_map checked), each part's rows in turn.
PiecesResult concat_rows(const PieceSource& src, const HfWeight& w, std::uint64_t count,
                         std::uint64_t elements) {
  const TensorInfo& t = src.file.tensors[w.source];
  if (count != elements) return not_held(t, " and its parts", count, w);
  const std::uint64_t matrices = t.ne[2] * t.ne[3];
  const std::vector<std::size_t> sources = sources_of(w);
  std::vector<Piece> pieces;
  for (std::uint64_t m = 0; m < matrices; ++m) {
    for (const std::size_t s : sources) {
      const TensorInfo& part = src.file.tensors[s];
      const std::uint64_t n = part.ne[0] * part.ne[1];
      pieces.push_back(src.range(s, m * n, n, true));
    }
  }
  return pieces;
}

// kConcatTransposedRows (MLA's kv_b_proj from attn_k_b and attn_v_b; deepseek.py,
// DeepseekV2Model.modify_tensors): head by head (ne[2]): the source's matrix (ne[1] rows of
// ne[0]) transposed, then the part's rows as they are (hf_weight_map checked the part holds
// ne[2] matrices of ne[1] columns).
PiecesResult concat_transposed_rows(const PieceSource& src, const HfWeight& w, std::uint64_t count,
                                    std::uint64_t elements) {
  const TensorInfo& t = src.file.tensors[w.source];
  if (count != elements || w.parts.size() != 1 || t.n_dims != 3) {
    return not_held(t, " and its part", count, w);
  }
  const TensorInfo& v = src.file.tensors[w.parts[0]];
  const std::uint64_t k_n = t.ne[0] * t.ne[1], v_n = v.ne[0] * v.ne[1];
  std::vector<Piece> pieces;
  for (std::uint64_t h = 0; h < t.ne[2]; ++h) {
    pieces.push_back(src.transposed(w.source, h * k_n, k_n));
    pieces.push_back(src.range(w.parts[0], h * v_n, v_n, true));
  }
  return pieces;
}

// kRegroupQkv (the fused query_key_value of gptneox.py, bloom.py and falcon.py): per KV
// group: its queries, its key, its value, each a run of whole GGUF rows (formula in
// HfTransform::kRegroupQkv; hf_weight_map checked the rows hold n + 2g heads).
PiecesResult regroup_qkv(const PieceSource& src, const HfWeight& w, std::uint64_t count) {
  const TensorInfo& t = src.file.tensors[w.source];
  if (count != t.n_elements || t.n_dims > 2) return not_held(t, "", count, w);
  const std::uint64_t row = t.n_dims == 2 ? t.ne[0] : 1;
  const std::uint64_t head = count / row / (w.n_head + 2 * w.groups) * row;  // a head's elements
  const std::uint64_t q = w.n_head / w.groups;
  std::vector<Piece> pieces;
  for (std::uint64_t g = 0; g < w.groups; ++g) {
    pieces.push_back(src.range(w.source, g * q * head, q * head, true));
    pieces.push_back(src.range(w.source, (w.n_head + g) * head, head, true));
    pieces.push_back(src.range(w.source, (w.n_head + w.groups + g) * head, head, true));
  }
  return pieces;
}

// kRegroupQkvz (qwen3next's in_proj_qkvz; qwen.py, Qwen3NextModel.modify_tensors): per key
// head: its q, k and v rows of `source`, its z rows of the part (formula in
// HfTransform::kRegroupQkvz; hf_weight_map checked the rows hold whole key heads).
PiecesResult regroup_qkvz(const PieceSource& src, const HfWeight& w, std::uint64_t count,
                          std::uint64_t elements) {
  const TensorInfo& t = src.file.tensors[w.source];
  const TensorInfo& gate = src.file.tensors[w.parts.at(0)];
  if (count != elements || t.n_dims != 2 || gate.n_dims != 2 || gate.ne[0] != t.ne[0]) {
    return not_held(t, " and its part", count, w);
  }
  // hf_weight_map checked 2·g and 2·z fit, and g divides z (z = gate.ne[1]).
  const std::uint64_t g = w.groups, row = t.ne[0];
  if (g == 0 || t.ne[1] < gate.ne[1]) {
    return fmt::format("tensor '{}' and its part do not hold {} key heads", printable(t.name), g);
  }
  const std::uint64_t v = gate.ne[1] / g * row, n = (t.ne[1] - gate.ne[1]) / g / 2 * row;
  std::vector<Piece> pieces;
  for (std::uint64_t j = 0; j < g; ++j) {
    pieces.push_back(src.range(w.source, j * n, n, true));
    pieces.push_back(src.range(w.source, (g + j) * n, n, true));
    pieces.push_back(src.range(w.source, 2 * g * n + j * v, v, true));
    pieces.push_back(src.range(w.parts[0], j * v, v, true));
  }
  return pieces;
}

// qwen35's value heads (HfWeight::untile_run) of the weight `p` gives (elements from `first`):
// the elements before them as they are, then their runs regrouped, each group a whole number of
// runs (hf_weight_map checked it).
PiecesResult untile_value_heads(const PieceSource& src, const HfWeight& w, std::uint64_t count,
                                std::uint64_t first, bool as_stored, const Piece& p) {
  const TensorInfo& t = src.file.tensors[w.source];
  const std::uint64_t nk = w.untile_k_heads, nv = w.untile_v_heads, run = w.untile_run;
  const std::uint64_t skip = w.untile_skip;
  if (p.order != Piece::Order::kAsStored || nk == 0 || nv == 0 || nv % nk != 0 || skip > count ||
      nv > (count - skip) / run || (count - skip) % (run * nv) != 0) {
    return fmt::format("tensor '{}' does not hold {} value heads of {} elements", printable(t.name),
                       nv, run);
  }
  std::vector<Piece> pieces;
  if (skip) {
    Piece before = src.range(w.source, first, skip, as_stored);
    before.add = p.add;
    before.log_negated = p.log_negated;
    pieces.push_back(before);
  }
  Piece heads = src.range(w.source, first + skip, count - skip, false);
  heads.order = Piece::Order::kUntileHeads;
  heads.n_head = nk;
  heads.rows = nv;
  heads.cols = run;
  heads.add = p.add;
  heads.log_negated = p.log_negated;
  pieces.push_back(heads);
  return pieces;
}

// The transforms of one range of elements (kNone, kSelect, kFirstRows, kReversePermute,
// kAddConstant, kTranspose, kLogOfNegated), and qwen35's value heads on top: one piece, or the
// untiled heads. The source elements the weight covers: all of them, one expert's slice of
// the stack, or the rows before the padding (whole rows of ne[0]).
PiecesResult element_range(const PieceSource& src, const HfWeight& w, std::uint64_t count) {
  const TensorInfo& t = src.file.tensors[w.source];
  const bool select = w.transform == HfTransform::kSelect;
  const bool first_rows = w.transform == HfTransform::kFirstRows;
  const std::uint64_t slice = select ? t.ne[0] * t.ne[1] : first_rows ? count : t.n_elements;
  const std::uint64_t first = select ? w.index * slice : 0;
  if (count != slice || first + slice > t.n_elements ||
      (first_rows && (t.ne[0] == 0 || count % t.ne[0] != 0)) ||
      (w.transform == HfTransform::kTranspose && t.n_dims != 2)) {
    return not_held(t, "", count, w);
  }
  const bool as_stored = w.transform == HfTransform::kNone || select || first_rows;
  Piece p = src.range(w.source, first, count, as_stored);
  switch (w.transform) {
    case HfTransform::kNone:
    case HfTransform::kSelect:
    case HfTransform::kConcatRows:
    case HfTransform::kRegroupQkv:
    case HfTransform::kInterleaveTransposed:
    case HfTransform::kConcatTransposedRows:
    case HfTransform::kRegroupQkvz:
    case HfTransform::kFirstRows:
      break;
    case HfTransform::kReversePermute:
      p.order = Piece::Order::kPermuteRows;
      p.n_head = w.n_head;
      break;
    case HfTransform::kAddConstant:
      p.add = w.constant;
      break;
    case HfTransform::kTranspose:
      p.order = Piece::Order::kTransposed;
      break;
    case HfTransform::kLogOfNegated:
      p.log_negated = true;
      break;
  }
  if (w.untile_run == 0) return std::vector<Piece>{p};
  return untile_value_heads(src, w, count, first, as_stored, p);
}

// The pieces that give weight `w` in dtype `d`, in order, or a reason it cannot be served:
// every GGUF tensor of it decodable, then the pieces of its transform's family.
PiecesResult weight_pieces(const GgufFile& file, const HfWeight& w, ViewData d) {
  std::uint64_t count = 1;
  for (const std::uint64_t n : w.shape) count *= n;  // the config's dimensions: checked, small
  std::uint64_t elements = 0;
  for (const std::size_t s : sources_of(w)) {
    const TensorInfo& t = file.tensors[s];
    if (!t.n_bytes || !decodes_to_f32(file, t)) {
      return fmt::format("tensor '{}': type {} cannot be decoded here", printable(t.name), t.type);
    }
    elements += t.n_elements;
  }
  const PieceSource src{file, d};
  switch (w.transform) {
    case HfTransform::kInterleaveTransposed:
      return interleave_transposed(src, w, count, elements);
    case HfTransform::kConcatRows:
      return concat_rows(src, w, count, elements);
    case HfTransform::kConcatTransposedRows:
      return concat_transposed_rows(src, w, count, elements);
    case HfTransform::kRegroupQkv:
      return regroup_qkv(src, w, count);
    case HfTransform::kRegroupQkvz:
      return regroup_qkvz(src, w, count, elements);
    case HfTransform::kNone:
    case HfTransform::kSelect:
    case HfTransform::kFirstRows:
    case HfTransform::kReversePermute:
    case HfTransform::kAddConstant:
    case HfTransform::kTranspose:
    case HfTransform::kLogOfNegated:
      break;
  }
  return element_range(src, w, count);
}

FolderFile text_file(std::string name, std::string text) {
  return FolderFile{std::move(name), std::move(text), std::nullopt};
}

// hf-mxfp4/: an experts matrix `w` of hf/ (kInterleaveTransposed of MXFP4 tensors: ggml rows
// of cols blocks, ne = [cols·32, rows, E]) as transformers' `_blocks` and `_scales`, expert by
// expert, the gate's rows and the up's alternating (gpt_oss.py, generate_extra_tensors); or
// why not.
std::variant<std::vector<SafetensorsTensor>, std::string> mxfp4_tensors(const GgufFile& file,
                                                                        const HfWeight& w) {
  const TensorInfo& t = file.tensors[w.source];
  const bool fits = [&] {
    if (t.type != GGML_TYPE_MXFP4 || t.n_dims != 3 || t.ne[0] % 32 || w.parts.size() > 1 ||
        file.big_endian) {
      return false;
    }
    for (const std::size_t s : w.parts) {
      const TensorInfo& part = file.tensors[s];
      if (part.type != t.type || part.n_dims != 3 || part.ne != t.ne) return false;
    }
    return true;
  }();
  if (!fits) return fmt::format("tensor '{}' is not a stack of MXFP4 matrices", printable(t.name));
  const std::uint64_t cols = t.ne[0] / 32, rows = t.ne[1] * (1 + w.parts.size()), experts = t.ne[2];
  std::vector<SafetensorsTensor> out;
  for (const bool blocks : {true, false}) {
    const std::uint64_t unit = blocks ? 16 : 1;
    SafetensorsTensor st{
        w.hf_name + (blocks ? "_blocks" : "_scales"), "U8", {experts, rows, cols}, {}};
    if (blocks) st.shape.push_back(16);
    for (std::uint64_t m = 0; m < experts; ++m) {
      Piece p;
      p.kind = blocks ? Piece::Kind::kMxfp4Blocks : Piece::Kind::kMxfp4Scales;
      p.tensor = w.source;
      p.tensor2 = w.parts.empty() ? w.source : w.parts[0];
      p.rows = 1 + w.parts.size();
      p.cols = cols;
      p.from = m * t.ne[1] * cols;
      p.size = rows * cols * unit;
      st.pieces.push_back(p);
    }
    out.push_back(std::move(st));
  }
  return out;
}

// The __metadata__ key of the tensors hf/ leaves out (model.safetensors' own, safetensors.cpp).
constexpr std::string_view kHfOmittedKey = "ggufs.omitted_tensors";

// The Hub's gpt-oss quantization_config (gpt-oss-20b's and -120b's config.json).
constexpr std::string_view kMxfp4QuantizationConfig = R"({
  "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                             "model.embed_tokens", "lm_head"],
  "quant_method": "mxfp4"})";

// The folder's description (its user.ggufs.view); `quantized`: mlx/'s modules in MLX's form.
std::string folder_what(std::string_view model_type, std::size_t tensors, ViewData dtype,
                        Flavor flavor, std::size_t files, std::size_t quantized) {
  if (flavor == Flavor::kMlx) {
    return fmt::format(
        "MLX model folder: {}, {} tensors ({} modules in ggml's blocks as MLX's quantized form, "
        "the rest {}) in {} file(s)",
        model_type, tensors, quantized, torch_name(dtype), files);
  }
  return fmt::format("Hugging Face model folder: {}, {} tensors of {}{} in {} file(s)", model_type,
                     tensors, torch_name(dtype),
                     flavor == Flavor::kHfMxfp4 ? " and MXFP4 experts" : "", files);
}

// The tokenizer files, in directory order (render_hf_tokenizer's, as save_pretrained names them).
// The files are copied: each folder of the model holds its own (the rendering is shared).
void add_tokenizer_files(FolderLayout& out, const HfTokenizer& t, std::string_view fields = {}) {
  out.files.push_back(text_file("special_tokens_map.json", t.special_tokens_map_json));
  out.files.push_back(text_file("tokenizer.json", t.tokenizer_json));
  if (fields.empty()) {
    out.files.push_back(text_file("tokenizer_config.json", t.tokenizer_config_json));
    return;
  }
  nlohmann::json config = nlohmann::json::parse(t.tokenizer_config_json);
  config.update(nlohmann::json::parse(fields));
  out.files.push_back(
      text_file("tokenizer_config.json",
                config.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"));
}

// A vocabulary-only file (llama.cpp's models/ggml-vocab-*.gguf): the tokenizer files alone,
// whatever the architecture, as the original tokenizer's folder holds them.
FolderResult vocabulary_folder(const GgufFile& file) {
  HfTokenizerResult tokenizer = render_hf_tokenizer(file);
  if (!tokenizer.tokenizer) return {std::nullopt, std::move(tokenizer.reason)};
  FolderLayout out;
  add_tokenizer_files(out, *tokenizer.tokenizer);
  out.what = "Hugging Face tokenizer folder: a vocabulary-only file";
  return {std::move(out), ""};
}

// The weight files' tensors, in state_dict order, and the index's totals; mlx/: every module
// mlx-lm could quantize, with its form (nullptr: float32), and the weights whose values are not
// ggml's (config.json's "ggufs_not_exact": name → how).
struct StateDict {
  std::vector<SafetensorsTensor> tensors;
  std::uint64_t total_size = 0, total_parameters = 0;
  std::vector<MlxModule> mlx_modules;
  nlohmann::json not_exact = nlohmann::json::object();
};

// The ggml type names of `w`'s GGUF tensors, each once, in order ("Q6_K", "Q4_K+Q6_K").
std::string source_types(const GgufFile& file, const HfWeight& w) {
  std::vector<std::size_t> tensors = {w.source};
  tensors.insert(tensors.end(), w.parts.begin(), w.parts.end());
  std::vector<std::string> names;
  for (const std::size_t i : tensors) {
    std::string name = type_display_name(file.tensors[i].type);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return fmt::format("{}", fmt::join(names, "+"));
}

// Whether float weight `w` served as `dtype` holds ggml's values as they are: float32, or the
// GGUF's own 16-bit type moved without arithmetic (not a norm's offset, not mamba's log).
bool float_is_exact(const GgufFile& file, const HfWeight& w, ViewData dtype) {
  if (dtype == ViewData::kFloat32) return true;
  if (w.transform == HfTransform::kAddConstant || w.transform == HfTransform::kLogOfNegated) {
    return false;
  }
  const std::uint32_t same = stored_type_of(dtype);
  return file.tensors[w.source].type == same &&
         std::all_of(w.parts.begin(), w.parts.end(),
                     [&](std::size_t i) { return file.tensors[i].type == same; });
}

// mlx/: `w` (an expert stack where `stack`: MlxWeights) in MLX's quantized form (ggml's blocks,
// or requantized: -o mlx_requantize), its module recorded in `out`; false where it is float.
bool add_mlx_weight(const GgufFile& file, const HfWeight& w, bool stack, std::uint32_t requantize,
                    StateDict& out) {
  std::vector<SafetensorsTensor> quantized;
  const MlxBlockForm* form = mlx_tensors(file, w, stack, requantize, quantized);
  if (!w.hf_name.ends_with(".weight")) return false;  // (mlx_tensors: no form)
  const std::string module = w.hf_name.substr(0, w.hf_name.size() - 7);
  if (stack || w.shape.size() == 2) out.mlx_modules.push_back({module, form});
  if (!form) return false;
  if (form->type == GGML_TYPE_F32) {  // mlx_requantized_form
    out.not_exact[module] = fmt::format("MLX's affine {}-bit form, group {}, requantized from {}",
                                        form->bits, form->group_size, source_types(file, w));
  }
  for (SafetensorsTensor& t : quantized) {
    out.total_size += t.size();
    out.tensors.push_back(std::move(t));
  }
  std::uint64_t parameters = 1;
  for (const std::uint64_t n : w.shape) parameters *= n;  // a tensor's elements: no overflow
  out.total_parameters += parameters;
  return true;
}

// The tensors of `weights` (hf-mxfp4/: the experts as `_blocks` and `_scales`, whose
// parameters count their bytes; mlx/: modules in MLX's form where they have one, `stacked` the
// expert stacks), or the reason one cannot be served.
std::variant<StateDict, std::string> state_dict(const GgufFile& file,
                                                const std::vector<HfWeight>& weights,
                                                const std::vector<bool>& stacked, ViewData dtype,
                                                Flavor flavor, std::uint32_t requantize) {
  StateDict out;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const HfWeight& w = weights[i];
    const bool stack = i < stacked.size() && stacked[i];
    if (flavor == Flavor::kMlx) {
      if (add_mlx_weight(file, w, stack, requantize, out)) continue;
      if (!float_is_exact(file, w, dtype)) {
        out.not_exact[w.hf_name] =
            fmt::format("rounded to {} from {}", torch_name(dtype), source_types(file, w));
      }
    }
    if (flavor == Flavor::kHfMxfp4 && w.transform == HfTransform::kInterleaveTransposed &&
        w.shape.size() == 3) {
      auto blocks = mxfp4_tensors(file, w);
      if (auto* reason = std::get_if<std::string>(&blocks)) return std::move(*reason);
      for (SafetensorsTensor& t : std::get<std::vector<SafetensorsTensor>>(blocks)) {
        out.total_size += t.size();
        out.total_parameters += t.size();  // bytes
        out.tensors.push_back(std::move(t));
      }
      continue;
    }
    auto pieces = weight_pieces(file, w, dtype);
    if (auto* reason = std::get_if<std::string>(&pieces)) return std::move(*reason);
    SafetensorsTensor t{w.hf_name, safetensors_dtype_name(dtype), w.shape,
                        std::move(std::get<std::vector<Piece>>(pieces))};
    out.total_size += t.size();
    out.total_parameters += t.size() / element_bytes(dtype);
    out.tensors.push_back(std::move(t));
  }
  return out;
}

// `tensors` split as huggingface_hub's split_state_dict_into_shards_factory splits them: in
// order into shards of at most `max_size` bytes, a larger tensor alone in a shard of its own
// (listed before the shard being filled); one empty shard for no tensors.
std::vector<std::vector<SafetensorsTensor>> shards_of(std::vector<SafetensorsTensor> tensors,
                                                      std::uint64_t max_size) {
  std::vector<std::vector<SafetensorsTensor>> shards;
  std::vector<SafetensorsTensor> current;
  std::uint64_t current_size = 0;
  for (SafetensorsTensor& t : tensors) {
    const std::uint64_t size = t.size();
    if (size > max_size) {
      shards.push_back({std::move(t)});
      continue;
    }
    if (current_size + size > max_size) {
      shards.push_back(std::move(current));
      current.clear();
      current_size = 0;
    }
    current.push_back(std::move(t));
    current_size += size;
  }
  if (!current.empty() || shards.empty()) shards.push_back(std::move(current));
  return shards;
}

// Weight file `s` of `n` (save_pretrained's names: model.safetensors alone, else numbered).
std::string shard_name(std::size_t s, std::size_t n) {
  return n == 1 ? std::string("model.safetensors")
                : fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, n);
}

// The tensors no entry of the row maps, named as model.safetensors names those it leaves
// out: a warning, and a JSON list (as text) in the first weight file's __metadata__, which this
// returns.
std::string first_metadata(const GgufFile& file, const HfModel& model, std::string_view folder,
                           std::vector<std::string>& warnings) {
  std::string metadata = R"({"format":"pt")";
  if (const std::vector<std::size_t>& omitted = model.omitted; !omitted.empty()) {
    std::string names, list = "[";
    for (std::size_t i = 0; i < omitted.size(); ++i) {
      const std::string& name = file.tensors[omitted[i]].name;
      if (i < 3) names += fmt::format("{}'{}'", i ? ", " : "", printable(name));
      if (i) list += ',';
      append_json_string(list, name);
    }
    list += ']';
    warnings.push_back(fmt::format(
        "{}/ leaves out {} tensor(s) no state_dict entry of {} maps: {}{}; listed in the "
        "__metadata__ of its first weight file under {}",
        folder, omitted.size(), model.config.model_type, names, omitted.size() > 3 ? ", ..." : "",
        kHfOmittedKey));
    metadata += ",";
    append_json_string(metadata, kHfOmittedKey);
    metadata += ":";
    append_json_string(metadata, list);
  }
  return metadata + "}";
}

// The weight files, one a shard, each shard's tensors sorted by name as safetensors' writer
// sorts them; or the reason there is no folder (lay_out_safetensors' warning, taken back).
std::optional<std::string> add_weight_files(FolderLayout& out,
                                            std::vector<std::vector<SafetensorsTensor>>& shards,
                                            const std::string& metadata, ViewData dtype,
                                            Flavor flavor, std::vector<std::string>& warnings) {
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const std::string name = shard_name(s, shards.size());
    std::sort(shards[s].begin(), shards[s].end(),
              [](const SafetensorsTensor& a, const SafetensorsTensor& b) { return a.key < b.key; });
    std::optional<ModelLayout> layout =
        lay_out_safetensors(s == 0 ? metadata : R"({"format":"pt"})", shards[s],
                            fmt::format("{}/{}", folder_name(flavor), name), warnings);
    if (!layout) {  // its warning is the reason there is no folder
      std::string reason = std::move(warnings.back());
      warnings.pop_back();
      return reason;
    }
    layout->what = fmt::format("safetensors: {} tensors of {}{}", shards[s].size(),
                               safetensors_dtype_name(dtype),
                               flavor == Flavor::kHfMxfp4 ? " and MXFP4 (U8)"
                               : flavor == Flavor::kMlx   ? " and MLX's quantized form (U32)"
                                                          : "");
    out.files.push_back({name, {}, std::move(layout)});
  }
  return std::nullopt;
}

// model.safetensors.index.json's text (save_pretrained's, for more than one shard): the totals
// and the weight_map, (key, file) of every tensor, written as text (json::dump's sorted keys);
// a json object of a weight per expert would cost far more.
std::string index_json(const std::vector<std::vector<SafetensorsTensor>>& shards,
                       const StateDict& state) {
  std::vector<std::pair<std::string_view, std::size_t>> weight_map;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    for (const SafetensorsTensor& t : shards[s]) weight_map.emplace_back(t.key, s);
  }
  std::sort(weight_map.begin(), weight_map.end());
  std::string index = fmt::format(
      "{{\n  \"metadata\": {{\n    \"total_parameters\": {},\n    \"total_size\": {}\n  }},\n"
      "  \"weight_map\": {{",
      state.total_parameters, state.total_size);
  for (std::size_t k = 0; k < weight_map.size(); ++k) {
    index += k ? ",\n    " : "\n    ";
    append_json_string(index, weight_map[k].first);
    fmt::format_to(std::back_inserter(index), ": \"{}\"",
                   shard_name(weight_map[k].second, shards.size()));
  }
  return index + "\n  }\n}\n";
}

// The folder's config.json: the rendered text (mlx/: with the fields mlx-lm requires), with
// "dtype" (torch's name) as save_pretrained writes it for a model of that dtype (float32, the
// default, is not written: config_of), hf-mxfp4/'s Hub quantization_config and mlx/'s
// quantization entries; parsed and re-dumped once, sorted keys and indent 2 as config_of writes.
std::string folder_config(const HfConfig& config, ViewData dtype, Flavor flavor,
                          const StateDict& state) {
  const std::string& text = flavor == Flavor::kMlx ? config.mlx_config_json : config.config_json;
  if (flavor == Flavor::kHf && dtype == ViewData::kFloat32) return text;
  nlohmann::json c = nlohmann::json::parse(text);
  if (dtype != ViewData::kFloat32) c["dtype"] = torch_name(dtype);
  if (flavor == Flavor::kHfMxfp4) {
    c["quantization_config"] = nlohmann::json::parse(kMxfp4QuantizationConfig);
  }
  if (flavor == Flavor::kMlx) {
    add_mlx_quantization(c, state.mlx_modules);
    if (!state.not_exact.empty()) c["ggufs_not_exact"] = state.not_exact;
  }
  return c.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// hf/, hf-mxfp4/ or mlx/ (whose float tensors have their own dtype, mlx_dtype) of `model`, the
// text model or the vision-language model of the rendering `hf`.
FolderResult lay_out_model(const GgufFile& file, const HfRendering& hf, const HfModel& model,
                           const TreeOptions& options, std::vector<std::string>& warnings,
                           Flavor flavor) {
  const ViewData dtype = flavor == Flavor::kMlx ? options.mlx_dtype : options.hf_dtype;
  if (flavor == Flavor::kMlx && !model.config.mlx_absent.empty()) {
    return {std::nullopt, model.config.mlx_absent};
  }
  const std::optional<HfTokenizer>& tokenizer = hf.tokenizer.tokenizer;
  // mlx/: the expert stacks whole, under mlx-lm's names.
  const MlxWeights mlx =
      flavor == Flavor::kMlx ? mlx_weights(file, model.weights, model.mlx_names) : MlxWeights{};
  auto weights = flavor == Flavor::kMlx ? state_dict(file, mlx.weights, mlx.stacked, dtype, flavor,
                                                     options.mlx_requantize)
                                        : state_dict(file, model.weights, {}, dtype, flavor, 0);
  if (auto* reason = std::get_if<std::string>(&weights)) return {std::nullopt, std::move(*reason)};
  StateDict& state = std::get<StateDict>(weights);
  const std::size_t n_tensors = state.tensors.size();
  std::vector<std::vector<SafetensorsTensor>> shards =
      shards_of(std::move(state.tensors), options.hf_max_shard_size);

  const HfConfig& config = model.config;
  FolderLayout out;
  out.files.push_back(text_file("config.json", folder_config(config, dtype, flavor, state)));
  out.files.push_back(text_file("generation_config.json", config.generation_config_json));
  if (tokenizer) {
    add_tokenizer_files(out, *tokenizer, model.tokenizer_fields);
  } else {
    warnings.push_back(fmt::format(
        "{}/ has no tokenizer files: the model has no tokenizer.ggml.tokens", folder_name(flavor)));
  }
  const std::string metadata = first_metadata(file, model, folder_name(flavor), warnings);
  if (auto reason = add_weight_files(out, shards, metadata, dtype, flavor, warnings)) {
    return {std::nullopt, std::move(*reason)};
  }
  if (shards.size() > 1) {
    out.files.push_back(text_file("model.safetensors.index.json", index_json(shards, state)));
  }
  for (const auto& [name, text] : model.extra_files) out.files.push_back(text_file(name, text));
  const std::size_t quantized =
      static_cast<std::size_t>(std::count_if(state.mlx_modules.begin(), state.mlx_modules.end(),
                                             [](const MlxModule& m) { return m.form != nullptr; }));
  out.what = folder_what(config.model_type, n_tensors, dtype, flavor, shards.size(), quantized);
  return {std::move(out), ""};
}

// hf/, hf-mxfp4/ or mlx/ from the model's one rendering. hf/ of a model with its projector is
// the vision-language model; where the pair is not one model, or its folder cannot be laid out
// (a projector tensor no decoder reads), the text model alone, with the reason.
FolderResult lay_out(const GgufFile& file, const HfRendering& hf, const TreeOptions& options,
                     std::vector<std::string>& warnings, Flavor flavor) {
  if (file.tensors.empty()) return vocabulary_folder(file);
  if (!hf.model.model) return {std::nullopt, hf.model.reason};
  // A model without a vocabulary gets the folder without tokenizer files (AutoTokenizer fails on
  // it as on the gguf_file= import); one whose vocabulary is there but would make a tokenizer
  // that is wrong gets none at all.
  if (!hf.tokenizer.tokenizer && hf.has_vocabulary) return {std::nullopt, hf.tokenizer.reason};
  const HfModel& text = *hf.model.model;
  if (flavor != Flavor::kHf || !hf.vision) {
    return lay_out_model(file, hf, text, options, warnings, flavor);
  }
  std::string why = hf.vision->reason;
  if (hf.vision->model) {
    const std::size_t warned = warnings.size();
    FolderResult vision = lay_out_model(file, hf, *hf.vision->model, options, warnings, flavor);
    if (vision.folder) return vision;
    warnings.resize(warned);  // the text model's folder warns for itself
    why = fmt::format("its folder cannot be laid out: {}", vision.reason);
  }
  warnings.push_back(fmt::format("hf/ is the text model alone, without its projector: {}", why));
  FolderResult alone = lay_out_model(file, hf, text, options, warnings, flavor);
  if (alone.folder) alone.folder->what += fmt::format("; the text model alone: {}", why);
  return alone;
}

}  // namespace

HfRendering render_hf(const GgufFile& file, const GgufFile* paired, const GgufFile* projector) {
  HfRendering r;
  r.has_vocabulary = std::any_of(file.kv.begin(), file.kv.end(), [](const KeyValue& kv) {
    return kv.key == "tokenizer.ggml.tokens";
  });
  if (file.tensors.empty()) return r;  // vocabulary_folder: neither is rendered
  r.model = render_hf_model(file);
  if (!r.model.model) return r;
  try {
    r.tokenizer = render_hf_tokenizer(file);
  } catch (const std::exception& e) {  // bad_alloc: the daemon stays up (error.h)
    r.model = {std::nullopt, not_enough_memory(e, "render its tokenizer")
                                 .value_or(fmt::format("no tokenizer: {}", e.what()))};
  }
  if (paired && projector && r.model.model) {
    r.vision = render_hf_vision(*paired, *projector, *r.model.model);
  }
  return r;
}

FolderResult hf_folder_layout(const GgufFile& file, const HfRendering& hf,
                              const TreeOptions& options, std::vector<std::string>& warnings) {
  return lay_out(file, hf, options, warnings, Flavor::kHf);
}

FolderResult mlx_folder_layout(const GgufFile& file, const HfRendering& hf,
                               const TreeOptions& options, std::vector<std::string>& warnings) {
  return lay_out(file, hf, options, warnings, Flavor::kMlx);
}

FolderResult hf_mxfp4_folder_layout(const GgufFile& file, const HfRendering& hf,
                                    const TreeOptions& options,
                                    std::vector<std::string>& warnings) {
  if (!has_mxfp4_experts(file))
    return {std::nullopt, "the model is not gpt-oss with MXFP4 experts"};
  return lay_out(file, hf, options, warnings, Flavor::kHfMxfp4);
}

FolderResult hf_folder_layout(const GgufFile& file, const TreeOptions& options,
                              std::vector<std::string>& warnings) {
  return hf_folder_layout(file, render_hf(file), options, warnings);
}

FolderResult mlx_folder_layout(const GgufFile& file, const TreeOptions& options,
                               std::vector<std::string>& warnings) {
  return mlx_folder_layout(file, render_hf(file), options, warnings);
}

FolderResult hf_mxfp4_folder_layout(const GgufFile& file, const TreeOptions& options,
                                    std::vector<std::string>& warnings) {
  return hf_mxfp4_folder_layout(file, render_hf(file), options, warnings);
}

bool has_mxfp4_experts(const GgufFile& file) {
  const auto arch = std::find_if(file.kv.begin(), file.kv.end(), [](const KeyValue& kv) {
    return kv.key == "general.architecture";
  });
  const auto* name = arch == file.kv.end() ? nullptr : std::get_if<std::string>(&arch->value.data);
  return name && *name == "gpt-oss" &&
         std::any_of(file.tensors.begin(), file.tensors.end(), [](const TensorInfo& t) {
           return t.type == GGML_TYPE_MXFP4 && t.name.ends_with("_exps.weight");
         });
}

}  // namespace ggufs
