// The text files of the tree: metadata/<key>, gguf.json, tensors.tsv and the .npy header.
// Every function here is pure: it renders from the parsed model and never touches the file.
#include "ggufs/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "ggufs/ggml_type.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

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
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i) out += ',';
    if (a.elem_type() == ValueType::kString) {
      out += '"';
      append_json_escaped(out, a.string_at(i));
      out += '"';
    } else if (a.elem_type() == ValueType::kArray) {
      append_json_array(out, a.array_at(i));
    } else {
      append_json_item(out, a.at(i));
    }
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

// Writes JSON text in the layout of a two-space indented dump: one member or element per line,
// empty containers as {} and []. gguf.json is written with it straight into one string: a
// document tree of a 256 000-token vocabulary would cost more time and memory than the parse.
class JsonOut {
 public:
  explicit JsonOut(std::string& out) : out_(out) {}
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view k) {
    next();
    quoted(k);
    out_ += ": ";
    after_key_ = true;
  }
  void string(std::string_view s) {
    next();
    quoted(s);
  }
  void null() {
    next();
    out_ += "null";
  }
  void boolean(bool b) {
    next();
    out_ += b ? "true" : "false";
  }
  template <class T>
  void integer(T x) {
    next();
    append_number(out_, x);
  }
  template <class T>
  void integer_member(std::string_view k, T x) {
    key(k);
    integer(x);
  }
  // Non-finite values are not JSON numbers: they become the strings "nan", "inf" and "-inf".
  // Others are the shortest decimal that reads back as the same double, with ".0" added to an
  // integral one so that it still reads as a float.
  void real(double x) {
    if (std::isnan(x)) return string("nan");
    if (std::isinf(x)) return string(x > 0 ? "inf" : "-inf");
    next();
    const std::size_t start = out_.size();
    append_number(out_, x);
    if (out_.find_first_of(".e", start) == std::string::npos) out_ += ".0";
  }

 private:
  // Before a member or element: the separator and the indentation of its own line.
  void next() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (counts_.empty()) return;
    if (counts_.back()++ > 0) out_ += ',';
    newline(counts_.size());
  }
  void open(char c) {
    next();
    out_ += c;
    counts_.push_back(0);
  }
  void close(char c) {
    const bool empty = counts_.back() == 0;
    counts_.pop_back();
    if (!empty) newline(counts_.size());
    out_ += c;
  }
  void newline(std::size_t depth) {
    out_ += '\n';
    out_.append(2 * depth, ' ');
  }
  void quoted(std::string_view s) { append_json_string(out_, s); }
  std::string& out_;
  std::vector<std::size_t> counts_;  // members or elements written so far, per open container
  bool after_key_ = false;
};

// A value as JSON: scalars as numbers, booleans and strings (float32 widened to double, which
// is exact); an array as an object with its element type, count and elements, nested arrays
// the same way (with "type": "array").
void write_value(JsonOut& j, const Value& v);

void write_array_fields(JsonOut& j, const Array& a) {
  j.key("element_type");
  j.string(value_type_name(a.elem_type()));
  j.integer_member("count", a.size());
  j.key("value");
  j.begin_array();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a.elem_type() == ValueType::kString) {
      j.string(a.string_at(i));
    } else if (a.elem_type() == ValueType::kArray) {
      j.begin_object();
      j.key("type");
      j.string(value_type_name(ValueType::kArray));
      write_array_fields(j, a.array_at(i));
      j.end_object();
    } else {
      write_value(j, a.at(i));
    }
  }
  j.end_array();
}

void write_value(JsonOut& j, const Value& v) {
  std::visit(Overloaded{
                 [&](std::uint64_t x) { j.integer(x); }, [&](std::int64_t x) { j.integer(x); },
                 [&](float x) { j.real(static_cast<double>(x)); }, [&](double x) { j.real(x); },
                 [&](bool x) { j.boolean(x); }, [&](const std::string& s) { j.string(s); },
                 [&](const Array&) { j.null(); },  // written by write_array_fields
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
    // Sized up front (escapes aside) so a large vocabulary is not copied as the text grows.
    const bool strings = a->elem_type() == ValueType::kString;
    std::size_t estimate = 0;
    for (std::size_t i = 0; i < a->size(); ++i) {
      estimate += (strings ? a->string_at(i).size() : 24) + 1;
    }
    out.reserve(estimate);
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (strings) {
        append_json_escaped(out, a->string_at(i));
      } else if (a->elem_type() == ValueType::kArray) {
        append_json_array(out, a->array_at(i));
      } else {
        append_value_text(out, a->at(i), /*top_level=*/false);
      }
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
  std::string out;
  // The text is about the size of the header plus indentation: twice the header is usually
  // enough to write it without copying it as it grows. The header is what the file holds before
  // its data section: a huge general.alignment puts data_offset far past a small file's end,
  // and a reservation of that size, though untouched, is address space (RLIMIT_AS) all the same.
  const std::uint64_t header = std::min(f.data_offset, f.file_size);
  out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(2 * header, 1u << 30)) + 4096);
  JsonOut j(out);
  j.begin_object();
  j.key("header");
  j.begin_object();
  j.integer_member("version", f.version);
  j.key("byte_order");
  j.string(f.big_endian ? "big-endian" : "little-endian");
  j.integer_member("tensor_count", f.tensor_count);
  j.integer_member("metadata_kv_count", f.kv_count);
  j.integer_member("alignment", f.alignment);
  j.integer_member("data_offset", f.data_offset);
  j.integer_member("file_size", f.file_size);
  j.end_object();

  j.key("metadata");
  j.begin_array();
  for (const KeyValue& kv : f.kv) {
    j.begin_object();
    j.key("key");
    j.string(kv.key);
    j.key("type");
    j.string(value_type_name(kv.value.type));
    if (const Array* a = std::get_if<Array>(&kv.value.data)) {
      write_array_fields(j, *a);
    } else {
      j.key("value");
      write_value(j, kv.value);
    }
    j.end_object();
  }
  j.end_array();

  j.key("tensors");
  j.begin_array();
  for (const TensorInfo& t : f.tensors) {
    j.begin_object();
    j.key("name");
    j.string(t.name);
    j.key("type");
    j.string(type_display_name(t.type));
    j.integer_member("type_id", t.type);
    j.key("ne");
    j.begin_array();
    for (std::uint32_t d = 0; d < std::min<std::uint32_t>(t.n_dims, 4); ++d) j.integer(t.ne[d]);
    j.end_array();
    j.integer_member("n_elements", t.n_elements);
    j.integer_member("offset", t.offset);
    j.integer_member("file_offset", t.file_offset);
    j.key("n_bytes");
    if (t.n_bytes) {
      j.integer(*t.n_bytes);
    } else {
      j.null();
    }
    if (!f.shards.empty()) j.integer_member("shard", t.shard);
    j.end_object();
  }
  j.end_array();

  if (!f.shards.empty()) {  // a split model: its files, in order (tensors name them by index)
    j.key("shards");
    j.begin_array();
    for (const Shard& s : f.shards) {
      j.begin_object();
      j.key("path");
      j.string(s.path);
      j.integer_member("tensor_count", s.tensor_count);
      j.integer_member("data_offset", s.data_offset);
      j.integer_member("file_size", s.file_size);
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();
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

std::string npy_header(std::span<const std::uint64_t> shape, std::string_view descr) {
  std::string dict = "{'descr': '";
  dict += descr;
  dict += "', 'fortran_order': False, 'shape': (";
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

}  // namespace ggufs
