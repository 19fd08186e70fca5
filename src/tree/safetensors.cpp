// model.safetensors: the whole model in the safetensors format, laid out at mount time; tensor
// data comes spliced (kept dtypes) or decoded block by block (everything else).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "ggufs/ggml_type.h"
#include "ggufs/model_views.h"
#include "ggufs/names.h"
#include "ggufs/render.h"
#include "safetensors_file.h"

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

// Appends `"key":value` to a JSON object being written, with a comma unless it is the first
// member. Written member by member, not as one nlohmann object: its ordered_json finds a key
// by a linear search, which would make a header of n tensors cost n² comparisons. `key` must be
// valid UTF-8 already (json_keys).
void append_member(std::string& out, std::string_view key, const nlohmann::json& value) {
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;  // invalid UTF-8 → U+FFFD
  if (!out.empty() && out.back() != '{') out += ',';
  out += nlohmann::json(key).dump();
  out += ':';
  out += value.dump(-1, ' ', false, kReplace);
}

// The JSON keys of `names`, distinct: a JSON key must be Unicode text, so a name that is not
// valid UTF-8 gets U+FFFD for its ill-formed bytes, and two such names (or one and a valid
// name) could become one key, which the format forbids (safetensors' loader refuses the file).
// Valid names and `reserved` keep their text; a clash gets "~2", "~3", … (unique_names).
std::vector<std::string> json_keys(const std::vector<std::string_view>& names,
                                   std::initializer_list<std::string_view> reserved) {
  std::vector<std::size_t> order;  // reserved, then the valid names, then the rest
  std::vector<std::string> texts(reserved.begin(), reserved.end());
  for (std::size_t i = 0; i < names.size(); ++i) {
    texts.push_back(valid_utf8(names[i]));
    if (texts.back() == names[i]) order.push_back(i);
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (texts[reserved.size() + i] != names[i]) order.push_back(i);
  }
  std::vector<std::string> ranked(texts.begin(), texts.begin() + reserved.size());
  for (std::size_t i : order) ranked.push_back(texts[reserved.size() + i]);
  ranked = unique_names(std::move(ranked));
  std::vector<std::string> out(names.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    out[order[k]] = std::move(ranked[reserved.size() + k]);
  }
  return out;
}

}  // namespace

std::optional<ModelLayout> lay_out_safetensors(std::string metadata,
                                               const std::vector<SafetensorsTensor>& tensors,
                                               std::string_view file_name,
                                               std::vector<std::string>& warnings) {
  ModelLayout out;
  std::string members;       // the members after "__metadata__", comma-separated
  std::uint64_t offset = 0;  // in the byte buffer
  for (const SafetensorsTensor& t : tensors) {
    const std::uint64_t size = t.size();
    append_member(
        members, t.key,
        {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {offset, offset + size}}});
    for (Piece p : t.pieces) {
      p.at = offset;  // made absolute below, once the header's size is known
      out.pieces.push_back(p);
      offset += p.size;
    }
  }
  std::string json = "{\"__metadata__\":" + metadata + (members.empty() ? "" : ",") + members + "}";
  json.resize((json.size() + 7) / 8 * 8, ' ');
  if (json.size() > kMaxHeaderBytes) {
    warnings.push_back(fmt::format(
        "{} is not offered: its header would be {} bytes, above the format's limit of {}",
        file_name, json.size(), kMaxHeaderBytes));
    return std::nullopt;
  }
  for (int b = 0; b < 8; ++b) out.text += static_cast<char>((json.size() >> (8 * b)) & 0xff);
  out.text += json;
  for (Piece& p : out.pieces) p.at += out.text.size();
  out.pieces.insert(out.pieces.begin(),
                    Piece{Piece::Kind::kText, 0, out.text.size(), 0, 0, 0, ViewData::kStored});
  std::erase_if(out.pieces, [](const Piece& p) { return p.size == 0; });
  return out;
}

std::optional<ModelLayout> safetensors_layout(const GgufFile& file, const TreeOptions& options,
                                              std::vector<std::string>& warnings) {
  // Keys are unique in a parsed file; "format" is the format's own.
  std::vector<const KeyValue*> scalars;
  std::vector<std::string_view> key_names;
  for (const KeyValue& kv : file.kv) {
    if (kv.value.type == ValueType::kArray || kv.key == "format" || kv.key == kOmittedKey) {
      continue;
    }
    scalars.push_back(&kv);
    key_names.push_back(kv.key);
  }
  const std::vector<std::string> meta_keys = json_keys(key_names, {"format", kOmittedKey});
  std::string meta = "{";
  append_member(meta, "format", "pt");
  for (std::size_t k = 0; k < scalars.size(); ++k) {
    std::string text = render_metadata_value(scalars[k]->value);
    text.pop_back();  // every scalar's file ends in one newline
    append_member(meta, meta_keys[k], text);
  }

  // Tensors by element size, largest first (GGUF order among equals), so that the buffer, which
  // begins 8-byte aligned, keeps every tensor aligned to its element size whatever odd-sized
  // F16 or I8 tensors the model has: torch's views of the buffer require it. safetensors' own
  // writer orders by dtype the same way (safetensors/src/tensor.rs, prepare).
  struct Planned {
    std::size_t tensor;
    Piece piece;
    std::string_view dtype;
    std::uint32_t element_bytes;
  };
  std::vector<Planned> planned;
  std::vector<std::string_view> tensor_names;
  std::vector<std::string> omitted;
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
    std::uint32_t bytes_each;
    const bool convert = options.safetensors_dtype != ViewData::kStored && !is_integer(t.type) &&
                         kept != safetensors_dtype_name(options.safetensors_dtype);
    if (!kept.empty() && !convert) {
      dtype = kept;
      bytes_each = type_traits(t.type)->type_size;  // a kept dtype has one element per block
      p.size = *t.n_bytes;
      if (!file.big_endian) {  // the stored bytes are the data: spliced
        p.kind = Piece::Kind::kSource;
        p.from = t.file_offset;
        p.shard = t.shard;
      }
    } else {
      p.data = convert ? options.safetensors_dtype : ViewData::kFloat32;
      dtype = safetensors_dtype_name(p.data);
      bytes_each = element_bytes(p.data);
      p.size = t.n_elements * bytes_each;
    }
    planned.push_back({i, p, dtype, bytes_each});
    tensor_names.push_back(t.name);
  }
  const std::vector<std::string> keys = json_keys(tensor_names, {"__metadata__"});
  std::vector<std::size_t> order(planned.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return planned[a].element_bytes > planned[b].element_bytes;
  });
  std::vector<SafetensorsTensor> tensors;
  for (const std::size_t k : order) {
    const TensorInfo& t = file.tensors[planned[k].tensor];
    std::vector<std::uint64_t> shape(t.ne.begin(), t.ne.begin() + t.n_dims);
    std::reverse(shape.begin(), shape.end());
    tensors.push_back({keys[k], planned[k].dtype, std::move(shape), {planned[k].piece}});
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
    // Written as text: a json array of every name would cost far more, and allocate again when
    // destroyed.
    std::string list = "[";
    for (std::size_t i = 0; i < omitted.size(); ++i) {
      if (i) list += ',';
      append_json_string(list, omitted[i]);
    }
    list += ']';
    append_member(meta, kOmittedKey, list);
  }
  meta += '}';
  std::optional<ModelLayout> out =
      lay_out_safetensors(std::move(meta), tensors, "model.safetensors", warnings);
  if (!out) return out;
  out->what = fmt::format("safetensors: {} tensors{}", tensors.size(),
                          options.safetensors_dtype == ViewData::kStored
                              ? ""
                              : fmt::format(", floating ones as {}",
                                            safetensors_dtype_name(options.safetensors_dtype)));
  return out;
}

}  // namespace ggufs
