// The text files of the tree: metadata/<key>, gguf.json, tensors.tsv and the .npy header.
// Every function here is pure: it renders from the parsed model and never touches the file.
#include "ggufs/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <variant>

#include "ggufs/ggml_type.h"

namespace ggufs {
namespace {

// Ordered so that gguf.json lists keys in file order, not alphabetically.
using Json = nlohmann::ordered_json;

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// Shortest decimal that reads back as the same float (or double): fmt's default for "{}".
// Non-finite values come out as "nan", "-nan", "inf" and "-inf".
template <class T>
void append_number(std::string& out, T x) {
  fmt::format_to(std::back_inserter(out), "{}", x);
}

void append_json_array(std::string& out, const Array& a);

// One element inside a JSON array line: strings quoted and escaped, nested arrays recursive,
// non-finite floats as the strings "nan", "inf", "-inf" so the line stays valid JSON.
void append_json_item(std::string& out, const Value& v) {
  auto append_float = [&out](auto x) {
    if (std::isfinite(x)) {
      append_number(out, x);
    } else {
      out += std::isnan(x) ? "\"nan\"" : (x > 0 ? "\"inf\"" : "\"-inf\"");
    }
  };
  std::visit(Overloaded{
                 [&](std::uint64_t x) { append_number(out, x); },
                 [&](std::int64_t x) { append_number(out, x); },
                 [&](float x) { append_float(x); },
                 [&](double x) { append_float(x); },
                 [&](bool x) { out += x ? "true" : "false"; },
                 [&](const std::string& s) {
                   out += '"';
                   append_json_escaped(out, s);
                   out += '"';
                 },
                 [&](const Array& a) { append_json_array(out, a); },
             },
             v.data);
}

void append_json_array(std::string& out, const Array& a) {
  out += '[';
  for (std::size_t i = 0; i < a.items.size(); ++i) {
    if (i) out += ',';
    append_json_item(out, a.items[i]);
  }
  out += ']';
}

// The text of one value without its newline. As a whole file (`top_level`) a string is its raw
// bytes; as an array line it is JSON-escaped so that one line is always one element.
void append_value_text(std::string& out, const Value& v, bool top_level) {
  std::visit(Overloaded{
                 [&](std::uint64_t x) { append_number(out, x); },
                 [&](std::int64_t x) { append_number(out, x); },
                 [&](float x) { append_number(out, x); },
                 [&](double x) { append_number(out, x); },
                 [&](bool x) { out += x ? "true" : "false"; },
                 [&](const std::string& s) {
                   if (top_level) {
                     out += s;
                   } else {
                     append_json_escaped(out, s);
                   }
                 },
                 [&](const Array& a) { append_json_array(out, a); },
             },
             v.data);
}

Json json_float(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

Json json_value(const Value& v);

// The body of an array value: element type, count and elements, each nested array as an object
// of the same shape (with "type": "array").
void add_array_fields(Json& j, const Array& a) {
  j["element_type"] = value_type_name(a.elem_type);
  j["count"] = a.items.size();
  Json items = Json::array();
  for (const Value& item : a.items) {
    if (const Array* nested = std::get_if<Array>(&item.data)) {
      Json sub = Json::object();
      sub["type"] = value_type_name(ValueType::kArray);
      add_array_fields(sub, *nested);
      items.push_back(std::move(sub));
    } else {
      items.push_back(json_value(item));
    }
  }
  j["value"] = std::move(items);
}

// A scalar value as JSON. 64-bit integers keep their exact value (nlohmann stores them as
// integers, never as doubles); float32 is widened to double, which is exact.
Json json_value(const Value& v) {
  return std::visit(
      Overloaded{
          [](std::uint64_t x) { return Json(x); }, [](std::int64_t x) { return Json(x); },
          [](float x) { return json_float(static_cast<double>(x)); },
          [](double x) { return json_float(x); }, [](bool x) { return Json(x); },
          [](const std::string& s) { return Json(s); },
          [](const Array&) { return Json(); },  // handled by add_array_fields
      },
      v.data);
}

}  // namespace

std::string render_metadata_value(const Value& v) {
  std::string out;
  if (const Array* a = std::get_if<Array>(&v.data)) {
    // One element per line, each line ending in '\n'; no elements, no bytes. String elements go
    // through append_json_escaped, so '"' becomes \" too: not needed to keep one element per
    // line, but it makes every line exactly the inside of a JSON string literal, which a reader
    // can unescape with any JSON library (and it matches gguf.json and tensors.tsv).
    for (const Value& item : a->items) {
      append_value_text(out, item, /*top_level=*/false);
      out += '\n';
    }
    return out;
  }
  // A scalar: its text and one appended newline, always, so that the value is the file minus
  // its last byte even for a string that itself ends in a newline.
  append_value_text(out, v, /*top_level=*/true);
  out += '\n';
  return out;
}

std::string render_gguf_json(const GgufFile& f) {
  Json doc = Json::object();
  Json& header = doc["header"];
  header["version"] = f.version;
  header["tensor_count"] = f.tensor_count;
  header["metadata_kv_count"] = f.kv_count;
  header["alignment"] = f.alignment;
  header["data_offset"] = f.data_offset;
  header["file_size"] = f.file_size;

  Json metadata = Json::array();
  for (const KeyValue& kv : f.kv) {
    Json j = Json::object();
    j["key"] = kv.key;
    j["type"] = value_type_name(kv.value.type);
    if (const Array* a = std::get_if<Array>(&kv.value.data)) {
      add_array_fields(j, *a);
    } else {
      j["value"] = json_value(kv.value);
    }
    metadata.push_back(std::move(j));
  }
  doc["metadata"] = std::move(metadata);

  Json tensors = Json::array();
  for (const TensorInfo& t : f.tensors) {
    Json j = Json::object();
    j["name"] = t.name;
    j["type"] = type_display_name(t.type);
    j["type_id"] = t.type;
    Json ne = Json::array();
    for (std::uint32_t d = 0; d < std::min<std::uint32_t>(t.n_dims, 4); ++d) ne.push_back(t.ne[d]);
    j["ne"] = std::move(ne);
    j["n_elements"] = t.n_elements;
    j["offset"] = t.offset;
    j["file_offset"] = t.file_offset;
    j["n_bytes"] = t.n_bytes ? Json(*t.n_bytes) : Json();
    tensors.push_back(std::move(j));
  }
  doc["tensors"] = std::move(tensors);

  // Indented by two spaces (one array element per line, so grep and less work on big
  // vocabularies); UTF-8 kept as is, invalid bytes replaced by U+FFFD.
  std::string out = doc.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  out += '\n';
  return out;
}

std::string render_tensors_tsv(const GgufFile& f) {
  std::string out = "name\ttype\tne\tn_elements\tfile_offset\tbytes\n";
  for (const TensorInfo& t : f.tensors) {
    // Every name goes through the JSON escaper: ordinary names are unchanged, and escaping
    // backslashes and quotes as well as control bytes keeps the column unambiguous.
    append_json_escaped(out, t.name);
    out += '\t';
    out += type_display_name(t.type);
    out += '\t';
    for (std::uint32_t d = 0; d < std::min<std::uint32_t>(t.n_dims, 4); ++d) {
      if (d) out += ',';
      append_number(out, t.ne[d]);
    }
    fmt::format_to(std::back_inserter(out), "\t{}\t{}\t", t.n_elements, t.file_offset);
    if (t.n_bytes) append_number(out, *t.n_bytes);
    out += '\n';
  }
  return out;
}

std::string npy_header(std::span<const std::uint64_t> shape) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) dict += ", ";
    append_number(dict, shape[i]);
  }
  if (shape.size() == 1) dict += ',';  // a Python 1-tuple
  dict += "), }";

  constexpr char kMagic[] = "\x93NUMPY";
  constexpr std::size_t kMagicSize = sizeof(kMagic) - 1;
  // Version 1.0 has a uint16 header length. Only a shape of thousands of dimensions could need
  // more; NumPy then writes version 2.0 (uint32 length), and so do we.
  std::size_t prefix = kMagicSize + 2 + 2;
  std::size_t unpadded = prefix + dict.size() + 1;  // + the final '\n'
  std::size_t total = (unpadded + 63) / 64 * 64;
  const bool v2 = total - prefix > 0xffff;
  if (v2) {
    prefix += 2;
    unpadded += 2;
    total = (unpadded + 63) / 64 * 64;
  }
  const std::size_t header_len = total - prefix;

  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) {
    out += static_cast<char>((header_len >> (8 * i)) & 0xff);  // little-endian length
  }
  out += dict;
  out.append(total - unpadded, ' ');
  out += '\n';
  return out;
}

std::string type_display_name(std::uint32_t id) {
  if (const TypeTraits* t = type_traits(id)) return std::string(t->name);
  return fmt::format("type_{}", id);
}

void append_json_escaped(std::string& out, std::string_view s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          // Lower-case hex, as nlohmann::json writes it, so gguf.json and the text files agree.
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        } else {
          out += ch;
        }
    }
  }
}

}  // namespace ggufs
