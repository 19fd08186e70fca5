#include "ggufs/tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <future>

#include "ggufs/ggml_type.h"
#include "ggufs/names.h"
#include "ggufs/render.h"

namespace ggufs {

namespace {

Node make_node(std::string name, Ino parent, NodeKind kind, std::uint64_t size = 0,
               std::size_t tensor = 0, std::string text = {}) {
  Node n;
  n.name = std::move(name);
  n.parent = parent;
  n.kind = kind;
  n.size = size;
  n.tensor = tensor;
  n.text = std::move(text);
  return n;
}

}  // namespace

bool decodes_to_f32(const GgufFile& file, const TensorInfo& t) {
  const TypeTraits* tr = type_traits(t.type);
  return tr && tr->to_float && (!file.big_endian || tr->block_size == 1);
}

Tree::Tree(const GgufFile& file) {
  nodes_.push_back(make_node("", kRootIno, NodeKind::kDirectory));
  auto text = [&](Ino parent, std::string name, std::string content) {
    const std::uint64_t size = content.size();
    add(parent, make_node(std::move(name), parent, NodeKind::kText, size, 0, std::move(content)));
  };
  auto dir = [&](std::string name) {
    return add(kRootIno, make_node(std::move(name), kRootIno, NodeKind::kDirectory));
  };

  // gguf.json is the largest text (a vocabulary, indented): rendered on the other core while
  // this one renders the rest; its node is filled in at the end.
  std::future<std::string> json = std::async(std::launch::async, render_gguf_json, std::cref(file));
  const Ino json_ino = add(kRootIno, make_node("gguf.json", kRootIno, NodeKind::kText));
  text(kRootIno, "tensors.tsv", render_tensors_tsv(file));
  const Ino metadata = dir("metadata");
  const Ino raw = dir("raw");
  const Ino f32 = dir("f32");
  const Ino npy = dir("npy");

  for (std::size_t i = 0; i < file.kv.size(); ++i) {
    text(metadata, key_file_name(file.kv[i].key, i), render_metadata_value(file.kv[i].value));
  }

  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const TensorInfo& t = file.tensors[i];
    if (!t.n_bytes) continue;  // removed or unknown type: nothing can be served
    const std::string name = file_name_for(t.name);
    add(raw, make_node(name, raw, NodeKind::kRaw, *t.n_bytes, i));
    if (!decodes_to_f32(file, t)) continue;
    const std::uint64_t f32_bytes = t.n_elements * sizeof(float);
    add(f32, make_node(name, f32, NodeKind::kDecoded, f32_bytes, i));
    // NumPy order is ne reversed: the slowest dimension first.
    std::vector<std::uint64_t> shape(t.ne.begin(), t.ne.begin() + t.n_dims);
    std::reverse(shape.begin(), shape.end());
    std::string header = npy_header(shape);
    const std::uint64_t size = header.size() + f32_bytes;
    add(npy, make_node(name + ".npy", npy, NodeKind::kDecoded, size, i, std::move(header)));
  }

  Node& json_node = nodes_[json_ino - 1];
  json_node.text = json.get();
  json_node.size = json_node.text.size();
}

Ino Tree::add(Ino parent, Node n) {
  const Ino ino = nodes_.size() + 1;
  // Names are unique within a directory: keys and tensor names are unique and file_name_for is
  // injective, so the first insertion always wins.
  index_.emplace(fmt::format("{}/{}", parent, n.name), ino);
  nodes_[parent - 1].children.push_back(ino);
  nodes_.push_back(std::move(n));
  return ino;
}

const Node* Tree::node(Ino ino) const {
  if (ino < 1 || ino > nodes_.size()) return nullptr;
  return &nodes_[ino - 1];
}

Ino Tree::lookup(Ino parent, std::string_view name) const {
  const auto it = index_.find(fmt::format("{}/{}", parent, name));
  return it == index_.end() ? 0 : it->second;
}

}  // namespace ggufs
