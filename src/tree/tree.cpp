#include "ggufs/tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <future>

#include "ggufs/error.h"
#include "ggufs/folder_views.h"
#include "ggufs/ggml_type.h"
#include "ggufs/model_views.h"
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

Tree::Tree(const GgufFile& file, const TreeOptions& options, const ProjectorPair* pair) {
  nodes_.push_back(make_node("", kRootIno, NodeKind::kDirectory));
  auto text = [&](Ino parent, std::string name, std::string content) {
    const std::uint64_t size = content.size();
    add(parent, make_node(std::move(name), parent, NodeKind::kText, size, 0, std::move(content)));
  };
  auto composite = [&](Ino parent, std::string name, ModelLayout layout) {
    Node n = make_node(std::move(name), parent, NodeKind::kComposite, layout.size());
    n.text = std::move(layout.text);
    n.pieces = std::move(layout.pieces);
    n.what = std::move(layout.what);
    add(parent, std::move(n));
  };
  auto dir = [&](std::string name) {
    return add(kRootIno, make_node(std::move(name), kRootIno, NodeKind::kDirectory));
  };

  // gguf.json is the largest text (a vocabulary, indented): rendered on the other core while
  // this one renders the rest; its node is filled in at the end. Where no thread can start (its
  // stack cannot be mapped under an address-space limit), the task runs deferred, on this thread
  // at get(): async | deferred asks for that, and libstdc++ falls back so on EAGAIN (<future>,
  // std::async) rather than throw.
  constexpr std::launch kOwnThread = std::launch::async | std::launch::deferred;
  std::future<std::string> json = std::async(kOwnThread, render_gguf_json, std::cref(file));
  const Ino json_ino = add(kRootIno, make_node("gguf.json", kRootIno, NodeKind::kText));
  // The folder views too (a tokenizer.json of a large vocabulary), on a thread of their own: the
  // model rendered once (render_hf), then each folder laid out from it.
  struct Laid {
    FolderResult result;
    std::vector<std::string> warnings;
  };
  const GgufFile& folder_file = pair && pair->paired ? *pair->paired : file;
  const ProjectorPair none;
  const ProjectorPair& with = pair ? *pair : none;
  std::future<std::vector<Laid>> folders =
      std::async(kOwnThread, [&file, &folder_file, &with, &options] {
        HfRendering hf = render_hf(file, with.paired, with.projector);
        if (!with.projector && !with.unpaired.empty() && hf.model.model) {
          hf.vision = HfModelResult{std::nullopt, std::string(with.unpaired)};
        }
        std::vector<Laid> laid(std::size(kFolderViews));
        for (std::size_t v = 0; v < laid.size(); ++v) {
          const FolderView& view = kFolderViews[v];
          if (view.applies && !view.applies(folder_file)) continue;
          try {
            laid[v].result = view.layout(folder_file, hf, options, laid[v].warnings);
          } catch (const std::exception& e) {
            // Memory ran out (or a limit of the process was hit) while laying it out: the model is
            // served without this folder, its warning saying why.
            laid[v] = Laid{};
            laid[v].result.reason =
                not_enough_memory(e, "lay it out")
                    .value_or(fmt::format("laying it out failed: {}", e.what()));
          }
        }
        return laid;
      });
  text(kRootIno, "tensors.tsv", render_tensors_tsv(file));
  const Ino metadata = dir("metadata");
  std::vector<Ino> view_dirs;
  for (const TensorView& v : kTensorViews) view_dirs.push_back(dir(std::string(v.folder)));

  for (std::size_t i = 0; i < file.kv.size(); ++i) {
    text(metadata, key_file_name(file.kv[i].key, i), render_metadata_value(file.kv[i].value));
  }

  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const TensorInfo& t = file.tensors[i];
    if (!t.n_bytes) continue;  // removed or unknown type: nothing can be served
    const std::string name = file_name_for(t.name);
    const bool decodes = decodes_to_f32(file, t);
    for (std::size_t v = 0; v < std::size(kTensorViews); ++v) {
      const TensorView& view = kTensorViews[v];
      if (view.data != ViewData::kStored && !decodes) continue;
      Node n = make_node(
          name + std::string(view.suffix), view_dirs[v],
          view.data == ViewData::kStored ? NodeKind::kRaw : NodeKind::kDecoded,
          view.data == ViewData::kStored ? *t.n_bytes : t.n_elements * view.element_bytes(), i);
      n.view = &view;
      if (view.npy_header) {
        // NumPy order is ne reversed: the slowest dimension first.
        std::vector<std::uint64_t> shape(t.ne.begin(), t.ne.begin() + t.n_dims);
        std::reverse(shape.begin(), shape.end());
        n.text = npy_header(shape, view.data == ViewData::kFloat16 ? "<f2" : "<f4");
        n.size += n.text.size();
      }
      add(view_dirs[v], std::move(n));
    }
  }

  for (const ModelView& view : kModelViews) {
    std::optional<ModelLayout> layout = view.layout(file, options, warnings_);
    if (layout) composite(kRootIno, std::string(view.name), std::move(*layout));
  }

  std::vector<Laid> laid = folders.get();
  for (std::size_t v = 0; v < std::size(kFolderViews); ++v) {
    const FolderView& view = kFolderViews[v];
    if (view.applies && !view.applies(folder_file)) continue;
    warnings_.insert(warnings_.end(), laid[v].warnings.begin(), laid[v].warnings.end());
    FolderResult& result = laid[v].result;
    if (!result.folder) {
      warnings_.push_back(fmt::format("{}/ is not offered: {}", view.name, result.reason));
      nodes_[kRootIno - 1].xattrs.emplace_back(view.absent_xattr,
                                               fmt::format("not offered: {}", result.reason));
      continue;
    }
    const Ino folder = dir(std::string(view.name));
    nodes_[folder - 1].what = std::move(result.folder->what);
    for (FolderFile& f : result.folder->files) {
      if (f.layout) {
        composite(folder, std::move(f.name), std::move(*f.layout));
      } else {
        text(folder, std::move(f.name), std::move(f.text));
      }
    }
  }

  Node& json_node = nodes_[json_ino - 1];
  json_node.text = json.get();
  json_node.size = json_node.text.size();
}

Tree Tree::error_folder(std::string message) {
  Tree t;
  t.nodes_.push_back(make_node("", kRootIno, NodeKind::kDirectory));
  message += '\n';
  const std::uint64_t size = message.size();
  t.add(kRootIno, make_node("error", kRootIno, NodeKind::kText, size, 0, std::move(message)));
  return t;
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

bool computed_bytes(const Node& n) {
  if (n.kind == NodeKind::kDecoded) return true;
  return n.kind == NodeKind::kComposite &&
         std::any_of(n.pieces.begin(), n.pieces.end(), [](const Piece& p) {
           return p.kind != Piece::Kind::kText && p.kind != Piece::Kind::kZeros &&
                  p.kind != Piece::Kind::kSource;
         });
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
