#include <fmt/format.h>
#include <malloc.h>
#include <sys/stat.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "ggufs/ggml_type.h"
#include "ggufs/http_source.h"
#include "ggufs/library.h"
#include "ggufs/platform.h"
#include "ggufs/remote_location.h"
#include "ggufs/render.h"  // type_display_name

namespace ggufs {
namespace {

// The model's sources, then its projector's (paired_file's shard order).
std::vector<const ByteSource*> sources_of(const Model& m) {
  std::vector<const ByteSource*> out;
  for (const auto& s : m.sources) out.push_back(s.get());
  if (m.projector) {
    for (const auto& s : m.projector->sources) out.push_back(s.get());
  }
  return out;
}

std::optional<GgufFile> paired_of(const Model& m) {
  if (!m.projector) return std::nullopt;
  return paired_file(m);
}

// The model's tree; with a projector, its folder views of the pair.
Tree tree_of(const Model& m, const std::optional<GgufFile>& paired, const TreeOptions& options) {
  if (!paired) {
    const ProjectorPair unpaired{nullptr, nullptr, m.unpaired};
    return Tree(m.file, options, &unpaired);
  }
  const ProjectorPair pair{&*paired, &m.projector->file, {}};
  return Tree(m.file, options, &pair);
}

// `path` made absolute (user.gguf.file), as given when it cannot be resolved.
std::string absolute_path(const std::string& path) {
  if (is_url(path)) return display_url(path);  // no query string: it may hold a signature
  std::unique_ptr<char, void (*)(void*)> real(::realpath(path.c_str(), nullptr), std::free);
  return real ? std::string(real.get()) : path;
}

// One line naming the types that have raw/ files only, and one naming the ids that have none.
void add_undecoded_warnings(const GgufFile& f, std::vector<std::string>& out) {
  std::map<std::uint32_t, std::size_t> raw_only, unknown;
  for (const TensorInfo& t : f.tensors) {
    if (!type_traits(t.type))
      ++unknown[t.type];
    else if (!decodes_to_f32(f, t))
      ++raw_only[t.type];
  }
  if (!raw_only.empty()) {
    std::string names;
    for (auto [id, n] : raw_only)
      names +=
          fmt::format("{}{} ({} tensors)", names.empty() ? "" : ", ", type_display_name(id), n);
    out.push_back(fmt::format("{}: no float32 decoding {}for {}: raw/ only", f.path,
                              f.big_endian ? "of big-endian quantized blocks " : "yet ", names));
  }
  if (!unknown.empty()) {
    std::string ids;
    for (auto [id, n] : unknown)
      ids += fmt::format("{}{} ({} tensors)", ids.empty() ? "" : ", ", id, n);
    out.push_back(
        fmt::format("{}: removed or unknown type ids {}: listed in gguf.json and tensors.tsv only",
                    f.path, ids));
  }
}

}  // namespace

ServedModel::ServedModel(Model m, const TreeOptions& options)
    : ServedModel(std::move(m), paired_of(m), options) {}

ServedModel::ServedModel(Model&& m, std::optional<GgufFile> paired, const TreeOptions& options)
    : model(std::move(m)),
      tree(tree_of(model, paired, options)),
      // The projector's tensors read in place (ContentReader's tail), in paired_file's numbering.
      reader(model.file, sources_of(model), model.projector ? &model.projector->file : nullptr) {
  add_undecoded_warnings(model.file, warnings);
  for (const std::string& w : tree.warnings()) {
    warnings.push_back(fmt::format("{}: {}", model.file.path, w));
  }
  const GgufFile* projector = model.projector ? &model.projector->file : nullptr;
  for (const GgufFile* f : {static_cast<const GgufFile*>(&model.file), projector}) {
    if (f && f->shards.empty()) file_paths.push_back(absolute_path(f->path));
    if (f) {
      for (const Shard& s : f->shards) file_paths.push_back(absolute_path(s.path));
    }
  }
  // The projector is shared with the library's other models (ProjectorCache): its keys stay
  // for their trees, and its tensor infos are read where they are (the reader's tail). The
  // pair's file, a copy of both files' tensor infos, served only to lay out the tree: no model
  // holds a copy of its projector.
  std::vector<KeyValue>().swap(model.file.kv);
  paired.reset();
  ::malloc_trim(0);
  struct stat st {};
  if (!model.sources.empty() && model.sources.front()->fd() >= 0 &&
      ::fstat(model.sources.front()->fd(), &st) == 0) {
    mtime = modification_time(st);
  } else {
    ::clock_gettime(CLOCK_REALTIME, &mtime);  // a remote model: mounted now
  }
}

int ServedModel::whole_file_fd(const Node& node) const {
  if (node.kind != NodeKind::kComposite || node.pieces.size() != 1) return -1;
  const Piece& p = node.pieces.front();
  if (p.kind != Piece::Kind::kSource || p.from != 0 || p.shard >= model.sources.size()) return -1;
  const ByteSource& src = *model.sources[p.shard];
  if (src.remote() || src.fd() < 0 || p.size != src.size() || node.size != src.size()) return -1;
  return src.fd();
}

ServedModel::ServedModel(std::string message, const struct timespec& time)
    : tree(Tree::error_folder(std::move(message))),
      reader(model.file, std::vector<const ByteSource*>{}),
      mtime(time) {}

}  // namespace ggufs
