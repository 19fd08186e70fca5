// mlx/'s quantized modules (mlx_folder.h). mlx-lm (mlx_lm/utils.py, load_model) quantizes a
// module (nn.Linear, nn.Embedding: those with to_quantized) when config.json's "quantization"
// names it with its form, or, unnamed, when the weights hold `<module>.scales`, inferring the form
// from the shapes (infer_quant_config); a module named `false` stays float. MLX's quantized
// weight is [out, in·bits/32] uint32, its scales and biases [out, in/group_size]
// (mlx/ops.cpp, quantize).
#include "mlx_folder.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "ggufs/ggml_type.h"

namespace ggufs {
namespace {

// A run of whole rows of one GGUF tensor: rows [first, first + rows), or, permuted, the q/k
// row permutation of those rows (hf_permuted_row, `n_head` heads).
struct RowRun {
  std::size_t tensor;
  std::uint64_t first, rows, n_head;
  bool permuted;
};

// The rows a row-only transform takes, in order (`rows` of them), or nothing when `w` is not one
// (or its tensors do not hold them: hf/ says why). Not kSelect: one expert of a stack is float
// (mlx-lm's sanitize stacks some models' `.weight` alone, qwen3_moe.py); a whole stack is kNone
// (mlx_weights).
std::vector<RowRun> row_runs(const GgufFile& file, const HfWeight& w, std::uint64_t rows) {
  const TensorInfo& t = file.tensors[w.source];
  const std::uint64_t have = t.ne[0] ? t.n_elements / t.ne[0] : 0;
  switch (w.transform) {
    case HfTransform::kNone:
      if (have == rows) return {{w.source, 0, rows, 0, false}};
      return {};
    case HfTransform::kFirstRows:
      if (rows <= have) return {{w.source, 0, rows, 0, false}};
      return {};
    case HfTransform::kReversePermute:
      if (have == rows && w.n_head && rows % (2 * w.n_head) == 0) {
        return {{w.source, 0, rows, w.n_head, true}};
      }
      return {};
    case HfTransform::kConcatRows: {
      std::vector<RowRun> runs = {{w.source, 0, have, 0, false}};
      std::uint64_t total = have;
      for (const std::size_t s : w.parts) {
        const TensorInfo& part = file.tensors[s];
        if (part.n_dims != 2 || part.ne[0] != t.ne[0]) return {};
        runs.push_back({s, 0, part.ne[1], 0, false});
        total += part.ne[1];
      }
      if (t.n_dims != 2 || total != rows) return {};
      return runs;
    }
    default:
      return {};
  }
}

// Whether every tensor of `runs` is of type `form.type`, stored whole, `cols` elements a row.
bool all_of_form(const GgufFile& file, const std::vector<RowRun>& runs, const MlxBlockForm& form,
                 std::uint64_t cols) {
  const TypeTraits* tr = type_traits(form.type);
  return tr && std::all_of(runs.begin(), runs.end(), [&](const RowRun& r) {
           const TensorInfo& t = file.tensors[r.tensor];
           return t.type == form.type && t.n_bytes && t.ne[0] == cols &&
                  cols % tr->block_size == 0 && cols % form.group_size == 0;
         });
}

// Whether every tensor of `runs` holds ggml blocks (not a float or integer type) that ggufs
// decodes, stored whole, `cols` elements a row, in whole groups of mlx_requantized_form's 32: the
// tensors -o mlx_requantize quantizes. A tensor the GGUF stores as float stays float, as
// llama-quantize kept it.
bool all_requantizable(const GgufFile& file, const std::vector<RowRun>& runs, std::uint64_t cols) {
  return cols % 32 == 0 && std::all_of(runs.begin(), runs.end(), [&](const RowRun& r) {
           const TensorInfo& t = file.tensors[r.tensor];
           const TypeTraits* tr = type_traits(t.type);
           return tr && tr->block_size > 1 && tr->to_float && t.n_bytes && t.ne[0] == cols;
         });
}

// The length of `name` before `.suffix`, where it ends so; else nothing.
std::optional<std::size_t> before_suffix(std::string_view name, std::string_view suffix) {
  if (name.size() <= suffix.size() || !name.ends_with(suffix)) return std::nullopt;
  const std::size_t at = name.size() - suffix.size();
  if (name[at - 1] != '.') return std::nullopt;
  return at;
}

// mlx-lm's stacked name of `w` where it is one expert of a GGUF stack [in, out, E] that one of
// `stacks` names, else "".
std::string stacked_name(const GgufFile& file, const HfWeight& w,
                         std::span<const std::pair<std::string_view, std::string_view>> stacks) {
  const TensorInfo& t = file.tensors[w.source];
  if (w.transform != HfTransform::kSelect || t.n_dims != 3 || w.index >= t.ne[2] ||
      w.shape != std::vector<std::uint64_t>{t.ne[1], t.ne[0]}) {
    return "";
  }
  for (const auto& [per_expert, stacked] : stacks) {
    const auto at = before_suffix(w.hf_name, fmt::format(fmt::runtime(per_expert), w.index));
    if (at) return w.hf_name.substr(0, *at) + std::string(stacked);
  }
  return "";
}

// GGUF tensor `t` (index `source`) as it is stored, named `name`: its numpy shape, kNone.
HfWeight as_stored(const TensorInfo& t, std::size_t source, std::string name) {
  HfWeight w;
  w.hf_name = std::move(name);
  for (std::uint32_t d = t.n_dims; d > 0; --d) w.shape.push_back(t.ne[d - 1]);
  w.source = source;
  return w;
}

// `w` as its GGUF tensors under mlx-lm's names, appended to `out`, where `unfused` names it;
// else false.
bool unfuse(const GgufFile& file, const HfWeight& w, std::span<const MlxUnfused> unfused,
            MlxWeights& out) {
  for (const MlxUnfused& u : unfused) {
    const auto at = before_suffix(w.hf_name, u.hf);
    // (Two names need the weight's second tensor.)
    if (!at || (!u.mlx[1].empty() && w.parts.empty())) continue;
    const std::size_t sources[] = {w.source, w.parts.empty() ? w.source : w.parts[0]};
    for (std::size_t i = 0; i < 2 && !u.mlx[i].empty(); ++i) {
      const TensorInfo& t = file.tensors[sources[i]];
      std::string name = w.hf_name.substr(0, *at) + std::string(u.mlx[i]);
      out.stacked.push_back(t.n_dims == 3 && name.ends_with(".weight"));
      out.weights.push_back(as_stored(t, sources[i], std::move(name)));
    }
    return true;
  }
  return false;
}

}  // namespace

MlxWeights mlx_weights(const GgufFile& file, const std::vector<HfWeight>& weights,
                       const MlxNames& names) {
  MlxWeights out;
  // Each stack's weight in `out` and the experts seen, by mlx-lm's name.
  std::map<std::string, std::pair<std::size_t, std::uint64_t>, std::less<>> seen;
  for (const HfWeight& w : weights) {
    if (unfuse(file, w, names.unfused, out)) continue;
    std::string name = stacked_name(file, w, names.experts);
    if (name.empty()) {
      out.weights.push_back(w);
      out.stacked.push_back(false);
      continue;
    }
    auto [it, fresh] = seen.try_emplace(std::move(name), out.weights.size(), 0);
    if (fresh) {
      const TensorInfo& t = file.tensors[w.source];
      out.weights.push_back(as_stored(t, w.source, it->first));
      out.stacked.push_back(true);
    }
    // Expert e of the stack, after experts 0 … e−1: else hf/'s names, as they are.
    if (out.weights[it->second.first].source != w.source || w.index != it->second.second++) {
      return mlx_weights(file, weights, {{}, names.unfused});
    }
  }
  for (const auto& [name, at] : seen) {
    if (at.second != out.weights[at.first].shape[0]) {
      return mlx_weights(file, weights, {{}, names.unfused});
    }
  }
  return out;
}

std::uint64_t mlx_row_bytes(Piece::Kind kind, const MlxBlockForm& form, std::uint64_t ne0) {
  const std::size_t n = static_cast<std::size_t>(ne0);
  switch (kind) {
    case Piece::Kind::kMlxWeight:
      return mlx_weight_words(form, n) * 4;
    case Piece::Kind::kMlxScaleBytes:
      return mlx_groups(form, n);
    default:  // kMlxScales, kMlxBiases
      return mlx_groups(form, n) * 4;
  }
}

const MlxBlockForm* mlx_tensors(const GgufFile& file, const HfWeight& w, bool stack,
                                std::uint32_t requantize, std::vector<SafetensorsTensor>& out) {
  // (An empty matrix too: MLX's shapes would hold no group, and its reads no row.)
  const std::size_t dims = stack ? 3 : 2;
  if (w.shape.size() != dims || std::count(w.shape.begin(), w.shape.end(), std::uint64_t{0}) ||
      !w.hf_name.ends_with(".weight") || w.untile_run || file.big_endian ||
      (stack && w.transform != HfTransform::kNone)) {
    return nullptr;
  }
  // A stack's rows: E·out, at most the tensor's elements (its ne), so the product holds.
  const std::uint64_t rows = stack ? w.shape[0] * w.shape[1] : w.shape[0];
  const std::vector<RowRun> runs = row_runs(file, w, rows);
  const std::uint64_t cols = w.shape.back();
  if (runs.empty()) return nullptr;
  const MlxBlockForm* form = mlx_block_form(file.tensors[w.source].type);
  // An MXFP4 or NVFP4 block's scale byte may have no MLX equivalent (encode_mlx_row's
  // kNoExactForm), known only once the blocks are read. An MXFP4 expert stack (gpt-oss's, the
  // one place the converter writes MXFP4) takes mlx-lm's "mxfp4" form all the same, and a read of
  // a block whose exponent byte is 255 (NaN in the OCP MX format) fails with EIO; the other
  // tensors of those types are float, or requantized.
  const bool exact = form &&
                     (form->mode == MlxMode::kAffine || (stack && form->mode == MlxMode::kMxfp4)) &&
                     all_of_form(file, runs, *form, cols);
  if (!exact) {
    form = requantize ? mlx_requantized_form(requantize) : nullptr;
    if (!form || !all_requantizable(file, runs, cols)) return nullptr;
  }
  const std::string module = w.hf_name.substr(0, w.hf_name.size() - 7);
  const std::uint64_t words = mlx_weight_words(*form, cols), groups = mlx_groups(*form, cols);
  const bool affine = form->mode == MlxMode::kAffine;
  // {suffix, dtype, elements a row, piece kind}
  const std::tuple<const char*, std::string_view, std::uint64_t, Piece::Kind> outputs[] = {
      {".weight", "U32", words, Piece::Kind::kMlxWeight},
      {".scales", affine ? "F32" : "U8", groups,
       affine ? Piece::Kind::kMlxScales : Piece::Kind::kMlxScaleBytes},
      {".biases", "F32", groups, Piece::Kind::kMlxBiases},
  };
  for (const auto& output : outputs) {
    if (!affine && std::get<3>(output) == Piece::Kind::kMlxBiases) continue;
    const std::uint64_t n = std::get<2>(output);
    std::vector<std::uint64_t> shape = w.shape;
    shape.back() = n;
    SafetensorsTensor st{module + std::get<0>(output), std::get<1>(output), std::move(shape), {}};
    for (const RowRun& r : runs) {
      Piece p;
      p.kind = std::get<3>(output);
      p.tensor = r.tensor;
      p.from = r.first;
      p.size = r.rows * mlx_row_bytes(p.kind, *form, cols);
      p.order = r.permuted ? Piece::Order::kPermuteRows : Piece::Order::kAsStored;
      p.n_head = r.n_head;
      p.mlx_bits = static_cast<std::uint8_t>(exact ? 0 : form->bits);
      st.pieces.push_back(p);
    }
    out.push_back(std::move(st));
  }
  return form;
}

void add_mlx_quantization(nlohmann::json& config, const std::vector<MlxModule>& modules) {
  // The default: the form most modules have (ties: the first in (mode, bits, group) order).
  using Key = std::tuple<MlxMode, std::uint32_t, std::uint32_t>;
  const auto key = [](const MlxBlockForm& f) { return Key(f.mode, f.bits, f.group_size); };
  std::map<Key, std::size_t> counts;
  for (const MlxModule& m : modules) {
    if (m.form) ++counts[key(*m.form)];
  }
  if (counts.empty()) return;
  const auto most =
      std::max_element(counts.begin(), counts.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  const auto entry = [](const Key& k) {
    return nlohmann::json{{"group_size", std::get<2>(k)},
                          {"bits", std::get<1>(k)},
                          {"mode", std::string(mlx_mode_name(std::get<0>(k)))}};
  };
  nlohmann::json q = entry(most->first);
  for (const MlxModule& m : modules) {
    if (!m.form) {
      q[m.name] = false;
    } else if (key(*m.form) != most->first) {
      q[m.name] = entry(key(*m.form));
    }
  }
  config["quantization"] = q;
  config["quantization_config"] = q;
}

}  // namespace ggufs
