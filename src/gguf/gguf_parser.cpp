// The validating GGUF parser. Every read goes through one checked, buffered cursor; every count
// and length is checked against the bytes left in the file before anything is allocated, so a
// hostile header can neither crash the parser nor make it allocate more than the file holds.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>
#include <unordered_set>

#include "ggufs/byte_order.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

constexpr std::uint64_t kInt64Max =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
constexpr std::uint32_t kMaxDims = 4;            // ggml's GGML_MAX_DIMS
constexpr std::size_t kMaxTensorNameBytes = 64;  // GGUF spec
constexpr int kMaxArrayDepth = 16;               // nested arrays beyond this are refused (stack)
// Counts are checked against the bytes left in the file, but a sparse file can claim terabytes
// of zeros: vectors are reserved up to this many items only and grow with what is really read.
constexpr std::uint64_t kMaxReserve = 4096;
// Metadata arrays are the exception, up to this many items (8 MB of packed elements): a
// vocabulary of up to a million tokens is then allocated once instead of doubling from 4096.
constexpr std::uint64_t kMaxArrayReserve = std::uint64_t{1} << 20;
constexpr std::uint64_t kStringReserveBytes = 16;  // bytes reserved per string array element
// Memory the parsed metadata may take (the largest vocabularies need a few MB). Checked before each
// string or array is allocated, so a sparse file cannot make the parser allocate or loop for
// ever; the f32/ and npy/ sizes (4 bytes per element plus the .npy header) must fit an off_t.
constexpr std::uint64_t kMaxMetadataBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kMaxDecodedElements = (kInt64Max - 4096) / 4;

// Smallest encoded size of one value of each type, where counts and lengths take `size_bytes`
// (8, or 4 in version 1); bounds array counts before allocating.
std::uint64_t min_value_bytes(ValueType t, std::uint64_t size_bytes) {
  switch (t) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUint16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kString:  // its length
      return size_bytes;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
      return 8;
    case ValueType::kArray:  // uint32 element type + count
      return 4 + size_bytes;
  }
  return 1;
}

class Cursor {
 public:
  Cursor(const ByteSource& src, const std::string& path)
      : src_(src), path_(path), size_(src.size()), buf_(kBufferBytes) {}

  std::uint64_t pos() const { return pos_; }
  std::uint64_t remaining() const { return size_ - pos_; }

  [[noreturn]] void fail(std::uint64_t at, const std::string& problem) const {
    throw ParseError(path_, at, problem);
  }

  void read(void* dst, std::size_t n, std::string_view what) {
    if (n > remaining()) {
      fail(pos_, fmt::format("unexpected end of file reading {} ({} bytes needed, {} left)", what,
                             n, remaining()));
    }
    auto* out = static_cast<std::uint8_t*>(dst);
    if (const char* in = buffered(n)) {  // the common case: small values inside the buffer
      std::memcpy(out, in, n);
      return;
    }
    while (n > 0) {
      if (pos_ >= buf_start_ && pos_ < buf_start_ + buf_len_) {
        const std::size_t at = static_cast<std::size_t>(pos_ - buf_start_);
        const std::size_t k = std::min(n, buf_len_ - at);
        std::memcpy(out, buf_.data() + at, k);
        out += k;
        n -= k;
        pos_ += k;
      } else if (n >= buf_.size()) {  // large strings go straight to their destination
        read_exact(pos_, out, n);
        pos_ += n;
        return;
      } else {
        buf_start_ = pos_;
        buf_len_ = 0;
        const std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size(), remaining()));
        read_exact(pos_, buf_.data(), want);
        buf_len_ = want;
      }
    }
  }

  // `n` bytes at the position viewed in the buffer, the position moved past them; or
  // nullptr (position unchanged) when they are not all buffered.
  const char* buffered(std::size_t n) {
    if (pos_ < buf_start_ || pos_ - buf_start_ > buf_len_ || buf_len_ - (pos_ - buf_start_) < n) {
      return nullptr;
    }
    const char* p = reinterpret_cast<const char*>(buf_.data()) + (pos_ - buf_start_);
    pos_ += n;
    return p;
  }

  // `n` bytes (n ≤ remaining(), checked by the caller) viewed in the buffer when they are all
  // in it, else copied into `scratch`; valid until the next read.
  std::string_view view(std::size_t n, std::string& scratch, std::string_view what) {
    if (const char* p = buffered(n)) return std::string_view(p, n);
    scratch.resize(n);
    read(scratch.data(), n, what);
    return scratch;
  }

  // A number in the file's byte order, as a host value (little-endian hosts only).
  template <typename T>
  T get(std::string_view what) {
    T v;
    read(&v, sizeof v, what);
    if constexpr (sizeof(T) > 1) {
      if (big_endian_) {
        using U =
            std::conditional_t<sizeof(T) == 2, std::uint16_t,
                               std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
        v = std::bit_cast<T>(byte_swap(std::bit_cast<U>(v)));
      }
    }
    return v;
  }

  // A count, length or dimension: uint64, or uint32 in a version 1 file (the GGUF specification,
  // ggml docs/gguf.md).
  std::uint64_t get_size(std::string_view what) {
    return v1_ ? get<std::uint32_t>(what) : get<std::uint64_t>(what);
  }
  // Encoded bytes of such a field.
  std::uint64_t size_bytes() const { return v1_ ? 4 : 8; }

  // The file's byte order and count width, once the header has told them.
  void set_format(bool big_endian, bool v1) {
    big_endian_ = big_endian;
    v1_ = v1;
  }

  // A GGUF string in two steps, so that its length can be checked before it is allocated.
  std::uint64_t string_length(std::string_view what) {
    const std::uint64_t at = pos_;
    const auto len = get_size(what);
    if (len > remaining()) {
      fail(at, fmt::format("{}: string length {} exceeds the {} bytes left in the file", what, len,
                           remaining()));
    }
    return len;
  }
  std::string string_bytes(std::uint64_t len, std::string_view what) {
    std::string s(static_cast<std::size_t>(len), '\0');
    read(s.data(), s.size(), what);
    return s;
  }

 private:
  static constexpr std::size_t kBufferBytes = 1 << 16;

  void read_exact(std::uint64_t offset, void* dst, std::size_t n) {
    if (src_.read_at(offset, dst, n) != n) {
      throw IoError(fmt::format("{}: file shrank while reading it (at byte {})", path_, offset));
    }
  }

  const ByteSource& src_;
  const std::string& path_;
  std::uint64_t size_;
  std::uint64_t pos_ = 0;
  std::vector<std::uint8_t> buf_;
  std::uint64_t buf_start_ = 0;
  std::size_t buf_len_ = 0;
  bool big_endian_ = false;
  bool v1_ = false;
};

class Parser {
 public:
  Parser(const ByteSource& src, const std::string& path) : c_(src, path) {
    f_.path = path;
    f_.file_size = src.size();
  }

  GgufFile run() {
    header();
    key_values();
    alignment();
    tensor_infos();
    data_section();
    return std::move(f_);
  }

 private:
  void header() {
    // Magic, version and two counts: 24 bytes, 16 in version 1.
    auto too_short = [&](std::uint64_t need) {
      if (f_.file_size < need) {
        c_.fail(0, fmt::format("file is {} bytes, too short for a GGUF header ({} bytes)",
                               f_.file_size, need));
      }
    };
    too_short(8);
    std::uint8_t magic[4];
    c_.read(magic, 4, "magic");
    if (std::memcmp(magic, "GGUF", 4) != 0) {
      c_.fail(0, fmt::format("not a GGUF file: magic is {:02x} {:02x} {:02x} {:02x}, expected "
                             "47 47 55 46 (\"GGUF\")",
                             magic[0], magic[1], magic[2], magic[3]));
    }
    f_.version = c_.get<std::uint32_t>("version");
    // A version whose low 16 bits are zero is a byte-swapped one: the file is big-endian, as
    // ggml and gguf-py detect it (the GGUF specification, ggml docs/gguf.md).
    if (f_.version != 0 && (f_.version & 0xffffu) == 0) {
      f_.big_endian = true;
      f_.version = byte_swap(f_.version);
    }
    if (f_.version < 1 || f_.version > 3) {
      c_.fail(4,
              fmt::format("unsupported GGUF version {} (ggufs reads versions 1 to 3)", f_.version));
    }
    c_.set_format(f_.big_endian, f_.version == 1);
    const std::uint64_t n = c_.size_bytes();
    too_short(8 + 2 * n);
    f_.tensor_count = count("tensor_count", n + 4 + 4 + 8);  // name len, n_dims, type, offset
    f_.kv_count = count("metadata_kv_count", n + 4 + 1);     // key len, value type, 1-byte value
  }

  // Accounts for `n` items of `item_bytes` of parsed metadata, refusing them (at `at`, named by
  // `what`: "string length 5000000000") when the total would exceed kMaxMetadataBytes.
  template <typename What>
  void charge(std::uint64_t at, std::uint64_t n, std::uint64_t item_bytes, What&& what) {
    if (n > (kMaxMetadataBytes - metadata_bytes_) / item_bytes) {
      c_.fail(at, fmt::format("{}: the metadata would need more than {} MiB of memory (the limit "
                              "of ggufs)",
                              what(), kMaxMetadataBytes >> 20));
    }
    metadata_bytes_ += n * item_bytes;
  }

  // A metadata string (key or value), charged to the metadata memory before it is allocated.
  std::string string(std::string_view what) {
    const std::uint64_t at = c_.pos();
    const std::uint64_t len = c_.string_length(what);
    charge(at, len, 1, [&] { return fmt::format("{}: string length {}", what, len); });
    return c_.string_bytes(len, what);
  }

  // A metadata string viewed in the read buffer or copied into `buf` (so a vocabulary is not
  // one allocation per token), charged like string(); valid until the next read.
  std::string_view string_into(std::string& buf, std::string_view what) {
    const std::uint64_t at = c_.pos();
    const std::uint64_t len = c_.string_length(what);
    charge(at, len, 1, [&] { return fmt::format("{}: string length {}", what, len); });
    return c_.view(static_cast<std::size_t>(len), buf, what);
  }

  // A uint64 count whose items need at least `min_item_bytes` each.
  std::uint64_t count(std::string_view what, std::uint64_t min_item_bytes) {
    const std::uint64_t at = c_.pos();
    const auto n = c_.get_size(what);
    if (n > kInt64Max) c_.fail(at, fmt::format("{} {} is negative as int64", what, n));
    if (n > c_.remaining() / min_item_bytes) {
      c_.fail(at, fmt::format("{} {} cannot fit in the {} bytes left in the file", what, n,
                              c_.remaining()));
    }
    return n;
  }

  ValueType value_type(std::string_view what) {
    const std::uint64_t at = c_.pos();
    const auto t = c_.get<std::uint32_t>(what);
    if (t > static_cast<std::uint32_t>(ValueType::kFloat64)) {
      c_.fail(at, fmt::format("invalid {} {} (valid: 0..12)", what, t));
    }
    return static_cast<ValueType>(t);
  }

  Value value(ValueType t, int depth) {
    Value v;
    v.type = t;
    const std::uint64_t at = c_.pos();
    switch (t) {
      case ValueType::kUint8:
        v.data = std::uint64_t{c_.get<std::uint8_t>("uint8 value")};
        break;
      case ValueType::kInt8:
        v.data = std::int64_t{c_.get<std::int8_t>("int8 value")};
        break;
      case ValueType::kUint16:
        v.data = std::uint64_t{c_.get<std::uint16_t>("uint16 value")};
        break;
      case ValueType::kInt16:
        v.data = std::int64_t{c_.get<std::int16_t>("int16 value")};
        break;
      case ValueType::kUint32:
        v.data = std::uint64_t{c_.get<std::uint32_t>("uint32 value")};
        break;
      case ValueType::kInt32:
        v.data = std::int64_t{c_.get<std::int32_t>("int32 value")};
        break;
      case ValueType::kUint64:
        v.data = c_.get<std::uint64_t>("uint64 value");
        break;
      case ValueType::kInt64:
        v.data = c_.get<std::int64_t>("int64 value");
        break;
      case ValueType::kFloat32:
        v.data = c_.get<float>("float32 value");
        break;
      case ValueType::kFloat64:
        v.data = c_.get<double>("float64 value");
        break;
      case ValueType::kString:
        v.data = string("string value");
        break;
      case ValueType::kBool: {
        const auto b = c_.get<std::uint8_t>("bool value");
        if (b > 1) c_.fail(at, fmt::format("invalid bool value {} (must be 0 or 1)", b));
        v.data = b == 1;
        break;
      }
      case ValueType::kArray: {
        if (depth >= kMaxArrayDepth) {
          c_.fail(at, fmt::format("arrays nested deeper than {} levels", kMaxArrayDepth));
        }
        Array a(value_type("array element type"));
        const std::uint64_t count_at = c_.pos();
        const std::uint64_t n =
            count("array length", min_value_bytes(a.elem_type(), c_.size_bytes()));
        // Packed storage (see Array): 8 bytes per scalar or string (its end offset, the bytes
        // are charged as read), one Array per nested array.
        const std::uint64_t item_bytes =
            a.elem_type() == ValueType::kArray ? sizeof(Array) : sizeof(std::uint64_t);
        charge(count_at, n, item_bytes, [&] { return fmt::format("array length {}", n); });
        const std::uint64_t reserve = std::min(n, kMaxArrayReserve);
        a.reserve(static_cast<std::size_t>(reserve));
        if (a.elem_type() == ValueType::kString) {
          // Vocabulary tokens average under 16 bytes: one allocation instead of copying the
          // bytes at each doubling; never more than the file has left.
          a.reserve_string_bytes(static_cast<std::size_t>(
              std::min(reserve * kStringReserveBytes, c_.remaining() - 8 * n)));
        }
        for (std::uint64_t i = 0; i < n; ++i) {
          if (a.elem_type() == ValueType::kString) {
            a.push_string(string_into(scratch_, "string value"));
          } else if (a.elem_type() == ValueType::kArray) {
            a.push_array(std::get<Array>(value(a.elem_type(), depth + 1).data));
          } else {
            a.push_scalar_bits(Array::scalar_bits(value(a.elem_type(), depth + 1)));
          }
        }
        v.data = std::move(a);
        break;
      }
    }
    return v;
  }

  void key_values() {
    std::unordered_set<std::string_view> seen;
    f_.kv.reserve(static_cast<std::size_t>(std::min(f_.kv_count, kMaxReserve)));
    for (std::uint64_t i = 0; i < f_.kv_count; ++i) {
      KeyValue kv;
      kv.offset = c_.pos();
      charge(kv.offset, 1, sizeof(KeyValue), [&] { return fmt::format("metadata entry {}", i); });
      kv.key = string(fmt::format("key of metadata entry {}", i));
      if (kv.key.empty()) c_.fail(kv.offset, fmt::format("metadata entry {} has an empty key", i));
      const ValueType t = value_type(fmt::format("value type of key '{}'", printable(kv.key)));
      kv.value = value(t, 0);
      f_.kv.push_back(std::move(kv));
      if (!seen.insert(f_.kv.back().key).second) {
        c_.fail(f_.kv.back().offset,
                fmt::format("duplicate key '{}'", printable(f_.kv.back().key)));
      }
    }
  }

  void alignment() {
    for (const KeyValue& kv : f_.kv) {
      if (kv.key != "general.alignment") continue;
      if (kv.value.type != ValueType::kUint32) {
        c_.fail(kv.offset, fmt::format("general.alignment must be a uint32, is a {}",
                                       value_type_name(kv.value.type)));
      }
      const auto a = std::get<std::uint64_t>(kv.value.data);
      if (a == 0 || !std::has_single_bit(a)) {
        c_.fail(kv.offset, fmt::format("general.alignment {} is not a power of two", a));
      }
      f_.alignment = static_cast<std::uint32_t>(a);
    }
  }

  void tensor_infos() {
    std::unordered_set<std::string_view> seen;
    const auto reserve = static_cast<std::size_t>(std::min(f_.tensor_count, kMaxReserve));
    f_.tensors.reserve(reserve);
    offset_fields_.reserve(reserve);
    for (std::uint64_t i = 0; i < f_.tensor_count; ++i) {
      TensorInfo t;
      t.info_offset = c_.pos();
      const std::string what = fmt::format("name of tensor {}", i);
      const std::uint64_t name_len = c_.string_length(what);
      if (name_len > kMaxTensorNameBytes) {
        c_.fail(t.info_offset,
                fmt::format("tensor {} name is {} bytes; the GGUF spec allows at most {}", i,
                            name_len, kMaxTensorNameBytes));
      }
      t.name = c_.string_bytes(name_len, what);
      const std::string label = fmt::format("tensor '{}'", printable(t.name));
      const std::uint64_t dims_at = c_.pos();
      t.n_dims = c_.get<std::uint32_t>("n_dims");
      if (t.n_dims > kMaxDims) {
        c_.fail(dims_at, fmt::format("{}: n_dims {} exceeds {}", label, t.n_dims, kMaxDims));
      }
      for (std::uint32_t d = 0; d < t.n_dims; ++d) {
        const std::uint64_t at = c_.pos();
        t.ne[d] = c_.get_size("dimension");
        if (t.ne[d] > kInt64Max) {
          c_.fail(at, fmt::format("{}: ne[{}] = {} is negative as int64", label, d, t.ne[d]));
        }
      }
      t.n_elements = element_count(t, dims_at, label);
      const std::uint64_t type_at = c_.pos();
      t.type = c_.get<std::uint32_t>("ggml type");
      if (const TypeTraits* tr = type_traits(t.type)) {
        if (t.ne[0] % tr->block_size != 0) {
          c_.fail(type_at, fmt::format("{}: ne[0] = {} is not a multiple of the {} block size {}",
                                       label, t.ne[0], tr->name, tr->block_size));
        }
        t.n_bytes = tensor_bytes(*tr, t.ne.data());
        if (!t.n_bytes || *t.n_bytes > kInt64Max) {
          c_.fail(type_at, fmt::format("{}: byte size overflows", label));
        }
        if (t.n_elements > kMaxDecodedElements) {
          c_.fail(type_at,
                  fmt::format("{}: {} elements: the float32 size overflows", label, t.n_elements));
        }
      }
      offset_fields_.push_back(c_.pos());
      t.offset = c_.get<std::uint64_t>("tensor data offset");
      f_.tensors.push_back(std::move(t));
      if (!seen.insert(f_.tensors.back().name).second) {
        c_.fail(f_.tensors.back().info_offset,
                fmt::format("duplicate tensor name '{}'", printable(f_.tensors.back().name)));
      }
    }
  }

  std::uint64_t element_count(const TensorInfo& t, std::uint64_t at, const std::string& label) {
    // A zero dimension makes the tensor empty; only then is a product that "wraps to 0"
    // genuinely zero (ggml's own check misses ne = [2^32, 2^32]).
    if (std::find(t.ne.begin(), t.ne.end(), 0u) != t.ne.end()) return 0;
    std::uint64_t n = 1;
    for (std::uint64_t d : t.ne) {
      if (__builtin_mul_overflow(n, d, &n) || n > kInt64Max) {
        c_.fail(at, fmt::format("{}: element count overflows int64", label));
      }
    }
    return n;
  }

  void data_section() {
    const std::uint64_t end_of_infos = c_.pos();
    const std::uint64_t a = f_.alignment;
    f_.data_offset = (end_of_infos + a - 1) / a * a;  // end_of_infos ≤ file size: no overflow

    struct Extent {
      std::uint64_t begin, end;
      std::size_t index;
    };
    std::vector<Extent> extents;
    for (std::size_t i = 0; i < f_.tensors.size(); ++i) {
      TensorInfo& t = f_.tensors[i];
      const std::uint64_t at = offset_fields_[i];
      const std::string label = fmt::format("tensor '{}'", printable(t.name));
      if (t.offset % a != 0) {
        c_.fail(at, fmt::format("{}: data offset {} is not a multiple of the alignment {}", label,
                                t.offset, a));
      }
      if (__builtin_add_overflow(f_.data_offset, t.offset, &t.file_offset)) {
        c_.fail(at, fmt::format("{}: data offset {} overflows", label, t.offset));
      }
      if (!t.n_bytes) continue;  // removed or unknown type: its extent is unknown
      std::uint64_t end = 0;
      if (__builtin_add_overflow(t.file_offset, *t.n_bytes, &end) || end > f_.file_size) {
        c_.fail(at, fmt::format("{}: data [{} + {}, +{} bytes) extends past the end of the file "
                                "({} bytes)",
                                label, f_.data_offset, t.offset, *t.n_bytes, f_.file_size));
      }
      if (*t.n_bytes > 0) extents.push_back({t.file_offset, end, i});
    }
    std::sort(extents.begin(), extents.end(),
              [](const Extent& x, const Extent& y) { return x.begin < y.begin; });
    for (std::size_t k = 1; k < extents.size(); ++k) {
      if (extents[k].begin < extents[k - 1].end) {
        const TensorInfo& t = f_.tensors[extents[k].index];
        c_.fail(offset_fields_[extents[k].index],
                fmt::format("tensor '{}': data overlaps tensor '{}'", printable(t.name),
                            printable(f_.tensors[extents[k - 1].index].name)));
      }
    }
  }

  Cursor c_;
  GgufFile f_;
  std::uint64_t metadata_bytes_ = 0;          // memory charged to the parsed metadata so far
  std::string scratch_;                       // string_into() buffer for array elements
  std::vector<std::uint64_t> offset_fields_;  // byte offset of each tensor's offset field
};

}  // namespace

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
      return "uint8";
    case ValueType::kInt8:
      return "int8";
    case ValueType::kUint16:
      return "uint16";
    case ValueType::kInt16:
      return "int16";
    case ValueType::kUint32:
      return "uint32";
    case ValueType::kInt32:
      return "int32";
    case ValueType::kFloat32:
      return "float32";
    case ValueType::kBool:
      return "bool";
    case ValueType::kString:
      return "string";
    case ValueType::kArray:
      return "array";
    case ValueType::kUint64:
      return "uint64";
    case ValueType::kInt64:
      return "int64";
    case ValueType::kFloat64:
      return "float64";
  }
  return "unknown";
}

GgufFile parse_gguf(const ByteSource& src, const std::string& path) {
  return Parser(src, path).run();
}

}  // namespace ggufs
