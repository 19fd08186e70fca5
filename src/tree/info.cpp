#include "ggufs/info.h"

#include <fmt/format.h>

#include <map>

#include "ggufs/folder_views.h"
#include "ggufs/model_views.h"
#include "ggufs/names.h"
#include "ggufs/render.h"  // render_metadata_value, type_display_name

namespace ggufs {
namespace {

constexpr std::size_t kMaxStringBytes = 60;  // longer strings are cut, as gguf-dump does
constexpr std::size_t kMaxArrayItems = 5;    // longer arrays show their first elements

// A string for the terminal: quoted, control and invalid bytes escaped by printable().
std::string quoted(std::string_view s) {
  const bool cut = s.size() > kMaxStringBytes;
  // fmt, not operator+: GCC 12 at -O3 reports a false -Wrestrict inside "\"" + std::string.
  return fmt::format("\"{}{}", printable(cut ? s.substr(0, kMaxStringBytes) : s),
                     cut ? "\"…" : "\"");
}

// One scalar as text: numbers and booleans as in metadata/, strings quoted.
std::string scalar_text(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v.data)) return quoted(*s);
  std::string text = render_metadata_value(v);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

std::string array_text(const Array& a) {
  std::string out = "[";
  const std::size_t shown = std::min(a.size(), kMaxArrayItems);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    if (a.elem_type() == ValueType::kString) {
      out += quoted(a.string_at(i));
    } else if (a.elem_type() == ValueType::kArray) {
      out += array_text(a.array_at(i));
    } else {
      out += scalar_text(a.at(i));
    }
  }
  if (a.size() > shown) out += ", ...";
  return out + "]";
}

std::string ne_text(const TensorInfo& t) {
  std::string out;
  for (std::uint32_t d = 0; d < t.n_dims; ++d) out += fmt::format("{}{}", d ? " x " : "", t.ne[d]);
  return out.empty() ? "scalar" : out;
}

struct TypeTotals {
  std::uint64_t tensors = 0, elements = 0, bytes = 0;
};

std::string bpw(const TypeTotals& t) {
  return t.elements ? fmt::format("{:.4f}", 8.0 * static_cast<double>(t.bytes) /
                                                static_cast<double>(t.elements))
                    : "-";
}

}  // namespace

std::string render_info(const GgufFile& f) {
  std::string out;
  auto line = [&out](std::string s) { out += s + '\n'; };
  line(fmt::format("{}: GGUF version {}, {}", printable(f.path), f.version,
                   f.big_endian ? "big-endian" : "little-endian"));
  line(
      fmt::format("  {} tensors, {} metadata key/values, alignment {}, data section at byte {}, "
                  "file size {} bytes",
                  f.tensor_count, f.kv_count, f.alignment, f.data_offset, f.file_size));

  for (std::size_t i = 0; i < f.shards.size(); ++i) {
    line(fmt::format("  shard {} of {}: {} ({} tensors, {} bytes)", i + 1, f.shards.size(),
                     printable(f.shards[i].path), f.shards[i].tensor_count, f.shards[i].file_size));
  }
  line(fmt::format("\nmetadata: {} key/values", f.kv.size()));
  for (std::size_t i = 0; i < f.kv.size(); ++i) {
    const KeyValue& kv = f.kv[i];
    std::string type(value_type_name(kv.value.type));
    std::size_t count = 1;
    std::string value;
    if (const auto* a = std::get_if<Array>(&kv.value.data)) {
      type = fmt::format("[{}]", value_type_name(a->elem_type()));
      count = a->size();
      value = array_text(*a);
    } else {
      value = scalar_text(kv.value);
    }
    line(fmt::format("  {:5}: {:10} | {:8} | {} = {}", i + 1, type, count, printable(kv.key),
                     value));
  }

  line(fmt::format("\ntensors: {}", f.tensors.size()));
  line(fmt::format("  {:>5}  {:8} | {:24} | {:>12} | {:>12} | {:>12} | {}", "#", "type", "ne",
                   "elements", "bytes", "offset", "name"));
  std::map<std::string, TypeTotals> by_type;
  TypeTotals total;
  for (std::size_t i = 0; i < f.tensors.size(); ++i) {
    const TensorInfo& t = f.tensors[i];
    const std::string type = type_display_name(t.type);
    line(fmt::format("  {:5}: {:8} | {:24} | {:12} | {:>12} | {:12} | {}", i + 1, type, ne_text(t),
                     t.n_elements, t.n_bytes ? fmt::format("{}", *t.n_bytes) : "?", t.file_offset,
                     printable(t.name)));
    if (!t.n_bytes) continue;
    for (TypeTotals* s : {&by_type[type], &total}) {
      ++s->tensors;
      s->elements += t.n_elements;
      s->bytes += *t.n_bytes;
    }
  }

  line("\nbits per weight (8 × bytes / elements):");
  line(fmt::format("  {:8} | {:>7} | {:>14} | {:>14} | {:>8}", "type", "tensors", "elements",
                   "bytes", "bpw"));
  for (const auto& [type, s] : by_type) {
    line(fmt::format("  {:8} | {:7} | {:14} | {:14} | {:>8}", type, s.tensors, s.elements, s.bytes,
                     bpw(s)));
  }
  line(fmt::format("  {:8} | {:7} | {:14} | {:14} | {:>8}", "total", total.tensors, total.elements,
                   total.bytes, bpw(total)));

  // What a mount would offer at its root (with the default options).
  line("\nwhole-model views (at the mount's root):");
  for (const ModelView& view : kModelViews) {
    std::vector<std::string> warnings;
    const std::optional<ModelLayout> layout = view.layout(f, {}, warnings);
    line(layout ? fmt::format("  {:18} {:>14} bytes  {}", view.name, layout->size(), layout->what)
                : fmt::format("  {:18} {}", view.name,
                              warnings.empty() ? "not offered" : warnings.back()));
  }
  line("\nfolder views (at the mount's root):");
  const HfRendering hf = render_hf(f);
  for (const FolderView& view : kFolderViews) {
    if (view.applies && !view.applies(f)) continue;
    std::vector<std::string> warnings;
    const FolderResult r = view.layout(f, hf, {}, warnings);
    const std::string name = fmt::format("{}/", view.name);
    line(r.folder ? fmt::format("  {:18} {}", name, r.folder->what)
                  : fmt::format("  {:18} not offered: {}", name, r.reason));
    for (const std::string& w : warnings) line(fmt::format("  {:18} {}", "", w));
  }
  return out;
}

}  // namespace ggufs
