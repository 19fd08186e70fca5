// Our own GGUF writer: builds valid version-3 little-endian files for the tests, the sample
// model and the benchmark; its low-level ByteWriter also renders the header of model.gguf
// (merged_gguf.cpp) and crafts malformed files for the tests.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ggufs/gguf.h"

namespace ggufs {

/// Appends primitives to a byte vector (GGUF layout, the GGUF specification, ggml docs/gguf.md):
/// little-endian unless `big_endian`; GGUF version 1 files have 32-bit counts and lengths (size()).
class ByteWriter {
 public:
  ByteWriter() = default;
  ByteWriter(bool big_endian, std::uint32_t version) : big_endian_(big_endian), v1_(version == 1) {}

  void u8(std::uint8_t v);
  void u16(std::uint16_t v);
  void u32(std::uint32_t v);
  void u64(std::uint64_t v);
  void f32(float v);
  void f64(double v);
  /// A count or length: uint64, or uint32 in a version 1 file.
  void size(std::uint64_t n);
  /// A GGUF string: its byte length (size()), then the bytes.
  void str(std::string_view s);
  void bytes(std::span<const std::uint8_t> b);
  /// Appends zero bytes up to the next multiple of `alignment`.
  void pad_to(std::uint64_t alignment);
  /// A value of `v.type` (no type tag); arrays write element type, count, elements. Throws
  /// std::invalid_argument when `v.data` does not hold what `v.type` needs (or an array item's
  /// type differs from the array's element type).
  void value(const Value& v);
  std::vector<std::uint8_t>& data() { return data_; }

 private:
  std::vector<std::uint8_t> data_;
  bool big_endian_ = false;
  bool v1_ = false;
};

/// Collects key/values and tensors, then lays them out as a GGUF v3 file: header, key/values,
/// tensor infos, padding to the alignment, tensor data each at an aligned offset (zero padding
/// between tensors, none after the last). Keys and tensors are written in the order added, with
/// general.alignment first when it is implied by set_alignment(). The writer does not validate
/// names, keys or sizes, so tests can also build files the parser must refuse.
class GgufWriter {
 public:
  /// Receives a streamed tensor's stored bytes, in order, in chunks of any size.
  using ByteSink = std::function<void(std::span<const std::uint8_t>)>;
  /// Produces a streamed tensor's stored bytes at write time by calling the sink, in order; it
  /// must deliver exactly the `n_bytes` given to add_tensor_stream() in total (else finish() and
  /// write_file() throw std::logic_error). Called once per finish() / write_file() call.
  using TensorProducer = std::function<void(const ByteSink& sink)>;

  void add(std::string key, Value v);
  void add_string(std::string key, std::string v);
  void add_u32(std::string key, std::uint32_t v);
  void add_f32(std::string key, float v);
  /// `data` must be the tensor's exact stored bytes for ggml type `type` and dims `ne`.
  void add_tensor(std::string name, std::uint32_t type, std::vector<std::uint64_t> ne,
                  std::vector<std::uint8_t> data);
  /// A tensor of `n_bytes` stored bytes produced only at write time by `produce`, so a large
  /// tensor (the benchmark model) never has to be held in memory; write_file() streams it to
  /// disk through a small buffer.
  void add_tensor_stream(std::string name, std::uint32_t type, std::vector<std::uint64_t> ne,
                         std::uint64_t n_bytes, TensorProducer produce);
  /// Alignment of the data section and of each tensor; also written as general.alignment
  /// when it differs from the default 32.
  void set_alignment(std::uint32_t a) { alignment_ = a; }

  /// Writes GGUF `version` (1, 2 or 3; version 1 with 32-bit counts, lengths and dimensions)
  /// in big-endian byte order if `big_endian`. Tensor data is written as given: the caller
  /// supplies it in the file's byte order.
  void set_format(std::uint32_t version, bool big_endian) {
    version_ = version;
    big_endian_ = big_endian;
  }
  /// The complete file. Throws std::invalid_argument for alignment 0.
  std::vector<std::uint8_t> finish() const;
  /// finish() written to `path` (created or truncated; removed again on failure), streaming
  /// the tensor data instead of building the whole file in memory. Throws IoError.
  void write_file(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::uint32_t type;
    std::vector<std::uint64_t> ne;
    std::vector<std::uint8_t> data;  ///< the stored bytes, unless `produce` is set
    std::uint64_t n_bytes = 0;       ///< data.size(), or the size `produce` delivers
    TensorProducer produce;          ///< set for a streamed tensor
  };
  /// Header, key/values and tensor infos, padded to the alignment: everything before the data.
  std::vector<std::uint8_t> header() const;
  /// The whole file, in order, to `out`.
  void emit(const ByteSink& out) const;
  std::vector<std::pair<std::string, Value>> kv_;
  std::vector<Tensor> tensors_;
  std::uint32_t alignment_ = 32;
  std::uint32_t version_ = 3;
  bool big_endian_ = false;
};

}  // namespace ggufs
