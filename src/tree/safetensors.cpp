// model.safetensors: the whole model in the safetensors format, laid out at mount time; tensor
// data comes spliced (kept dtypes) or decoded block by block (everything else).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ggufs/ggml_type.h"
#include "ggufs/model_views.h"
#include "ggufs/names.h"
#include "ggufs/render.h"

namespace ggufs {
namespace {

// The safetensors format's limit on the JSON header (safetensors' MAX_HEADER_SIZE).
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kOmittedKey = "ggufs.omitted_tensors";

// The safetensors dtype of a ggml type kept as stored, or "" for types converted to float.
std::string_view stored_dtype(std::uint32_t type) {
  switch (type) {
    case GGML_TYPE_F32:
      return "F32";
    case GGML_TYPE_F16:
      return "F16";
    case GGML_TYPE_BF16:
      return "BF16";
    case GGML_TYPE_F64:
      return "F64";
    case GGML_TYPE_I8:
      return "I8";
    case GGML_TYPE_I16:
      return "I16";
    case GGML_TYPE_I32:
      return "I32";
    case GGML_TYPE_I64:
      return "I64";
    default:
      return "";
  }
}

bool is_integer(std::uint32_t type) {
  return type == GGML_TYPE_I8 || type == GGML_TYPE_I16 || type == GGML_TYPE_I32 ||
         type == GGML_TYPE_I64;
}

std::string_view dtype_name(ViewData d) {
  return d == ViewData::kFloat16 ? "F16" : d == ViewData::kBFloat16 ? "BF16" : "F32";
}

// Appends `"key":value` to a JSON object being written, with a comma unless it is the first
// member. Written member by member, not as one nlohmann object: its ordered_json finds a key
// by a linear search, which would make a header of n tensors cost n² comparisons.
void append_member(std::string& out, std::string_view key, const nlohmann::json& value) {
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;  // invalid UTF-8 → U+FFFD
  if (!out.empty() && out.back() != '{') out += ',';
  out += nlohmann::json(key).dump(-1, ' ', false, kReplace);
  out += ':';
  out += value.dump(-1, ' ', false, kReplace);
}

}  // namespace

std::optional<ModelLayout> safetensors_layout(const GgufFile& file, const TreeOptions& options,
                                              std::vector<std::string>& warnings) {
  // Keys are unique in a parsed file; "format" is the format's own.
  std::string meta = "{";
  append_member(meta, "format", "pt");
  for (const KeyValue& kv : file.kv) {
    if (kv.value.type == ValueType::kArray || kv.key == "format" || kv.key == kOmittedKey) {
      continue;
    }
    std::string text = render_metadata_value(kv.value);
    text.pop_back();  // every scalar's file ends in one newline
    append_member(meta, kv.key, text);
  }
  std::string tensors;  // the members after "__metadata__", comma-separated

  ModelLayout out;
  std::vector<std::string> omitted;
  std::uint64_t offset = 0;  // in the byte buffer
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const TensorInfo& t = file.tensors[i];
    const std::string_view kept = t.n_bytes ? stored_dtype(t.type) : "";
    const bool decodes = t.n_bytes && decodes_to_f32(file, t);
    if ((kept.empty() && !decodes) || t.name == "__metadata__") {
      omitted.push_back(t.name);
      continue;
    }
    Piece p;
    p.kind = Piece::Kind::kTensor;
    p.tensor = i;
    std::string_view dtype;
    const bool convert = options.safetensors_dtype != ViewData::kStored && !is_integer(t.type) &&
                         kept != dtype_name(options.safetensors_dtype);
    if (!kept.empty() && !convert) {
      dtype = kept;
      p.size = *t.n_bytes;
      if (!file.big_endian) {  // the stored bytes are the data: spliced
        p.kind = Piece::Kind::kSource;
        p.from = t.file_offset;
        p.shard = t.shard;
      }
    } else {
      p.data = convert ? options.safetensors_dtype : ViewData::kFloat32;
      dtype = dtype_name(p.data);
      p.size = t.n_elements * element_bytes(p.data);
    }
    p.at = offset;  // made absolute below, once the header's size is known
    out.pieces.push_back(p);
    std::vector<std::uint64_t> shape(t.ne.begin(), t.ne.begin() + t.n_dims);
    std::reverse(shape.begin(), shape.end());
    append_member(
        tensors, t.name,
        {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {offset, offset + p.size}}});
    offset += p.size;
  }
  if (!omitted.empty()) {
    std::string names;
    for (std::size_t i = 0; i < omitted.size() && i < 3; ++i) {
      names += fmt::format("{}'{}'", i ? ", " : "", printable(omitted[i]));
    }
    warnings.push_back(fmt::format(
        "model.safetensors leaves out {} tensor(s) that cannot be decoded (or are named "
        "__metadata__): {}{}; listed in its __metadata__ under {}",
        omitted.size(), names, omitted.size() > 3 ? ", ..." : "", kOmittedKey));
    append_member(
        meta, kOmittedKey,
        nlohmann::json(omitted).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  meta += '}';
  std::string json = "{\"__metadata__\":" + meta + (tensors.empty() ? "" : ",") + tensors + "}";
  json.resize((json.size() + 7) / 8 * 8, ' ');
  if (json.size() > kMaxHeaderBytes) {
    warnings.push_back(fmt::format(
        "model.safetensors is not offered: its header would be {} bytes, above the format's "
        "limit of {}",
        json.size(), kMaxHeaderBytes));
    return std::nullopt;
  }
  for (int b = 0; b < 8; ++b) out.text += static_cast<char>((json.size() >> (8 * b)) & 0xff);
  out.text += json;
  const std::size_t n_tensors = out.pieces.size();
  for (Piece& p : out.pieces) p.at += out.text.size();
  out.pieces.insert(out.pieces.begin(),
                    Piece{Piece::Kind::kText, 0, out.text.size(), 0, 0, 0, ViewData::kStored});
  std::erase_if(out.pieces, [](const Piece& p) { return p.size == 0; });
  out.what = fmt::format(
      "safetensors: {} tensors{}", n_tensors,
      options.safetensors_dtype == ViewData::kStored
          ? ""
          : fmt::format(", floating ones as {}", dtype_name(options.safetensors_dtype)));
  return out;
}

}  // namespace ggufs
