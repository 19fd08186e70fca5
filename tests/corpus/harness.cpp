#include "harness.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "corpus.h"
#include "ggufs/byte_source.h"
#include "ggufs/content.h"
#include "ggufs/error.h"
#include "ggufs/folder_views.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/hf_weights.h"
#include "ggufs/library.h"
#include "ggufs/library_scan.h"
#include "ggufs/mlx_blocks.h"
#include "ggufs/model.h"
#include "ggufs/names.h"
#include "ggufs/tree.h"

namespace ggufs::fuzz {
namespace {

// Nodes larger than this are read in parts only (inputs are small, so this is rare).
constexpr std::uint64_t kWholeReadLimit = 16u << 20;
constexpr std::size_t kNameMax = 255;  // NAME_MAX: longer names cannot be looked up

// A small deterministic generator seeded from the input, so every run of one input reads the
// same ranges (a crash reproduces) while different inputs read different ranges.
class Rng {
 public:
  explicit Rng(std::span<const std::uint8_t> data) {
    for (std::uint8_t b : data) state_ = (state_ ^ b) * 0x100000001b3ull;
  }
  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ull;
};

std::string check_file(const GgufFile& f, std::span<const std::uint8_t> data) {
  if (f.file_size != data.size()) return "file_size differs from the input size";
  if (f.kv.size() != f.kv_count || f.tensors.size() != f.tensor_count) return "counts differ";
  if (f.alignment == 0 || (f.alignment & (f.alignment - 1)) != 0) return "alignment";
  if (f.data_offset % f.alignment != 0) return "data_offset not aligned";
  if (f.data_offset > f.file_size + f.alignment) return "data_offset far past the end";
  std::vector<std::pair<std::uint64_t, std::uint64_t>> extents;
  for (const TensorInfo& t : f.tensors) {
    if (t.n_dims > 4) return "n_dims";
    if (t.offset % f.alignment != 0) return fmt::format("tensor {}: offset not aligned", t.name);
    if (t.file_offset != f.data_offset + t.offset) return "file_offset";
    if (!t.n_bytes) continue;
    if (*t.n_bytes > f.file_size || t.file_offset > f.file_size - *t.n_bytes) {
      return fmt::format("tensor {}: data outside the file", t.name);
    }
    if (*t.n_bytes > 0) extents.emplace_back(t.file_offset, t.file_offset + *t.n_bytes);
  }
  std::sort(extents.begin(), extents.end());
  for (std::size_t i = 1; i < extents.size(); ++i) {
    if (extents[i].first < extents[i - 1].second) return "tensor data overlaps";
  }
  return "";
}

// Reads [offset, offset + size) of `n` into a buffer at an odd address (the read path must not
// rely on an aligned destination) and compares it with `whole` where that is known.
std::string check_range(const ContentReader& reader, const Node& n, const std::string& path,
                        const std::vector<char>* whole, std::uint64_t offset, std::size_t size) {
  std::vector<char> buf(size + 1);
  const std::size_t got = reader.read(n, buf.data() + 1, size, offset);
  const std::uint64_t want = offset >= n.size ? 0 : std::min<std::uint64_t>(size, n.size - offset);
  if (got != want) {
    return fmt::format("{}: read of {} at {} returned {}, expected {}", path, size, offset, got,
                       want);
  }
  if (whole && got > 0 && std::memcmp(buf.data() + 1, whole->data() + offset, got) != 0) {
    return fmt::format("{}: read of {} at {} differs from the whole read", path, size, offset);
  }
  return "";
}

// A safetensors file (model.safetensors, hf/'s weight files): an 8-byte header length, a JSON
// header padded to a multiple of 8 (safetensors' writer), and tensors whose data_offsets tile
// the data section exactly, each as long as its dtype and shape say (the format's rules, which
// safetensors' loader checks). Returns "" or what broke.
std::string check_safetensors(const std::vector<char>& whole) {
  if (whole.size() < 8) return "shorter than its header length";
  std::uint64_t len = 0;
  for (int b = 7; b >= 0; --b) len = len << 8 | static_cast<std::uint8_t>(whole[b]);
  if (len % 8 != 0 || len > whole.size() - 8) return "header length";
  const auto header =
      nlohmann::json::parse(whole.begin() + 8, whole.begin() + 8 + static_cast<std::ptrdiff_t>(len),
                            nullptr, /*allow_exceptions=*/false);
  if (!header.is_object()) return "header is not a JSON object";
  static const std::map<std::string, std::uint64_t> kDtypeBytes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4},
      {"I16", 2}, {"I8", 1},  {"U64", 8}, {"U32", 4},  {"U16", 2}, {"U8", 1}};
  std::vector<std::pair<std::uint64_t, std::uint64_t>> extents;
  for (const auto& [key, t] : header.items()) {
    if (key == "__metadata__") continue;
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() ||
        !kDtypeBytes.contains(t["dtype"].get<std::string>()) || !t.contains("shape") ||
        !t["shape"].is_array() || !t.contains("data_offsets") || !t["data_offsets"].is_array() ||
        t["data_offsets"].size() != 2) {
      return fmt::format("tensor '{}' is not described as the format says", key);
    }
    std::uint64_t bytes = kDtypeBytes.at(t["dtype"].get<std::string>());
    for (const auto& d : t["shape"]) {
      if (!d.is_number_unsigned()) return fmt::format("tensor '{}': shape", key);
      bytes *= d.get<std::uint64_t>();
    }
    const auto& o = t["data_offsets"];
    if (!o[0].is_number_unsigned() || !o[1].is_number_unsigned() ||
        o[1].get<std::uint64_t>() < o[0].get<std::uint64_t>() ||
        o[1].get<std::uint64_t>() - o[0].get<std::uint64_t>() != bytes) {
      return fmt::format("tensor '{}': data_offsets do not hold its dtype and shape", key);
    }
    extents.emplace_back(o[0].get<std::uint64_t>(), o[1].get<std::uint64_t>());
  }
  std::sort(extents.begin(), extents.end());
  std::uint64_t at = 0;
  for (const auto& [begin, end] : extents) {
    if (begin != at) return "tensor data leaves a gap or overlaps";
    at = end;
  }
  if (8 + len + at != whole.size()) return "tensor data does not end at the end of the file";
  return "";
}

std::string check_node(const ContentReader& reader, const GgufFile& f, const Node& n,
                       const std::string& path, std::span<const std::uint8_t> data, Rng& rng) {
  std::vector<char> whole;
  const bool have_whole = n.size <= kWholeReadLimit;
  if (have_whole) {
    whole.resize(static_cast<std::size_t>(n.size));
    if (reader.read(n, whole.data(), whole.size(), 0) != whole.size()) {
      return path + ": whole read is short";
    }
  }
  switch (n.kind) {
    case NodeKind::kDirectory:
      return "";
    case NodeKind::kText:
      if (n.size != n.text.size() ||
          (have_whole && std::string(whole.begin(), whole.end()) != n.text)) {
        return path + ": text differs";
      }
      break;
    case NodeKind::kRaw: {
      const TensorInfo& t = f.tensors[n.tensor];
      if (n.size != *t.n_bytes) return path + ": size is not n_bytes";
      if (have_whole && n.size > 0 &&
          std::memcmp(whole.data(), data.data() + t.file_offset, whole.size()) != 0) {
        return path + ": bytes differ from the file";
      }
      break;
    }
    case NodeKind::kDecoded: {
      const TensorInfo& t = f.tensors[n.tensor];
      if (n.size != n.text.size() + t.n_elements * n.view->element_bytes()) return path + ": size";
      if (have_whole && n.text.compare(0, n.text.size(), whole.data(), n.text.size()) != 0) {
        return path + ": npy header differs";
      }
      if (have_whole && t.type == GGML_TYPE_F32 && n.view->data == ViewData::kFloat32 &&
          t.n_elements > 0) {
        // f32/ is float32 little-endian (tree.h): the stored bytes, each value byte-swapped in a
        // big-endian file (the README's "Byte order and old files").
        const auto* stored = data.data() + t.file_offset;
        std::vector<std::uint8_t> want(stored, stored + t.n_elements * 4);
        if (f.big_endian) {
          for (std::size_t i = 0; i < want.size(); i += 4) {
            std::reverse(want.begin() + static_cast<std::ptrdiff_t>(i),
                         want.begin() + static_cast<std::ptrdiff_t>(i + 4));
          }
        }
        if (std::memcmp(whole.data() + n.text.size(), want.data(), want.size()) != 0) {
          return path + ": F32 decode differs from the stored bytes";
        }
      }
      break;
    }
    case NodeKind::kComposite: {
      std::uint64_t at = 0;
      for (const Piece& p : n.pieces) {
        if (p.at != at || p.size == 0) return path + ": pieces leave a gap or are empty";
        at += p.size;
      }
      if (at != n.size) return path + ": pieces do not add up to the size";
      if (n.name == "model.gguf" && f.shards.empty() && have_whole &&
          (whole.size() != data.size() || std::memcmp(whole.data(), data.data(), data.size()))) {
        return path + ": differs from the file";
      }
      if (n.name.ends_with(".safetensors") && have_whole) {
        if (auto e = check_safetensors(whole); !e.empty()) return path + ": " + e;
      }
      break;
    }
  }
  const std::vector<char>* w = have_whole ? &whole : nullptr;
  // Past the end, at the very end, and up to the largest offset.
  for (std::uint64_t off : {n.size, n.size + 1, std::numeric_limits<std::uint64_t>::max() - 3}) {
    if (auto e = check_range(reader, n, path, w, off, 16); !e.empty()) return e;
  }
  if (n.size == 0) return "";
  // Ranges that start and end at arbitrary bytes, across the npy header's end, and at the end.
  std::vector<std::pair<std::uint64_t, std::size_t>> ranges = {{n.size - 1, 1}, {0, 1}};
  if (!n.text.empty() && n.text.size() < n.size) ranges.push_back({n.text.size() - 1, 6});
  for (int i = 0; i < 6; ++i) {
    const std::uint64_t off = rng.below(n.size);
    const std::size_t len = static_cast<std::size_t>(
        rng.below(std::min<std::uint64_t>(n.size - off, i < 3 ? 64 : 300000) + 8));
    ranges.push_back({off, len});
  }
  for (auto [off, len] : ranges) {
    if (auto e = check_range(reader, n, path, w, off, len); !e.empty()) return e;
  }
  return "";
}

bool usable_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.size() <= kNameMax &&
         s.find('/') == std::string::npos && s.find('\0') == std::string::npos;
}

// The JSON header of safetensors file `n`, or a discarded value when it cannot be read.
nlohmann::json safetensors_header(const ContentReader& reader, const Node& n) {
  unsigned char head[8] = {};
  if (n.size < 8 || reader.read(n, reinterpret_cast<char*>(head), 8, 0) != 8) return {};
  std::uint64_t len = 0;
  for (int b = 7; b >= 0; --b) len = len << 8 | head[b];
  if (len > n.size - 8 || len > kWholeReadLimit) return {};
  std::string text(static_cast<std::size_t>(len), '\0');
  if (reader.read(n, text.data(), text.size(), 8) != text.size()) return {};
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// Each folder view (folder_views.h) is either at the root, with no warning that it is not
// offered, or absent with exactly one such warning, one line, that the root's extended
// attribute repeats (tree.cpp). hf/ when there: config.json and generation_config.json, the
// three tokenizer files or none, every .json file valid JSON, the weights in model.safetensors
// or in the files model.safetensors.index.json names, and an embedding of config.json's
// vocab_size rows (item 6 of issue 26: nothing wrong is served). Returns "" or what broke.
std::string check_folder_views(const GgufFile& file, const Tree& tree,
                               const ContentReader& reader) {
  const Node& root = *tree.node(kRootIno);
  for (const FolderView& view : kFolderViews) {
    if (view.applies && !view.applies(file)) {  // not a view of this model: not there
      if (tree.lookup(kRootIno, std::string(view.name)) != 0) {
        return fmt::format("{}/ is there for a model it is not a view of", view.name);
      }
      continue;
    }
    const std::string prefix = fmt::format("{}/ is not offered: ", view.name);
    std::size_t refusals = 0;
    std::string reason;
    for (const std::string& w : tree.warnings()) {
      if (w.starts_with(prefix)) {
        ++refusals;
        reason = w.substr(prefix.size());
      }
    }
    const auto xattr = std::find_if(root.xattrs.begin(), root.xattrs.end(),
                                    [&](const auto& x) { return x.first == view.absent_xattr; });
    const Ino folder = tree.lookup(kRootIno, std::string(view.name));
    if (folder == 0) {
      if (refusals != 1) {
        return fmt::format("{}/ is absent with {} warnings saying why", view.name, refusals);
      }
      if (reason.empty() || reason.find('\n') != std::string::npos) {
        return fmt::format("{}/ is absent for a reason that is not one line", view.name);
      }
      if (xattr == root.xattrs.end() || xattr->second != "not offered: " + reason) {
        return fmt::format("{}/ is absent and {} does not say why", view.name, view.absent_xattr);
      }
      continue;
    }
    if (refusals != 0 || xattr != root.xattrs.end()) {
      return fmt::format("{}/ is there and said not to be offered", view.name);
    }
    if (tree.node(folder)->kind != NodeKind::kDirectory) {
      return fmt::format("{}/ is not a folder", view.name);
    }
  }
  const Ino hf = tree.lookup(kRootIno, "hf");
  if (hf == 0) return "";
  std::map<std::string, const Node*> files;
  for (Ino ino = 1; ino <= tree.count(); ++ino) {
    const Node& n = *tree.node(ino);
    if (n.parent == hf && ino != kRootIno) files[n.name] = &n;
  }
  if (file.tensors.empty()) {  // a vocabulary-only file: the tokenizer files alone (folder_views.h)
    const bool tokenizer_only = files.size() == 3 && files.contains("tokenizer.json") &&
                                files.contains("tokenizer_config.json") &&
                                files.contains("special_tokens_map.json");
    return tokenizer_only ? "" : "hf/ of a file of no tensors is not its tokenizer files alone";
  }
  for (const char* name : {"config.json", "generation_config.json"}) {
    if (!files.contains(name)) return fmt::format("hf/ has no {}", name);
  }
  const int tokenizer_files = files.contains("tokenizer.json") +
                              files.contains("tokenizer_config.json") +
                              files.contains("special_tokens_map.json");
  if (tokenizer_files != 0 && tokenizer_files != 3) return "hf/ has some tokenizer files only";
  std::set<std::string> weight_files;
  for (const auto& [name, n] : files) {
    if (name.ends_with(".json")) {
      if (n->kind != NodeKind::kText || !nlohmann::json::accept(n->text)) {
        return fmt::format("hf/{} is not JSON", name);
      }
    } else if (name.ends_with(".safetensors")) {
      weight_files.insert(name);
    } else {
      return fmt::format("hf/{}: a file save_pretrained does not write", name);
    }
  }
  if (weight_files.empty()) return "hf/ has no weights";
  if (const auto index = files.find("model.safetensors.index.json"); index != files.end()) {
    const auto index_json = nlohmann::json::parse(index->second->text);
    if (!index_json.is_object() || !index_json.contains("weight_map") ||
        !index_json["weight_map"].is_object()) {
      return "hf/model.safetensors.index.json has no weight_map";
    }
    const auto& map = index_json["weight_map"];
    std::set<std::string> named;
    for (const auto& [key, file] : map.items()) {
      if (!file.is_string() || !weight_files.contains(file.get<std::string>())) {
        return fmt::format("the weight map sends '{}' to a file hf/ does not have", key);
      }
      named.insert(file.get<std::string>());
    }
    if (named != weight_files) return "a weight file is not in the weight map";
  } else if (weight_files != std::set<std::string>{"model.safetensors"}) {
    return "hf/ has several weight files and no index";
  }
  const auto config = nlohmann::json::parse(files["config.json"]->text);
  if (!config.is_object() || !config.contains("model_type") || !config["model_type"].is_string()) {
    return "hf/config.json has no model_type";
  }
  for (const std::string& name : weight_files) {
    const nlohmann::json header = safetensors_header(reader, *files[name]);
    if (!header.is_object()) return fmt::format("hf/{}: no header", name);
    for (const auto& [key, t] : header.items()) {
      const bool embedding = key.ends_with("embed_tokens.weight") || key.ends_with("wte.weight");
      if (embedding && config.contains("vocab_size") &&
          (!t.contains("shape") || !t["shape"].is_array() || t["shape"].empty() ||
           t["shape"][0] != config["vocab_size"])) {
        return fmt::format("hf/{}: '{}' has not vocab_size rows", name, key);
      }
    }
  }
  return "";
}

// hf/'s dtype and shard size drawn from the input, so that inputs reach every dtype and the
// sharded layout (index file, several weight files) too.
TreeOptions options_for(Rng& rng) {
  TreeOptions o;
  constexpr ViewData kDtypes[] = {ViewData::kFloat32, ViewData::kFloat16, ViewData::kBFloat16};
  o.hf_dtype = kDtypes[rng.below(3)];
  if (rng.below(2) == 0) o.hf_max_shard_size = 1 + rng.below(8192);
  // mlx/'s requantized matrices too (-o mlx_requantize: 0, or 8, 6 or 4 bits).
  constexpr std::uint32_t kRequantize[] = {0, 8, 6, 4};
  o.mlx_requantize = kRequantize[rng.below(4)];
  return o;
}

// What a tree holds in memory, against the README's bound (kRenderedBytesPerFileByte): the
// rendered texts, the whole-model headers, the nodes and pieces. A layout that grows faster than
// its file (merges built from "a", "aa", …; a weight per expert of an expert_count the stacks do
// not hold) is a finding, found here without any clock.
std::string check_cost(const Tree& tree, std::size_t file_bytes) {
  std::uint64_t held = 0;
  for (Ino ino = 1; ino <= tree.count(); ++ino) {
    const Node& n = *tree.node(ino);
    held += sizeof(Node) + n.name.size() + n.text.size() + n.what.size() +
            n.pieces.size() * sizeof(Piece) + n.children.size() * sizeof(Ino);
  }
  const std::uint64_t bound = kRenderedBytesPerFileByte * file_bytes + kRenderedBytesConstant;
  if (held > bound) {
    return fmt::format("the tree holds {} bytes for a file of {}: more than the bound {}", held,
                       file_bytes, bound);
  }
  return "";
}

std::string check_tree_of(const GgufFile& f, std::span<const std::uint8_t> data) {
  const MemorySource backing(std::vector<std::uint8_t>(data.begin(), data.end()));
  Rng rng(data);
  const Tree tree(f, options_for(rng));
  const ContentReader reader(f, backing);
  for (Ino ino = 1; ino <= tree.count(); ++ino) {
    const Node& n = *tree.node(ino);
    if (ino != kRootIno) {
      if (!usable_name(n.name)) return fmt::format("inode {}: unusable name '{}'", ino, n.name);
      if (tree.lookup(n.parent, n.name) != ino) {
        return fmt::format("inode {}: '{}' looks up to another node", ino, n.name);
      }
    }
    try {
      if (auto e = check_node(reader, f, n, n.name, data, rng); !e.empty()) return e;
    } catch (const UnrepresentableError&) {
      // A row MLX's form cannot hold fails its read, by design (content.cpp, read_mlx): only
      // mlx/'s files may.
      const bool mlx = std::any_of(n.pieces.begin(), n.pieces.end(), [](const Piece& p) {
        return p.kind == Piece::Kind::kMlxWeight || p.kind == Piece::Kind::kMlxScales ||
               p.kind == Piece::Kind::kMlxBiases || p.kind == Piece::Kind::kMlxScaleBytes;
      });
      if (!mlx) throw;
    }
  }
  if (tree.node(0) || tree.node(tree.count() + 1)) return "node() beyond the tree";
  if (auto e = check_cost(tree, data.size()); !e.empty()) return e;
  if (auto e = check_folder_views(f, tree, reader); !e.empty()) return e;
  const Node& json = *tree.node(tree.lookup(kRootIno, "gguf.json"));
  if (!nlohmann::json::accept(json.text)) return "gguf.json is not valid JSON";
  const Node& tsv = *tree.node(tree.lookup(kRootIno, "tensors.tsv"));
  if (static_cast<std::uint64_t>(std::count(tsv.text.begin(), tsv.text.end(), '\n')) !=
      f.tensors.size() + 1) {
    return "tensors.tsv does not have one line per tensor";
  }
  return "";
}

// A piece of an hf/ weight file takes bytes or elements from the file's tensors only: spliced
// bytes inside one tensor's data (so inside the file), decoded elements inside the element count
// of the tensors it names. Returns "" or what broke.
std::string check_hf_piece(const GgufFile& f, const Piece& p, const std::string& path) {
  using K = Piece::Kind;
  if (p.kind == K::kSource) {
    if (p.shard != 0 || p.from > f.file_size || p.size > f.file_size - p.from) {
      return fmt::format("{}: spliced bytes [{}, +{}) outside the file", path, p.from, p.size);
    }
    for (const TensorInfo& t : f.tensors) {
      if (t.n_bytes && p.from >= t.file_offset && p.from + p.size <= t.file_offset + *t.n_bytes) {
        return "";
      }
    }
    return fmt::format("{}: spliced bytes [{}, +{}) not inside one tensor's data", path, p.from,
                       p.size);
  }
  if (p.kind != K::kTensor && p.kind != K::kMxfp4Blocks && p.kind != K::kMxfp4Scales) return "";
  auto elements = [&](std::size_t i) -> std::optional<std::uint64_t> {
    if (i >= f.tensors.size() || !f.tensors[i].n_bytes) return std::nullopt;
    return f.tensors[i].n_elements;
  };
  const auto n = elements(p.tensor);
  if (!n) return fmt::format("{}: a piece of tensor {}, which has no data", path, p.tensor);
  if (p.kind != K::kTensor) return "";
  std::uint64_t used = 0;  // elements after `from`
  if (p.order == Piece::Order::kInterleavedTransposed) {
    const auto n2 = elements(p.tensor2);
    if (!n2) return fmt::format("{}: a piece of tensor {}, which has no data", path, p.tensor2);
    if (p.cols != 0 && p.rows > UINT64_MAX / p.cols) return path + ": rows × cols overflow";
    used = p.rows * p.cols;
    if (p.from > *n2 || used > *n2 - p.from) {
      return fmt::format("{}: elements past the end of '{}'", path, f.tensors[p.tensor2].name);
    }
  } else {
    const std::uint32_t eb = element_bytes(p.data);
    used = eb ? p.size / eb : 0;
  }
  if (p.from > *n || used > *n - p.from) {
    return fmt::format("{}: elements [{}, +{}) past the {} of '{}'", path, p.from, used, *n,
                       f.tensors[p.tensor].name);
  }
  return "";
}

// The node the tree makes of a folder view's laid-out file.
Node composite_node(const FolderFile& file) {
  Node n;
  n.name = file.name;
  n.kind = NodeKind::kComposite;
  n.size = file.layout->size();
  n.text = file.layout->text;
  n.pieces = file.layout->pieces;
  return n;
}

// mlx/ beside a laid-out hf/ (options as hf/'s): there too (one plan for both), every MLX piece
// whole rows of a tensor of a type with an MLX form, every weight file a safetensors file read
// whole and in ranges as hf/'s are. Returns "" or what broke.
std::string check_mlx_of(const GgufFile& f, const TreeOptions& options, const ContentReader& reader,
                         std::span<const std::uint8_t> data, Rng& rng) {
  std::vector<std::string> warnings;
  const FolderResult mlx = mlx_folder_layout(f, options, warnings);
  if (!mlx.folder) {
    // The one reason hf/ stands alone: mlx-lm has no model of the row (MlxColumn::absent).
    const HfRendering hf = render_hf(f);
    const bool absent_row = hf.model.model && !hf.model.model->config.mlx_absent.empty() &&
                            mlx.reason == hf.model.model->config.mlx_absent;
    return absent_row ? "" : "hf/ is there but mlx/ is not: " + mlx.reason;
  }
  for (const FolderFile& file : mlx.folder->files) {
    if (!file.layout) continue;
    Node n = composite_node(file);
    for (const Piece& p : n.pieces) {
      const bool mlx_piece =
          p.kind == Piece::Kind::kMlxWeight || p.kind == Piece::Kind::kMlxScales ||
          p.kind == Piece::Kind::kMlxBiases || p.kind == Piece::Kind::kMlxScaleBytes;
      if (!mlx_piece) {
        if (auto e = check_hf_piece(f, p, "mlx/" + n.name); !e.empty()) return e;
        continue;
      }
      const TensorInfo* t = p.tensor < f.tensors.size() ? &f.tensors[p.tensor] : nullptr;
      const MlxBlockForm* form = !t           ? nullptr
                                 : p.mlx_bits ? mlx_requantized_form(p.mlx_bits)
                                              : mlx_block_form(t->type);
      if (!form || !t->n_bytes || t->ne[0] == 0)
        return "mlx/" + n.name + ": an MLX piece of no form";
      if (p.mlx_bits && p.mlx_bits != options.mlx_requantize) {
        return fmt::format("mlx/{}: requantized to {} bits, not -o mlx_requantize's {}", n.name,
                           p.mlx_bits, options.mlx_requantize);
      }
      const std::uint64_t unit =
          p.kind == Piece::Kind::kMlxWeight       ? mlx_weight_words(*form, t->ne[0]) * 4
          : p.kind == Piece::Kind::kMlxScaleBytes ? mlx_groups(*form, t->ne[0])
                                                  : mlx_groups(*form, t->ne[0]) * 4;
      const std::uint64_t rows = t->n_elements / t->ne[0];
      if (unit == 0 || p.size % unit != 0 || p.from > rows || p.size / unit > rows - p.from) {
        return fmt::format("mlx/{}: rows [{}, +{} bytes) past the {} of '{}'", n.name, p.from,
                           p.size, rows, t->name);
      }
    }
    try {
      if (auto e = check_node(reader, f, n, "mlx/" + n.name, data, rng); !e.empty()) return e;
    } catch (const UnrepresentableError&) {
      // A row MLX's form cannot hold (NaN or infinity requantized, an MXFP4 exponent byte 255):
      // that read fails, by design (content.cpp, read_mlx).
    }
  }
  return "";
}

std::string check_hf_of(const GgufFile& f, std::span<const std::uint8_t> data) {
  Rng rng(data);
  const TreeOptions options = options_for(rng);
  std::vector<std::string> warnings;
  const FolderResult hf = hf_folder_layout(f, options, warnings);
  if (!hf.folder) {
    if (hf.reason.empty()) return "hf/ refused without a reason";
    if (hf.reason.find('\n') != std::string::npos) return "hf/'s reason is not one line";
    for (const char ch : hf.reason) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == 0x7f) return "unescaped control byte in hf/'s reason: " + hf.reason;
    }
    return "";
  }
  const MemorySource backing(std::vector<std::uint8_t>(data.begin(), data.end()));
  const ContentReader reader(f, backing);
  std::map<std::string, const FolderFile*> files;
  std::vector<Node> weight_files;
  for (const FolderFile& file : hf.folder->files) {
    if (!usable_name(file.name) || !files.emplace(file.name, &file).second) {
      return fmt::format("hf/ has an unusable or repeated name '{}'", file.name);
    }
    if (file.name.ends_with(".json")) {
      if (file.layout || !nlohmann::json::accept(file.text)) {
        return fmt::format("hf/{} is not JSON", file.name);
      }
      continue;
    }
    if (!file.name.ends_with(".safetensors") || !file.layout) {
      return fmt::format("hf/{}: a file save_pretrained does not write", file.name);
    }
    Node n = composite_node(file);
    for (const Piece& p : n.pieces) {
      if (auto e = check_hf_piece(f, p, "hf/" + n.name); !e.empty()) return e;
    }
    if (auto e = check_node(reader, f, n, "hf/" + n.name, data, rng); !e.empty()) return e;
    weight_files.push_back(std::move(n));
  }
  const int tokenizer_files = files.contains("tokenizer.json") +
                              files.contains("tokenizer_config.json") +
                              files.contains("special_tokens_map.json");
  if (tokenizer_files != 0 && tokenizer_files != 3) return "hf/ has some tokenizer files only";
  if (f.tensors.empty()) {  // a vocabulary-only file: the tokenizer files alone
    return tokenizer_files == 3 && files.size() == 3 ? "" : "a file of no tensors has a model";
  }
  for (const char* name : {"config.json", "generation_config.json"}) {
    if (!files.contains(name)) return fmt::format("hf/ has no {}", name);
  }
  if (weight_files.empty()) return "hf/ has no weights";
  if (weight_files.size() > 1 && !files.contains("model.safetensors.index.json")) {
    return "hf/ has several weight files and no index";
  }
  const auto config = nlohmann::json::parse(files["config.json"]->text);
  if (!config.is_object() || !config.contains("model_type") || !config["model_type"].is_string()) {
    return "hf/config.json has no model_type";
  }
  // The weight files hold exactly the weight map's tensors, each of its shape; none holds more
  // elements than the GGUF tensors it comes from.
  const HfWeightsResult map = hf_weight_map(f);
  if (!map.weights) return "hf/ is there but the weight map is refused: " + map.reason;
  std::map<std::string, const HfWeight*> by_name;
  for (const HfWeight& w : *map.weights) {
    std::uint64_t held = f.tensors[w.source].n_elements, elements = 1;
    for (const std::size_t part : w.parts) held += f.tensors[part].n_elements;
    for (const std::uint64_t d : w.shape) {
      if (d != 0 && elements > UINT64_MAX / d) return w.hf_name + ": its shape overflows";
      elements *= d;
    }
    if (elements > held) {
      return fmt::format("{}: {} elements from GGUF tensors holding {}", w.hf_name, elements, held);
    }
    if (!by_name.emplace(w.hf_name, &w).second) return "the weight map repeats " + w.hf_name;
  }
  std::size_t listed = 0;
  for (const Node& n : weight_files) {
    const nlohmann::json header = safetensors_header(reader, n);
    if (!header.is_object()) return fmt::format("hf/{}: no header", n.name);
    for (const auto& [key, t] : header.items()) {
      if (key == "__metadata__") continue;
      ++listed;
      const auto w = by_name.find(key);
      if (w == by_name.end())
        return fmt::format("hf/{}: '{}' is not in the weight map", n.name, key);
      if (t["shape"] != nlohmann::json(w->second->shape)) {
        return fmt::format("hf/{}: '{}' has not the weight map's shape", n.name, key);
      }
      const bool embedding = key.ends_with("embed_tokens.weight") || key.ends_with("wte.weight");
      if (embedding && config.contains("vocab_size") &&
          (t["shape"].empty() || t["shape"][0] != config["vocab_size"])) {
        return fmt::format("hf/{}: '{}' has not vocab_size rows", n.name, key);
      }
    }
  }
  if (listed != by_name.size()) {
    return fmt::format("hf/ holds {} tensors of the weight map's {}", listed, by_name.size());
  }
  return check_mlx_of(f, options, reader, data, rng);
}

// A refusal's message may quote the file, but only escaped: no control byte may reach a
// terminal. Returns "" or what broke.
std::string unescaped_control(const ParseError& e) {
  for (const char ch : e.problem()) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return fmt::format("unescaped control byte in '{}'", e.what());
  }
  return "";
}

template <typename F>
std::string guarded(F&& body) {
  try {
    return body();
  } catch (const ParseError& e) {
    return unescaped_control(e);  // refused: the normal outcome for most inputs
  } catch (const std::exception& e) {
    return fmt::format("unexpected exception: {}", e.what());
  }
}

// The deepest nesting of arrays and objects of a JSON text, as nlohmann-json's SAX parser sees it
// (an account independent of the product's depth limit).
class DepthCounter final : public nlohmann::json_sax<nlohmann::json> {
 public:
  int deepest = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return open(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception&) override {
    return false;
  }

 private:
  int depth_ = 0;
  bool open() {
    deepest = std::max(deepest, ++depth_);
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
};

constexpr const char* kManifestName = "fuzz/manifest";
// The nesting parse_ollama_manifest promises to accept (library_scan.h).
constexpr int kMaxJsonLevels = 64;

}  // namespace

std::string check_parse(std::span<const std::uint8_t> data) {
  return guarded([&] {
    const MemorySource src(std::vector<std::uint8_t>(data.begin(), data.end()));
    return check_file(parse_gguf(src, "fuzz.gguf"), data);
  });
}

std::string check_ollama_manifest(std::span<const std::uint8_t> data) {
  const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  DepthCounter depth;
  const bool json = nlohmann::json::sax_parse(text, &depth);
  try {
    const OllamaModelLayer layer = parse_ollama_manifest(text, kManifestName);
    if (!json) return "accepted a manifest that is not JSON";
    if (depth.deepest > kMaxJsonLevels) {
      return fmt::format("accepted JSON nested {} levels deep", depth.deepest);
    }
    if (!is_sha256_hex(layer.digest_hex)) return "accepted a digest that is not 64 hex digits";
    return "";
  } catch (const ParseError& e) {
    if (e.file() != kManifestName) return fmt::format("the error names '{}'", e.file());
    if (e.offset() > text.size()) return fmt::format("offset {} is past the end", e.offset());
    if (e.problem().size() > kMaxMessageBytes) {
      return fmt::format("a message of {} bytes: {}…", e.problem().size(),
                         e.problem().substr(0, 200));
    }
    // Told apart by the fixed words a problem starts with: the rest may quote the manifest.
    if (e.problem() == "not an Ollama manifest: JSON nested more than 64 levels deep" &&
        depth.deepest <= kMaxJsonLevels) {
      return fmt::format("JSON {} levels deep refused as too deep", depth.deepest);
    }
    if (e.problem().starts_with("not an Ollama manifest: not JSON (") && json) {
      return "valid JSON refused as not JSON: " + e.problem();
    }
    return unescaped_control(e);
  } catch (const std::exception& e) {
    return fmt::format("unexpected exception: {}", e.what());
  }
}

std::string check_library_names(std::span<const std::uint8_t> data) {
  std::vector<std::string> lines;
  const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  for (std::size_t at = 0; at <= text.size() && lines.size() < kMaxNames;) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    lines.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  Rng rng(data);
  for (const std::string& line : lines) {
    // Each line as a shard's path, and (when not empty) as the prefix of one.
    if (const std::optional<SplitName> split = parse_split_name(line)) {
      if (split->number < 1 || split->number > split->count ||
          shard_path(split->prefix, split->number, split->count) != line) {
        return fmt::format("parse_split_name('{}') does not give it back", printable(line));
      }
    }
    if (line.empty()) continue;  // parse_split_name wants a prefix
    const auto count = static_cast<std::uint32_t>(1 + rng.below(99999));
    const auto number = static_cast<std::uint32_t>(1 + rng.below(count));
    const std::optional<SplitName> back = parse_split_name(shard_path(line, number, count));
    if (!back || back->prefix != line || back->number != number || back->count != count) {
      return fmt::format("shard {} of {} of '{}' is not read back", number, count, printable(line));
    }
  }
  bool opened = false;
  std::vector<LibraryEntry> entries;
  for (const std::string& line : lines) {
    LibraryEntry e;
    e.name = line;
    e.path = "/models/" + line;
    e.open = [&opened]() -> Model {
      opened = true;
      throw IoError("opened");
    };
    entries.push_back(std::move(e));
  }
  const Library library(std::move(entries), TreeOptions{}, nullptr, timespec{});
  const std::vector<std::string> names = library.folder_names();
  if (names.size() != lines.size()) return "not one folder per entry";
  std::set<std::string> distinct(names.begin(), names.end());
  if (distinct.size() != names.size()) return "two folders have the same name";
  std::set<std::string> earlier;
  for (std::size_t k = 0; k < names.size(); ++k) {
    const std::string& name = names[k];
    if (!usable_name(name)) {
      return fmt::format("entry {}: unusable folder name '{}' ({} bytes)", k, printable(name),
                         name.size());
    }
    const Ino ino = library.lookup(kRootIno, name);
    if (ino == 0 || library.find(ino, /*open=*/false).node->name != name ||
        library.path_of(ino) != name || library.entry(k).name != lines[k]) {
      return fmt::format("entry {}: '{}' does not look up to its folder", k, printable(name));
    }
    // A name that needs no escaping, is short, and is not taken by an earlier entry is kept as
    // it is (library.h: a later entry of a clash gets the suffix).
    const bool plain = usable_name(lines[k]) && lines[k].size() <= 200 &&
                       std::none_of(lines[k].begin(), lines[k].end(), [](char ch) {
                         const auto c = static_cast<unsigned char>(ch);
                         return c == '%' || c < 0x20 || c == 0x7f;
                       });
    if (plain && earlier.insert(lines[k]).second && name != lines[k]) {
      return fmt::format("entry {}: '{}' became '{}'", k, printable(lines[k]), printable(name));
    }
  }
  if (opened) return "a model was opened while only names were asked for";
  return "";
}

std::string check_tree(std::span<const std::uint8_t> data) {
  return guarded([&] {
    const MemorySource src(std::vector<std::uint8_t>(data.begin(), data.end()));
    const GgufFile f = parse_gguf(src, "fuzz.gguf");
    if (auto e = check_file(f, data); !e.empty()) return e;
    return check_tree_of(f, data);
  });
}

// Whether `f` is a vision projector (general.architecture "clip").
bool is_clip(const GgufFile& f) {
  for (const KeyValue& kv : f.kv) {
    if (kv.key != "general.architecture") continue;
    const auto* s = std::get_if<std::string>(&kv.value.data);
    return s && *s == "clip";
  }
  return false;
}

// The reason `why` is one line without a control byte, else what is wrong with it.
std::string one_line(const std::string& why, std::string_view what) {
  if (why.empty()) return fmt::format("{} without a reason", what);
  for (const char ch : why) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return fmt::format("{}: a control byte in '{}'", what, why);
  }
  return "";
}

// A vision projector paired with the text model of each of the vision table's pairs
// (corpus::vision_pairs): hf/ of the pair is the vision-language model, or the text model alone
// with a one-line reason; each weight's GGUF tensors are the pair's and hold its elements; every
// file of hf/ is JSON or reads as check_node reads.
std::string check_vision_of(const GgufFile& projector, std::span<const std::uint8_t> data) {
  Rng rng(data);
  const TreeOptions options = options_for(rng);
  for (const corpus::VisionPair& pair : corpus::vision_pairs()) {
    Model model;
    model.sources.push_back(std::make_unique<MemorySource>(pair.text));
    model.file = parse_gguf(*model.sources.front(), pair.name);
    Model proj;
    proj.sources.push_back(
        std::make_unique<MemorySource>(std::vector<std::uint8_t>(data.begin(), data.end())));
    proj.file = projector;
    try {
      attach_projector(model, std::move(proj));
    } catch (const ParseError& e) {
      if (auto why = one_line(e.what(), "a refused pairing"); !why.empty()) return why;
      continue;
    }
    const GgufFile paired = paired_file(model);
    const HfRendering hf = render_hf(model.file, &paired, &model.projector->file);
    if (!hf.model.model) return pair.name + ": the text model has no hf/: " + hf.model.reason;
    if (!hf.vision) return pair.name + ": a projector rendered no vision result";
    if (!hf.vision->model) {
      if (auto why = one_line(hf.vision->reason, "a refused projector"); !why.empty()) return why;
      continue;
    }
    for (const HfWeight& w : hf.vision->model->weights) {
      std::uint64_t held = 0;  // the elements of its tensors: the source and its parts
      std::vector<std::size_t> tensors = {w.source};
      tensors.insert(tensors.end(), w.parts.begin(), w.parts.end());
      for (const std::size_t t : tensors) {
        if (t >= paired.tensors.size()) return w.hf_name + ": a tensor past the pair's";
        held += paired.tensors[t].n_elements;
      }
      std::uint64_t elements = 1;
      for (const std::uint64_t d : w.shape) {
        if (d != 0 && elements > UINT64_MAX / d) return w.hf_name + ": its shape overflows";
        elements *= d;
      }
      if (elements > held) {
        return fmt::format("{}: {} elements from tensors of {}", w.hf_name, elements, held);
      }
    }
    std::vector<std::string> warnings;
    const FolderResult folder = hf_folder_layout(paired, hf, options, warnings);
    if (!folder.folder) {
      if (auto why = one_line(folder.reason, "hf/ of a pair refused"); !why.empty()) return why;
      // A projector never takes hf/ from the text model: without it, hf/ fails as well.
      std::vector<std::string> alone;
      if (hf_folder_layout(model.file, render_hf(model.file), options, alone).folder) {
        return fmt::format("{}: the projector took hf/ from the text model: {}", pair.name,
                           folder.reason);
      }
      continue;
    }
    const ContentReader reader(
        paired, {model.sources.front().get(), model.projector->sources.front().get()});
    for (const FolderFile& file : folder.folder->files) {
      if (!file.layout) {
        if (!nlohmann::json::accept(file.text)) return "hf/" + file.name + " of a pair is not JSON";
        continue;
      }
      const Node n = composite_node(file);
      if (auto e = check_node(reader, paired, n, "hf/" + n.name, data, rng); !e.empty()) return e;
    }
  }
  return "";
}

std::string check_hf(std::span<const std::uint8_t> data) {
  return guarded([&] {
    const MemorySource src(std::vector<std::uint8_t>(data.begin(), data.end()));
    const GgufFile f = parse_gguf(src, "fuzz.gguf");
    if (auto e = check_file(f, data); !e.empty()) return e;
    if (is_clip(f)) {
      if (auto e = check_vision_of(f, data); !e.empty()) return e;
    }
    return check_hf_of(f, data);
  });
}

}  // namespace ggufs::fuzz
