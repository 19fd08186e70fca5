#include "harness.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/content.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
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
          t.n_elements > 0 &&
          std::memcmp(whole.data() + n.text.size(), data.data() + t.file_offset,
                      static_cast<std::size_t>(t.n_elements * 4)) != 0) {
        return path + ": F32 decode differs from the stored bytes";
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
      if (n.name == "model.safetensors" && have_whole) {
        std::uint64_t len = 0;
        for (int b = 7; b >= 0; --b) len = len << 8 | static_cast<std::uint8_t>(whole[b]);
        if (len % 8 != 0 || 8 + len > whole.size() ||
            !nlohmann::json::accept(whole.begin() + 8, whole.begin() + 8 + len)) {
          return path + ": header is not valid JSON";
        }
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

std::string check_tree_of(const GgufFile& f, std::span<const std::uint8_t> data) {
  const MemorySource backing(std::vector<std::uint8_t>(data.begin(), data.end()));
  const Tree tree(f);
  const ContentReader reader(f, backing);
  Rng rng(data);
  for (Ino ino = 1; ino <= tree.count(); ++ino) {
    const Node& n = *tree.node(ino);
    if (ino != kRootIno) {
      if (!usable_name(n.name)) return fmt::format("inode {}: unusable name '{}'", ino, n.name);
      if (tree.lookup(n.parent, n.name) != ino) {
        return fmt::format("inode {}: '{}' looks up to another node", ino, n.name);
      }
    }
    if (auto e = check_node(reader, f, n, n.name, data, rng); !e.empty()) return e;
  }
  if (tree.node(0) || tree.node(tree.count() + 1)) return "node() beyond the tree";
  const Node& json = *tree.node(tree.lookup(kRootIno, "gguf.json"));
  if (!nlohmann::json::accept(json.text)) return "gguf.json is not valid JSON";
  const Node& tsv = *tree.node(tree.lookup(kRootIno, "tensors.tsv"));
  if (static_cast<std::uint64_t>(std::count(tsv.text.begin(), tsv.text.end(), '\n')) !=
      f.tensors.size() + 1) {
    return "tensors.tsv does not have one line per tensor";
  }
  return "";
}

template <typename F>
std::string guarded(F&& body) {
  try {
    return body();
  } catch (const ParseError& e) {
    // Refused: the normal outcome for most inputs. The message may quote the file, but only
    // escaped: no control byte may reach a terminal.
    for (const char ch : e.problem()) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c == 0x7f) return fmt::format("unescaped control byte in '{}'", e.what());
    }
    return "";
  } catch (const std::exception& e) {
    return fmt::format("unexpected exception: {}", e.what());
  }
}

}  // namespace

std::string check_parse(std::span<const std::uint8_t> data) {
  return guarded([&] {
    const MemorySource src(std::vector<std::uint8_t>(data.begin(), data.end()));
    return check_file(parse_gguf(src, "fuzz.gguf"), data);
  });
}

std::string check_tree(std::span<const std::uint8_t> data) {
  return guarded([&] {
    const MemorySource src(std::vector<std::uint8_t>(data.begin(), data.end()));
    const GgufFile f = parse_gguf(src, "fuzz.gguf");
    if (auto e = check_file(f, data); !e.empty()) return e;
    return check_tree_of(f, data);
  });
}

}  // namespace ggufs::fuzz
