// The read path. Decoded reads map [offset, offset + size) to the blocks that cover it, read
// and decode those blocks in bounded chunks, and copy out exactly the requested bytes.
#include "ggufs/content.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <numeric>
#include <span>
#include <vector>

#include "ggufs/byte_order.h"
#include "ggufs/decode.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/half.h"
#include "ggufs/hf_weights.h"
#include "ggufs/mlx_blocks.h"
#include "ggufs/names.h"
#include "mlx_folder.h"

namespace ggufs {
namespace {

// Float32 output decoded per step: large enough to amortise the pread, small enough to stay in
// L2 and to bound per-thread memory.
constexpr std::uint64_t kChunkOutputBytes = 256 * 1024;

// The first piece of a kComposite node that ends after byte `offset` (pieces are in order).
std::vector<Piece>::const_iterator piece_at(const Node& node, std::uint64_t offset) {
  return std::upper_bound(node.pieces.begin(), node.pieces.end(), offset,
                          [](std::uint64_t off, const Piece& p) { return off < p.at + p.size; });
}

// Adds `add` to each of `n` float32 values (hf/'s gemma norms: transformers' w - 1 in float32),
// then takes log(-v) of each where `log_negated` (hf/'s mamba A_log from the converter's
// A = -exp(A_log), in float32).
void add_to(float* values, std::uint64_t n, float add, bool log_negated) {
  if (add != 0) {
    for (std::uint64_t i = 0; i < n; ++i) values[i] += add;
  }
  if (log_negated) {
    for (std::uint64_t i = 0; i < n; ++i) values[i] = std::log(-values[i]);
  }
}

// `n` float32 values as 16-bit elements of form `d` (kFloat16 or kBFloat16), rounded as the
// views say (tree.h, ViewData).
void to_halves(ViewData d, const float* in, std::size_t n, std::uint16_t* out) {
  if (d == ViewData::kFloat16) {
    floats_to_halves_as_numpy(in, n, out);
  } else {
    floats_to_bf16_as_torch(in, n, out);
  }
}

// Bytes [skip, skip + size) of float32 `values` in element form `d` (as stored, or rounded to
// 16 bits by to_halves) to `out`: the gathered elements of a transposed or interleaved piece.
void copy_gathered(ViewData d, const std::vector<float>& values, char* out, std::size_t size,
                   std::uint64_t skip) {
  const char* from = reinterpret_cast<const char*>(values.data());
  thread_local std::vector<std::uint16_t> halves;
  if (d != ViewData::kFloat32) {
    halves.resize(values.size());
    to_halves(d, values.data(), values.size(), halves.data());
    from = reinterpret_cast<const char*>(halves.data());
  }
  std::memcpy(out, from + skip, size);
}

}  // namespace

std::size_t ContentReader::read(const Node& node, char* dst, std::size_t size,
                                std::uint64_t offset) const {
  if (offset >= node.size) return 0;
  size = static_cast<std::size_t>(std::min<std::uint64_t>(size, node.size - offset));
  switch (node.kind) {
    case NodeKind::kDirectory:
      return 0;
    case NodeKind::kText:
      std::memcpy(dst, node.text.data() + offset, size);
      return size;
    case NodeKind::kRaw: {
      const TensorInfo& t = tensor(node.tensor);
      if (source(t).read_at(t.file_offset + offset, dst, size) != size) {
        throw truncated(t, offset + size);
      }
      return size;
    }
    case NodeKind::kDecoded:
      return read_decoded(node, dst, size, offset);
    case NodeKind::kComposite:
      return read_composite(node, dst, size, offset);
  }
  return 0;
}

std::optional<ContentReader::Extent> ContentReader::stored_extent(const Node& node,
                                                                  std::size_t size,
                                                                  std::uint64_t offset) const {
  if (node.kind == NodeKind::kComposite) return composite_extent(node, size, offset);
  if (node.kind != NodeKind::kRaw && node.kind != NodeKind::kDecoded) return std::nullopt;
  const TensorInfo& t = tensor(node.tensor);
  // Float32 data of F32 tensors is the stored bytes when both are little-endian (the .npy
  // header is not).
  static_assert(std::endian::native == std::endian::little);
  if (node.kind == NodeKind::kDecoded &&
      (node.view->data != ViewData::kFloat32 || t.type != GGML_TYPE_F32 || file_.big_endian ||
       offset < node.text.size())) {
    return std::nullopt;
  }
  const ByteSource& src = source(t);
  if (src.fd() < 0) return std::nullopt;
  if (offset >= node.size) return Extent{src.fd(), 0, 0, path_of(t)};
  size = static_cast<std::size_t>(std::min<std::uint64_t>(size, node.size - offset));
  const std::uint64_t at =
      t.file_offset + (offset - (node.kind == NodeKind::kDecoded ? node.text.size() : 0));
  src.check(at, size);
  return Extent{src.fd(), at, size, path_of(t)};
}

std::optional<ContentReader::Extent> ContentReader::composite_extent(const Node& node,
                                                                     std::size_t size,
                                                                     std::uint64_t offset) const {
  if (offset >= node.size) return std::nullopt;  // read() answers 0 bytes
  size = static_cast<std::size_t>(std::min<std::uint64_t>(size, node.size - offset));
  // Spliced only when the whole range lies in one kSource piece (a reply is one buffer).
  const auto it = piece_at(node, offset);
  if (it == node.pieces.end() || it->kind != Piece::Kind::kSource ||
      offset + size > it->at + it->size) {
    return std::nullopt;
  }
  const ByteSource& src = *sources_.at(it->shard);
  if (src.fd() < 0) return std::nullopt;
  const std::uint64_t at = it->from + (offset - it->at);
  src.check(at, size);
  return Extent{src.fd(), at, size, shard_path(it->shard)};
}

std::size_t ContentReader::read_decoded(const Node& node, char* dst, std::size_t size,
                                        std::uint64_t offset) const {
  std::size_t done = 0;
  // The .npy header, if any, precedes the elements.
  if (offset < node.text.size()) {
    done = static_cast<std::size_t>(std::min<std::uint64_t>(size, node.text.size() - offset));
    std::memcpy(dst, node.text.data() + offset, done);
    if (done == size) return size;
    offset += done;
  }
  read_elements(node.tensor, node.view->data, dst + done, size - done, offset - node.text.size(),
                size);
  return size;
}

void ContentReader::read_elements(std::size_t tensor, ViewData data, char* out, std::size_t size,
                                  std::uint64_t begin, std::size_t request, float add,
                                  bool log_negated) const {
  const TensorInfo& t = this->tensor(tensor);
  const TypeTraits& tr = *type_traits(t.type);
  if (data == ViewData::kStored) {  // a plain type's stored bytes, in little-endian order
    if (!file_.big_endian) {
      if (source(t).read_at(t.file_offset + begin, out, size) != size) {
        throw truncated(t, begin + size);
      }
    } else {
      // Swap whole elements: widen the range to element boundaries in scratch.
      const std::uint64_t es = tr.type_size, lo = begin / es * es;
      const std::uint64_t hi = (begin + size + es - 1) / es * es;
      thread_local std::vector<std::uint8_t> elems;
      elems.resize(static_cast<std::size_t>(hi - lo));
      if (source(t).read_at(t.file_offset + lo, elems.data(), elems.size()) != elems.size()) {
        throw truncated(t, hi);
      }
      swap_elements(elems.data(), elems.size(), tr.type_size);
      std::memcpy(out, elems.data() + (begin - lo), size);
    }
    return;
  }
  // float32 output is decoded in place; other element types go through float32 scratch.
  const bool f32_out = data == ViewData::kFloat32;
  const std::uint64_t es = element_bytes(data);
  const std::uint64_t end = begin + size;  // byte range of the element data
  const std::uint64_t block_out = std::uint64_t{tr.block_size} * es;
  const std::uint64_t chunk_blocks =
      std::max<std::uint64_t>(1, kChunkOutputBytes / (tr.block_size * sizeof(float)));

  thread_local std::vector<std::uint8_t> raw;
  thread_local std::vector<float> scratch;
  thread_local std::vector<std::uint16_t> halves;
  for (std::uint64_t b = begin / block_out, last = (end + block_out - 1) / block_out; b < last;) {
    const std::uint64_t n = std::min(chunk_blocks, last - b);
    const std::size_t raw_bytes = static_cast<std::size_t>(n * tr.type_size);
    raw.resize(raw_bytes);
    const std::uint64_t at = b * tr.type_size;
    if (source(t).read_at(t.file_offset + at, raw.data(), raw_bytes) != raw_bytes) {
      throw truncated(t, at + raw_bytes);
    }
    // Big-endian files: plain types only (the tree offers no decoded file for others).
    if (file_.big_endian) swap_elements(raw.data(), raw_bytes, tr.type_size);
    const std::uint64_t chunk_begin = b * block_out, chunk_end = (b + n) * block_out;
    const std::uint64_t lo = std::max(begin, chunk_begin), hi = std::min(end, chunk_end);
    char* target = out + (lo - begin);
    if (f32_out && lo == chunk_begin && hi == chunk_end &&
        reinterpret_cast<std::uintptr_t>(target) % alignof(float) == 0) {
      // Whole chunk: no copy. A request this large (in-process; replies through the mount are
      // at most 1 MiB) is not read back from the caches soon: stream it past them.
      float* const floats = reinterpret_cast<float*>(target);
      if (request >= kStreamingMinBytes && add == 0 && !log_negated) {
        decode_streaming(tr, raw.data(), floats, n);
      } else {
        tr.to_float(raw.data(), floats, n);
        add_to(floats, n * tr.block_size, add, log_negated);
      }
    } else {
      scratch.resize(static_cast<std::size_t>(n * tr.block_size));
      tr.to_float(raw.data(), scratch.data(), n);
      add_to(scratch.data(), scratch.size(), add, log_negated);
      const char* from = reinterpret_cast<const char*>(scratch.data());
      if (!f32_out) {  // 16-bit elements: only those this range touches
        const std::size_t e0 = static_cast<std::size_t>((lo - chunk_begin) / es);
        const std::size_t e1 = static_cast<std::size_t>((hi - chunk_begin + es - 1) / es);
        halves.resize(scratch.size());
        to_halves(data, scratch.data() + e0, e1 - e0, halves.data() + e0);
        from = reinterpret_cast<const char*>(halves.data());
      }
      std::memcpy(target, from + (lo - chunk_begin), hi - lo);
    }
    b += n;
  }
}

std::size_t ContentReader::read_composite(const Node& node, char* dst, std::size_t size,
                                          std::uint64_t offset) const {
  const std::uint64_t end = offset + size;
  for (auto it = piece_at(node, offset); it != node.pieces.end() && it->at < end; ++it) {
    const Piece& p = *it;
    const std::uint64_t lo = std::max(offset, p.at), hi = std::min(end, p.at + p.size);
    char* const to = dst + (lo - offset);
    const std::size_t n = static_cast<std::size_t>(hi - lo);
    switch (p.kind) {
      case Piece::Kind::kText:
        std::memcpy(to, node.text.data() + p.from + (lo - p.at), n);
        break;
      case Piece::Kind::kZeros:
        std::memset(to, 0, n);
        break;
      case Piece::Kind::kSource: {
        const std::uint64_t at = p.from + (lo - p.at);
        if (sources_.at(p.shard)->read_at(at, to, n) != n) {
          throw IoError(
              fmt::format("{}: file ends before byte {}", printable(shard_path(p.shard)), at + n),
              Fault::kTruncated);
        }
        break;
      }
      case Piece::Kind::kTensor:
        read_piece_elements(p, to, n, lo - p.at, size);
        break;
      case Piece::Kind::kMxfp4Blocks:
      case Piece::Kind::kMxfp4Scales:
        read_mxfp4(p, to, n, lo - p.at);
        break;
      case Piece::Kind::kMlxWeight:
      case Piece::Kind::kMlxScales:
      case Piece::Kind::kMlxBiases:
      case Piece::Kind::kMlxScaleBytes:
        read_mlx(p, to, n, lo - p.at);
        break;
    }
  }
  return size;
}

void ContentReader::read_piece_elements(const Piece& p, char* out, std::size_t size,
                                        std::uint64_t begin, std::size_t request) const {
  const std::uint64_t es = p.data == ViewData::kStored
                               ? type_traits(tensor(p.tensor).type)->type_size
                               : element_bytes(p.data);
  const std::uint64_t first = p.from * es;  // byte of the tensor's elements the piece starts at
  const TensorInfo& t = tensor(p.tensor);
  const std::uint64_t row_bytes = t.ne[0] * es;
  // The orders that move whole runs of `run` bytes (q/k rows, value heads): run i of the piece
  // is the tensor's run source(i) after `first`, each part within one run one contiguous read.
  const auto read_runs = [&](std::uint64_t run, auto source) {
    for (std::uint64_t done = 0; done < size;) {
      const std::uint64_t at = begin + done, within = at % run;
      const std::uint64_t n = std::min<std::uint64_t>(size - done, run - within);
      read_elements(p.tensor, p.data, out + done, static_cast<std::size_t>(n),
                    first + source(at / run) * run + within, request, p.add, p.log_negated);
      done += n;
    }
  };
  switch (p.order) {
    case Piece::Order::kAsStored:
      return read_elements(p.tensor, p.data, out, size, first + begin, request, p.add,
                           p.log_negated);
    case Piece::Order::kPermuteRows: {
      const std::uint64_t rows = p.size / row_bytes;
      return read_runs(row_bytes,
                       [&](std::uint64_t r) { return hf_permuted_row(r, rows, p.n_head); });
    }
    case Piece::Order::kUntileHeads:
      // Within each group of p.rows value heads.
      return read_runs(p.cols * es, [&](std::uint64_t i) {
        return i - i % p.rows + hf_untiled_head(i % p.rows, p.n_head, p.rows);
      });
    case Piece::Order::kTransposed:
      return read_transposed(p, out, size, begin, request);
    case Piece::Order::kInterleavedTransposed:
      return read_interleaved(p, out, size, begin, request);
  }
}

void ContentReader::read_interleaved(const Piece& p, char* out, std::size_t size,
                                     std::uint64_t begin, std::size_t request) const {
  // Output row c holds column c of both sources, interleaved (2·rows elements): for each source
  // row r, the output rows c0..c1 the range touches take one contiguous run of it (c0..c1),
  // decoded to float32 once, then scattered.
  const std::uint64_t width = 2 * p.rows, es = element_bytes(p.data);
  const std::uint64_t e0 = begin / es, e1 = (begin + size + es - 1) / es;  // output elements
  const std::uint64_t c0 = e0 / width, c1 = (e1 - 1) / width;              // output rows
  thread_local std::vector<float> run, gathered;
  run.resize(static_cast<std::size_t>(c1 - c0 + 1));
  gathered.resize(static_cast<std::size_t>(e1 - e0));
  const std::uint64_t q0 = c0 == c1 ? e0 % width : 0;
  std::uint64_t q1 = c0 == c1 ? (e1 - 1) % width + 1 : width;
  if (p.cols == 1) {  // a stack of vectors (the biases): one contiguous run of each source
    const std::uint64_t r0 = q0 / 2, r1 = (q1 - 1) / 2 + 1;
    run.resize(static_cast<std::size_t>(2 * (r1 - r0)));
    for (std::uint64_t j = 0; j < 2; ++j) {
      read_elements(j ? p.tensor2 : p.tensor, ViewData::kFloat32,
                    reinterpret_cast<char*>(run.data() + j * (r1 - r0)),
                    static_cast<std::size_t>((r1 - r0) * sizeof(float)),
                    (p.from + r0) * sizeof(float), request, p.add);
    }
    for (std::uint64_t q = q0; q < q1; ++q) {
      gathered[static_cast<std::size_t>(q - q0)] = run[(q % 2) * (r1 - r0) + q / 2 - r0];
    }
    q1 = q0;  // done
  }
  for (std::uint64_t q = q0; q < q1; ++q) {  // output column q: source q % 2, row q / 2
    read_elements(q % 2 ? p.tensor2 : p.tensor, ViewData::kFloat32,
                  reinterpret_cast<char*>(run.data()), run.size() * sizeof(float),
                  (p.from + (q / 2) * p.cols + c0) * sizeof(float), request, p.add);
    for (std::uint64_t c = c0; c <= c1; ++c) {
      const std::uint64_t e = c * width + q;
      if (e >= e0 && e < e1) gathered[static_cast<std::size_t>(e - e0)] = run[c - c0];
    }
  }
  copy_gathered(p.data, gathered, out, size, begin - e0 * es);
}

void ContentReader::read_mxfp4(const Piece& p, char* out, std::size_t size,
                               std::uint64_t begin) const {
  // Output blocks u0..u1 the range touches, a run within one row at a time (contiguous in its
  // source): ggml's 17-byte blocks read, then rearranged.
  constexpr std::uint64_t kBlock = 17;  // ggml-common.h, block_mxfp4: e, qs[16]
  const std::uint64_t unit = p.kind == Piece::Kind::kMxfp4Blocks ? 16 : 1;
  const std::uint64_t u0 = begin / unit, u1 = (begin + size + unit - 1) / unit;
  thread_local std::vector<std::uint8_t> raw, bytes;
  bytes.resize(static_cast<std::size_t>((u1 - u0) * unit));
  for (std::uint64_t u = u0; u < u1;) {
    const std::uint64_t q = u / p.cols, b = u % p.cols, n = std::min(u1 - u, p.cols - b);
    const bool odd = p.rows == 2 && q % 2;
    const TensorInfo& t = tensor(odd ? p.tensor2 : p.tensor);
    const std::uint64_t at = (p.from + (p.rows == 2 ? q / 2 : q) * p.cols + b) * kBlock;
    raw.resize(static_cast<std::size_t>(n * kBlock));
    if (source(t).read_at(t.file_offset + at, raw.data(), raw.size()) != raw.size()) {
      throw truncated(t, at + raw.size());
    }
    std::uint8_t* to = bytes.data() + (u - u0) * unit;
    for (std::uint64_t k = 0; k < n; ++k, to += unit) {
      const std::uint8_t* block = raw.data() + k * kBlock;
      const std::uint8_t* qs = block + 1;
      if (unit == 1) {
        *to = block[0];
        continue;
      }
      // Codes 2i and 2i + 1: both low nibbles (i < 8) or both high ones (i >= 8).
      for (int i = 0; i < 8; ++i) {
        to[i] = static_cast<std::uint8_t>((qs[2 * i] & 0x0F) | (qs[2 * i + 1] & 0x0F) << 4);
        to[i + 8] = static_cast<std::uint8_t>(qs[2 * i] >> 4 | (qs[2 * i + 1] & 0xF0));
      }
    }
    u += n;
  }
  std::memcpy(out, bytes.data() + (begin - u0 * unit), size);
}

void ContentReader::read_mlx(const Piece& p, char* out, std::size_t size,
                             std::uint64_t begin) const {
  // Only the blocks the range covers, as read_elements does: each row splits into units of
  // whole ggml blocks, whole MLX groups and whole 32-bit words (MLX's stream puts element i at
  // bits [i·bits, (i+1)·bits), so a unit starts on a word), each encoded alone. The range's units
  // go in steps of at most kChunkOutputBytes / 4 elements whose GGUF blocks are contiguous (as
  // stored: across rows; permuted: within one row), one pread a step; the piece keeps one part
  // of the encoding (the packed weight, the scales or the biases). Work per request: its units
  // plus one at each end; buffers per thread: one step's.
  const TensorInfo& t = tensor(p.tensor);
  // Both checked when laid out (mlx/, mlx_tensors).
  const MlxBlockForm& form =
      p.mlx_bits ? *mlx_requantized_form(p.mlx_bits) : *mlx_block_form(t.type);
  const TypeTraits& tr = *type_traits(t.type);
  const std::uint64_t ne0 = t.ne[0];
  // mlx_tensors lays out rows of whole blocks and groups; a unit divides them, else a whole row.
  std::uint64_t unit_elements =
      std::lcm(std::lcm<std::uint64_t>(tr.block_size, form.group_size), std::uint64_t{32});
  if (ne0 % unit_elements != 0) unit_elements = ne0;
  const std::uint64_t units_per_row = ne0 / unit_elements;
  const std::uint64_t unit_out = mlx_row_bytes(p.kind, form, unit_elements);
  const std::uint64_t unit_raw = unit_elements / tr.block_size * tr.type_size;
  const std::uint64_t rows = p.size / (unit_out * units_per_row);
  const std::uint64_t step_units =
      std::max<std::uint64_t>(1, kChunkOutputBytes / sizeof(float) / unit_elements);
  const bool permuted = p.order == Piece::Order::kPermuteRows;
  const auto source_row = [&](std::uint64_t r) {
    return permuted ? hf_permuted_row(r, rows, p.n_head) : r;
  };
  const bool affine = form.mode == MlxMode::kAffine;
  thread_local std::vector<std::uint8_t> raw;
  thread_local std::vector<std::uint32_t> weight;
  thread_local std::vector<float> scales, biases;
  thread_local std::vector<std::uint8_t> scale_bytes;
  thread_local std::vector<float> values;  // a requantized run's float32 values
  const std::uint64_t end = begin + size;
  for (std::uint64_t u = begin / unit_out, last = (end + unit_out - 1) / unit_out; u < last;) {
    const std::uint64_t r = u / units_per_row, k = u % units_per_row;
    const std::uint64_t n =
        std::min({last - u, step_units, permuted ? units_per_row - k : last - u});
    const std::uint64_t at = ((p.from + source_row(r)) * units_per_row + k) * unit_raw;
    raw.resize(static_cast<std::size_t>(n * unit_raw));
    if (source(t).read_at(t.file_offset + at, raw.data(), raw.size()) != raw.size()) {
      throw truncated(t, at + raw.size());
    }
    const std::size_t elements = static_cast<std::size_t>(n * unit_elements);
    const std::size_t words = mlx_weight_words(form, elements);
    const std::size_t groups = mlx_groups(form, elements);
    weight.resize(words);
    scales.resize(affine ? groups : 0);
    biases.resize(affine ? groups : 0);
    scale_bytes.resize(affine ? 0 : groups);
    values.resize(p.mlx_bits ? elements : 0);
    // Each row's run of the step alone: an error names its row.
    for (std::uint64_t v = u; v < u + n;) {
      const std::uint64_t vr = v / units_per_row;
      const std::uint64_t m = std::min(u + n, (vr + 1) * units_per_row) - v;
      const std::size_t e0 = static_cast<std::size_t>((v - u) * unit_elements);
      const std::size_t e = static_cast<std::size_t>(m * unit_elements);
      const std::size_t w0 = mlx_weight_words(form, e0), g0 = mlx_groups(form, e0);
      const std::size_t wn = mlx_weight_words(form, e), gn = mlx_groups(form, e);
      const std::span<const std::uint8_t> blocks(raw.data() + (v - u) * unit_raw,
                                                 static_cast<std::size_t>(m * unit_raw));
      const std::span<float> s = std::span(scales).subspan(affine ? g0 : 0, affine ? gn : 0);
      const std::span<float> b = std::span(biases).subspan(affine ? g0 : 0, affine ? gn : 0);
      const std::span<std::uint8_t> sb =
          std::span(scale_bytes).subspan(affine ? 0 : g0, affine ? 0 : gn);
      const std::span<std::uint32_t> w = std::span(weight).subspan(w0, wn);
      // The piece's part alone (a requantized row needs its scales to pack its words).
      const MlxRow row = p.kind != Piece::Kind::kMlxWeight ? MlxRow{{}, s, b, sb}
                         : p.mlx_bits                      ? MlxRow{w, s, b, sb}
                                                           : MlxRow{w, {}, {}, {}};
      const std::uint64_t gguf_row = p.from + source_row(vr);
      if (p.mlx_bits) {
        const std::span<float> x = std::span(values).subspan(e0, e);
        tr.to_float(blocks.data(), x.data(), e / tr.block_size);
        if (quantize_mlx_row(x, form, row) != MlxRowStatus::kOk) {
          throw UnrepresentableError(
              fmt::format("tensor '{}': row {} holds NaN or infinity, or a group whose range "
                          "or dequantized values overflow float32, which MLX's affine form "
                          "cannot hold (-o mlx_requantize)",
                          printable(t.name), gguf_row));
        }
      } else if (encode_mlx_row(t.type, blocks, row) != MlxRowStatus::kOk) {
        throw UnrepresentableError(fmt::format(
            "tensor '{}': row {} has a block scale MLX's {} form cannot reproduce (an infinite "
            "d, whose d·q + bias is NaN where ggml's d·(q − k) is not; an MXFP4 exponent byte "
            "255, NaN in the OCP MX format)",
            printable(t.name), gguf_row, mlx_mode_name(form.mode)));
      }
      v += m;
    }
    const char* from =
        p.kind == Piece::Kind::kMlxWeight       ? reinterpret_cast<const char*>(weight.data())
        : p.kind == Piece::Kind::kMlxScales     ? reinterpret_cast<const char*>(scales.data())
        : p.kind == Piece::Kind::kMlxScaleBytes ? reinterpret_cast<const char*>(scale_bytes.data())
                                                : reinterpret_cast<const char*>(biases.data());
    const std::uint64_t a = std::max(begin, u * unit_out), z = std::min(end, (u + n) * unit_out);
    std::memcpy(out + (a - begin), from + (a - u * unit_out), static_cast<std::size_t>(z - a));
    u += n;
  }
}

void ContentReader::read_transposed(const Piece& p, char* out, std::size_t size,
                                    std::uint64_t begin, std::size_t request) const {
  // Output element (i, j), i < ne[0], j < ne[1], is GGUF element j·ne[0] + i: for each GGUF row
  // j, the output rows i0..i1 that the range touches take one contiguous run of it, decoded to
  // float32 once, then converted element by element.
  const TensorInfo& t = tensor(p.tensor);
  const std::uint64_t cols = t.ne[1], es = element_bytes(p.data);
  const std::uint64_t e0 = begin / es, e1 = (begin + size + es - 1) / es;  // output elements
  const std::uint64_t i0 = e0 / cols, i1 = (e1 - 1) / cols;                // output rows
  const std::uint64_t width = i1 - i0 + 1;
  thread_local std::vector<float> run, gathered;
  run.resize(static_cast<std::size_t>(width));
  gathered.resize(static_cast<std::size_t>(e1 - e0));
  // Within one output row, only the GGUF rows of its columns in the range.
  const std::uint64_t j0 = i0 == i1 ? e0 % cols : 0, j1 = i0 == i1 ? (e1 - 1) % cols + 1 : cols;
  for (std::uint64_t j = j0; j < j1; ++j) {
    read_elements(p.tensor, ViewData::kFloat32, reinterpret_cast<char*>(run.data()),
                  static_cast<std::size_t>(width * sizeof(float)),
                  (p.from + j * t.ne[0] + i0) * sizeof(float), request, p.add, p.log_negated);
    for (std::uint64_t i = i0; i <= i1; ++i) {
      const std::uint64_t e = i * cols + j;
      if (e >= e0 && e < e1) gathered[static_cast<std::size_t>(e - e0)] = run[i - i0];
    }
  }
  copy_gathered(p.data, gathered, out, size, begin - e0 * es);
}

IoError ContentReader::truncated(const TensorInfo& t, std::uint64_t end) const {
  return IoError(fmt::format("{}: tensor '{}': file ends before byte {}", printable(path_of(t)),
                             printable(t.name), t.file_offset + end),
                 Fault::kTruncated);
}

}  // namespace ggufs
