// model.gguf: the whole model as one GGUF file; for a split model, the merge llama.cpp's
// llama-gguf-split writes, laid out without copying any tensor data.
#include <fmt/format.h>

#include "ggufs/gguf_writer.h"
#include "ggufs/model_views.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

constexpr std::string_view kSplitCountKey = "split.count";

std::uint64_t align_up(std::uint64_t n, std::uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// ggml_n_dims (ggml.c): the index of the last ne other than 1, plus one; at least 1.
std::uint32_t ggml_n_dims(const TensorInfo& t) {
  std::uint32_t n = 4;
  while (n > 1 && t.ne[n - 1] == 1) --n;
  return n;
}

}  // namespace

std::optional<ModelLayout> merged_gguf_layout(const GgufFile& file, const TreeOptions&,
                                              std::vector<std::string>& warnings) {
  ModelLayout out;
  if (file.shards.empty()) {
    out.pieces.push_back({Piece::Kind::kSource, 0, file.file_size, 0, 0, 0, ViewData::kStored});
    out.what = "GGUF: the model file as it is";
    return out;
  }
  if (file.big_endian) {
    warnings.push_back("model.gguf is not offered: the split model is big-endian");
    return std::nullopt;
  }
  for (const TensorInfo& t : file.tensors) {
    if (!t.n_bytes) {
      warnings.push_back(fmt::format(
          "model.gguf is not offered: tensor '{}' has type id {}, whose size is unknown",
          printable(t.name), t.type));
      return std::nullopt;
    }
  }

  // The header as ggml's gguf_write_to_buf writes it (GGUF v3, 64-bit counts).
  ByteWriter w(/*big_endian=*/false, /*version=*/3);
  for (const char c : std::string_view("GGUF")) w.u8(static_cast<std::uint8_t>(c));
  w.u32(3);
  w.u64(file.tensors.size());
  std::uint64_t n_kv = 0;
  for (const KeyValue& kv : file.kv) n_kv += kv.key != kSplitCountKey;
  w.u64(n_kv + 1);
  auto write_kv = [&](std::string_view key, const Value& v) {
    w.str(key);
    w.u32(static_cast<std::uint32_t>(v.type));
    w.value(v);
  };
  for (const KeyValue& kv : file.kv) {
    if (kv.key != kSplitCountKey) write_kv(kv.key, kv.value);
  }
  write_kv(kSplitCountKey, Value{ValueType::kUint16, std::uint64_t{0}});
  const std::uint64_t alignment = file.alignment;
  std::uint64_t offset = 0;  // relative to the data section
  for (const TensorInfo& t : file.tensors) {
    w.str(t.name);
    const std::uint32_t n_dims = ggml_n_dims(t);
    w.u32(n_dims);
    for (std::uint32_t d = 0; d < n_dims; ++d) w.u64(t.ne[d]);
    w.u32(t.type);
    w.u64(offset);
    offset += align_up(*t.n_bytes, alignment);
  }
  w.pad_to(alignment);
  std::vector<std::uint8_t>& header = w.data();
  out.text.assign(header.begin(), header.end());

  std::uint64_t at = 0;
  auto add = [&](Piece p) {
    p.at = at;
    at += p.size;
    if (p.size > 0) out.pieces.push_back(p);
  };
  add({Piece::Kind::kText, 0, out.text.size(), 0, 0, 0, ViewData::kStored});
  for (const TensorInfo& t : file.tensors) {
    add({Piece::Kind::kSource, 0, *t.n_bytes, t.file_offset, t.shard, 0, ViewData::kStored});
    add({Piece::Kind::kZeros, 0, align_up(*t.n_bytes, alignment) - *t.n_bytes, 0, 0, 0,
         ViewData::kStored});
  }
  out.what = fmt::format("GGUF: the {} shards merged as llama-gguf-split --merge writes them",
                         file.shards.size());
  return out;
}

}  // namespace ggufs
