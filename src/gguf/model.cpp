#include "ggufs/model.h"

#include <fmt/format.h>

#include <cctype>
#include <unordered_map>

#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

constexpr std::string_view kSplitNo = "split.no";
constexpr std::string_view kSplitCount = "split.count";
constexpr std::string_view kSplitTensors = "split.tensors.count";

const KeyValue* find_key(const GgufFile& f, std::string_view key) {
  for (const KeyValue& kv : f.kv) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}

// The value of integer key `key`, or nullopt when absent. A key of another type, or a negative
// value, is refused (ParseError at the key).
std::optional<std::uint64_t> split_key(const GgufFile& f, std::string_view key) {
  const KeyValue* kv = find_key(f, key);
  if (!kv) return std::nullopt;
  if (const auto* u = std::get_if<std::uint64_t>(&kv->value.data)) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&kv->value.data); i && *i >= 0) {
    return static_cast<std::uint64_t>(*i);
  }
  throw ParseError(f.path, kv->offset,
                   fmt::format("{} must be a non-negative integer (it is a {})", key,
                               value_type_name(kv->value.type)));
}

std::uint64_t key_offset(const GgufFile& f, std::string_view key) {
  const KeyValue* kv = find_key(f, key);
  return kv ? kv->offset : 0;
}

bool digits(std::string_view s) {
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return !s.empty();
}

// Opens and parses one shard; an unopenable shard is named with its place in the model.
std::pair<std::unique_ptr<ByteSource>, GgufFile> open_shard(const std::string& path,
                                                            std::uint32_t number,
                                                            std::uint32_t count,
                                                            const SourceOpener& open) {
  try {
    std::unique_ptr<ByteSource> src = open ? open(path) : std::make_unique<FileSource>(path);
    GgufFile f = parse_gguf(*src, src->name().empty() ? path : src->name());
    return {std::move(src), std::move(f)};
  } catch (const IoError& e) {
    if (count <= 1) throw;
    throw IoError(fmt::format("{} (shard {} of {} of a split model)", e.what(), number, count),
                  e.fault());
  }
}

}  // namespace

std::optional<SplitName> parse_split_name(const std::string& path) {
  // "-NNNNN-of-MMMMM.gguf" is 20 bytes.
  if (path.size() <= 20) return std::nullopt;
  const std::string_view tail = std::string_view(path).substr(path.size() - 20);
  if (tail[0] != '-' || !digits(tail.substr(1, 5)) || tail.substr(6, 4) != "-of-" ||
      !digits(tail.substr(10, 5)) || tail.substr(15) != ".gguf") {
    return std::nullopt;
  }
  SplitName n;
  n.prefix = path.substr(0, path.size() - 20);
  n.number = static_cast<std::uint32_t>(std::stoul(std::string(tail.substr(1, 5))));
  n.count = static_cast<std::uint32_t>(std::stoul(std::string(tail.substr(10, 5))));
  if (n.number == 0 || n.number > n.count) return std::nullopt;
  return n;
}

std::string shard_path(const std::string& prefix, std::uint32_t number, std::uint32_t count) {
  return fmt::format("{}-{:05}-of-{:05}.gguf", prefix, number, count);
}

Model open_model(const std::string& path, const ShardProgress& progress, const SourceOpener& open) {
  const std::optional<SplitName> name = parse_split_name(path);
  const std::uint32_t given_number = name ? name->number : 1;
  if (progress) progress(given_number, name ? name->count : 1, path);
  auto [given_src, given] = open_shard(path, given_number, name ? name->count : 1, open);
  const std::optional<std::uint64_t> count = split_key(given, kSplitCount);

  Model m;
  if (!count || *count <= 1) {
    if (name && name->count > 1) {
      throw ParseError(path, 0,
                       fmt::format("named as shard {} of {} of a split model, but it has no {} "
                                   "key above 1: not a gguf-split shard",
                                   name->number, name->count, kSplitCount));
    }
    m.sources.push_back(std::move(given_src));
    m.file = std::move(given);
    return m;
  }
  if (!name) {
    throw ParseError(path, key_offset(given, kSplitCount),
                     fmt::format("{} is {}: one shard of a split model, but the file name does "
                                 "not end in -NNNNN-of-NNNNN.gguf, so the other shards cannot be "
                                 "found",
                                 kSplitCount, *count));
  }
  if (*count != name->count) {
    throw ParseError(path, key_offset(given, kSplitCount),
                     fmt::format("{} is {}, but the file name says {} shards", kSplitCount, *count,
                                 name->count));
  }

  // Every shard in order; the one given is not opened twice.
  std::vector<GgufFile> shards;
  for (std::uint32_t i = 1; i <= name->count; ++i) {
    const std::string p = i == name->number ? path : shard_path(name->prefix, i, name->count);
    if (i == name->number) {
      m.sources.push_back(std::move(given_src));
      shards.push_back(std::move(given));
    } else {
      if (progress) progress(i, name->count, p);
      auto [src, f] = open_shard(p, i, name->count, open);
      m.sources.push_back(std::move(src));
      shards.push_back(std::move(f));
    }
    const GgufFile& f = shards.back();
    const auto no = split_key(f, kSplitNo);
    if (!no || *no != i - 1) {
      throw ParseError(p, key_offset(f, kSplitNo),
                       no ? fmt::format("{} is {}, but this is shard {} of {} ({} must be {})",
                                        kSplitNo, *no, i, name->count, kSplitNo, i - 1)
                          : fmt::format("no {} key: not a shard of this split model", kSplitNo));
    }
    // Byte order is per file (the parser tells it from the version field at byte 4); every
    // value and tensor of one model must be read one way, so shards cannot differ.
    if (f.big_endian != shards[0].big_endian) {
      const auto order = [](const GgufFile& g) { return g.big_endian ? "big" : "little"; };
      throw ParseError(p, 4,
                       fmt::format("this shard is {}-endian, but shard 1 is {}-endian: the "
                                   "shards of one split model must share one byte order",
                                   order(f), order(shards[0])));
    }
    const auto c = split_key(f, kSplitCount);
    if (c != count) {
      throw ParseError(p, key_offset(f, kSplitCount),
                       fmt::format("{} is {}, but the first shard says {}", kSplitCount,
                                   c ? fmt::format("{}", *c) : "missing", *count));
    }
  }

  // One file: the first shard's header and metadata, every shard's tensors.
  const auto total = split_key(shards[0], kSplitTensors);
  GgufFile& out = shards[0];
  std::unordered_map<std::string, std::uint32_t> where;  // tensor name → shard
  std::vector<TensorInfo> tensors;
  for (std::uint32_t i = 0; i < shards.size(); ++i) {
    const GgufFile& f = shards[i];
    const auto t = split_key(f, kSplitTensors);
    if (t != total) {
      throw ParseError(f.path, key_offset(f, kSplitTensors),
                       fmt::format("{} is {}, but the first shard says {}", kSplitTensors,
                                   t ? fmt::format("{}", *t) : "missing",
                                   total ? fmt::format("{}", *total) : "nothing"));
    }
    out.shards.push_back(Shard{f.path, f.tensors.size(), f.data_offset, f.file_size});
    for (const TensorInfo& info : f.tensors) {
      const auto [it, added] = where.emplace(info.name, i);
      if (!added) {
        throw ParseError(f.path, info.info_offset,
                         fmt::format("tensor '{}' is also in shard {} ({})", printable(info.name),
                                     it->second + 1, printable(shards[it->second].path)));
      }
      tensors.push_back(info);
      tensors.back().shard = i;
    }
  }
  if (total && *total != tensors.size()) {
    throw ParseError(out.path, key_offset(out, kSplitTensors),
                     fmt::format("{} is {}, but the {} shards hold {} tensors", kSplitTensors,
                                 *total, shards.size(), tensors.size()));
  }
  out.tensors = std::move(tensors);
  out.tensor_count = out.tensors.size();
  m.file = std::move(out);
  return m;
}

void attach_projector(Model& model, Model projector) {
  attach_projector(model, std::make_shared<const Model>(std::move(projector)));
}

void attach_projector(Model& model, std::shared_ptr<const Model> shared) {
  const Model& projector = *shared;
  const KeyValue* arch = find_key(projector.file, "general.architecture");
  const auto* name = arch ? std::get_if<std::string>(&arch->value.data) : nullptr;
  if (!name || *name != "clip") {
    throw ParseError(projector.file.path, arch ? arch->offset : 0,
                     fmt::format("not a vision projector: general.architecture is {}, not "
                                 "\"clip\" (llama.cpp's mmproj files)",
                                 name ? fmt::format("\"{}\"", printable(*name)) : "absent"));
  }
  if (projector.file.big_endian != model.file.big_endian) {
    throw ParseError(projector.file.path, 0,
                     fmt::format("the projector is {}-endian and the model {}-endian",
                                 projector.file.big_endian ? "big" : "little",
                                 model.file.big_endian ? "big" : "little"));
  }
  model.projector = std::move(shared);
}

GgufFile paired_file(const Model& model) {
  const GgufFile& text = model.file;
  const GgufFile& proj = model.projector->file;
  GgufFile out;
  out.path = text.path;
  out.version = text.version;
  out.big_endian = text.big_endian;
  out.alignment = text.alignment;
  out.data_offset = text.data_offset;
  out.file_size = text.file_size;
  out.kv = text.kv;
  out.kv_count = text.kv_count;
  out.tensors.reserve(text.tensors.size() + proj.tensors.size());
  out.tensors = text.tensors;
  const auto first = static_cast<std::uint32_t>(model.sources.size());
  for (TensorInfo t : proj.tensors) {
    t.shard += first;
    out.tensors.push_back(std::move(t));
  }
  out.tensor_count = out.tensors.size();
  auto add_shards = [&out](const GgufFile& f) {
    if (f.shards.empty()) {
      out.shards.push_back({f.path, f.tensor_count, f.data_offset, f.file_size});
    } else {
      out.shards.insert(out.shards.end(), f.shards.begin(), f.shards.end());
    }
  };
  add_shards(text);
  add_shards(proj);
  return out;
}

}  // namespace ggufs
