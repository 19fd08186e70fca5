// The GGUF container model (header, metadata key/values, tensor infos) and its validating parser.
// Format: GGUF spec (gguf.md) as summarised in shared the GGUF specification, ggml docs/gguf.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ggufs/byte_source.h"

namespace ggufs {

/// GGUF metadata value types (the GGUF specification, ggml docs/gguf.md).
enum class ValueType : std::uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

/// The spec's name of a value type: "uint8", "float32", "string", "array", …
std::string_view value_type_name(ValueType t);

struct Value;

/// An array value: its element type and elements. Elements are stored packed by kind, not as
/// one Value each, so a 256 000-token vocabulary costs its bytes plus 8 bytes per token
/// (scalars: 8 bytes each; strings: their bytes in one buffer plus an 8-byte end offset;
/// nested arrays, which the spec allows and ggml does not: one Array each).
class Array {
 public:
  Array() = default;
  explicit Array(ValueType elem_type) : elem_type_(elem_type) {}
  /// Builds an array from whole Values; throws std::invalid_argument if an item's type is not
  /// `elem_type` (or its data does not match its type).
  Array(ValueType elem_type, const std::vector<Value>& items);

  ValueType elem_type() const { return elem_type_; }
  /// Number of elements.
  std::size_t size() const;
  /// Room for `n` elements without reallocating (string bytes grow as appended).
  void reserve(std::size_t n);
  /// Room for `bytes` bytes of string elements in all (kString arrays; ignored otherwise).
  void reserve_string_bytes(std::size_t bytes);

  /// Appends a Value of the element type; throws std::invalid_argument otherwise.
  void push_back(const Value& v);
  /// Appends a string element (only for an array of kString; throws std::invalid_argument).
  void push_string(std::string_view s);
  /// Appends a scalar element given as its 8-byte form (see scalar_bits); kString and kArray
  /// elements are refused with std::invalid_argument.
  void push_scalar_bits(std::uint64_t bits);
  /// Appends a nested array (only for an array of kArray; throws std::invalid_argument).
  void push_array(Array a);

  /// Element `i` as a Value (a copy; strings and nested arrays are copied too).
  /// Throws std::out_of_range if i >= size().
  Value at(std::size_t i) const;
  /// String element `i`, viewed in place (kString arrays only; throws std::logic_error else).
  std::string_view string_at(std::size_t i) const;
  /// Nested array element `i` (kArray arrays only; throws std::logic_error else).
  const Array& array_at(std::size_t i) const;

  /// The 8-byte form of a scalar: unsigned as uint64, signed as int64 two's complement, float32
  /// and float64 as their IEEE bits (zero-extended), bool as 0/1.
  static std::uint64_t scalar_bits(const Value& v);

  /// Same element type and elements (floats compared by their bits).
  bool operator==(const Array&) const = default;

 private:
  ValueType elem_type_ = ValueType::kUint8;
  std::vector<std::uint64_t> scalars_;  // scalar elements (scalar_bits)
  std::string chars_;                   // string elements, back to back
  std::vector<std::uint64_t> ends_;     // end of string element i in chars_
  std::vector<Array> arrays_;           // nested array elements
};

/// One metadata value. Unsigned integers are held as uint64_t, signed as int64_t, float32 as
/// float, float64 as double, bool as bool, string as its raw bytes (not checked for UTF-8).
struct Value {
  ValueType type = ValueType::kUint8;
  std::variant<std::uint64_t, std::int64_t, float, double, bool, std::string, Array> data;
};

/// One metadata key/value pair.
struct KeyValue {
  std::string key;
  Value value;
  std::uint64_t offset = 0;  ///< byte offset of the pair (its key length) in the file
};

/// One tensor info, with the derived sizes.
struct TensorInfo {
  std::string name;
  std::uint32_t n_dims = 0;
  std::array<std::uint64_t, 4> ne{1, 1, 1, 1};  ///< elements per dimension, ne[0] fastest; padded
  std::uint32_t type = 0;                       ///< ggml type id (may be removed or unknown)
  std::uint64_t offset = 0;       ///< offset of the data relative to the data section (bytes)
  std::uint64_t file_offset = 0;  ///< absolute offset of the data in the file (bytes)
  std::uint64_t n_elements = 0;   ///< ne[0] × ne[1] × ne[2] × ne[3]
  std::optional<std::uint64_t> n_bytes;  ///< stored size; nullopt for a removed/unknown type
  std::uint64_t info_offset = 0;         ///< byte offset of this tensor info in the file
  std::uint32_t shard = 0;  ///< which file of a split model holds it (GgufFile::shards index)
};

/// One file of a split model (llama.cpp's gguf-split, the GGUF specification, ggml docs/gguf.md).
struct Shard {
  std::string path;  ///< as found next to the first shard; used in messages
  std::uint64_t tensor_count = 0;
  std::uint64_t data_offset = 0;  ///< start of its data section (bytes)
  std::uint64_t file_size = 0;
};

/// A parsed and validated GGUF file.
struct GgufFile {
  std::string path;           ///< as given by the user; used in messages
  std::uint32_t version = 0;  ///< 1, 2 or 3 (version 1: 32-bit counts, lengths and dims)
  /// Byte order of every number in the file (metadata values are converted to host order when
  /// parsed; tensor data stays as stored). Detected from the version field (the GGUF specification,
  /// ggml docs/gguf.md).
  bool big_endian = false;
  std::uint64_t tensor_count = 0;
  std::uint64_t kv_count = 0;
  std::uint32_t alignment = 32;   ///< general.alignment, default 32
  std::uint64_t data_offset = 0;  ///< start of the data section (bytes)
  std::uint64_t file_size = 0;
  std::vector<KeyValue> kv;
  std::vector<TensorInfo> tensors;
  /// The files of a split model, in order (shard i holds the tensors with shard == i); empty
  /// for a single file. Header fields above are those of the first shard, except tensor_count
  /// (all shards).
  std::vector<Shard> shards;
};

/// Parses and validates a whole GGUF file before anything is served (the GGUF specification, ggml
/// docs/gguf.md): magic, version 1, 2 or 3, either byte order, every count, length, value type,
/// dimension, type id and offset checked against the file size before allocating; unique non-empty
/// keys; general.alignment a uint32 power of two; unique tensor names of at most 64 bytes; n_dims ≤
/// 4; ne[0] a multiple of the block size; aligned, in-bounds, non-overlapping tensor data. Tensors
/// of removed or unknown type ids are kept (with n_bytes = nullopt) and their data is not checked.
/// Throws ParseError (file, byte offset, problem) on invalid input, IoError on read failure.
GgufFile parse_gguf(const ByteSource& src, const std::string& path);

}  // namespace ggufs
