#include "ggufs/gguf_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "ggufs/error.h"

namespace ggufs {

namespace {

constexpr std::uint32_t kDefaultAlignment = 32;
constexpr std::string_view kAlignmentKey = "general.alignment";

std::uint64_t align_up(std::uint64_t n, std::uint64_t alignment) {
  const std::uint64_t rest = n % alignment;
  return rest == 0 ? n : n + (alignment - rest);
}

std::invalid_argument wrong_data(ValueType t, std::string_view expected) {
  return std::invalid_argument(
      fmt::format("a {} value must hold {}", value_type_name(t), expected));
}

// The integer of an integer value, whichever signedness its variant holds, as its
// two's-complement bits (the writer narrows it to the value type's width).
std::uint64_t integer_bits(const Value& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v.data)) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&v.data)) return static_cast<std::uint64_t>(*i);
  throw wrong_data(v.type, "an integer");
}

}  // namespace

// --- ByteWriter ---------------------------------------------------------------------------

void ByteWriter::u8(std::uint8_t v) { data_.push_back(v); }

void ByteWriter::u16(std::uint16_t v) {
  const auto lo = static_cast<std::uint8_t>(v), hi = static_cast<std::uint8_t>(v >> 8);
  u8(big_endian_ ? hi : lo);
  u8(big_endian_ ? lo : hi);
}

void ByteWriter::u32(std::uint32_t v) {
  const auto lo = static_cast<std::uint16_t>(v), hi = static_cast<std::uint16_t>(v >> 16);
  u16(big_endian_ ? hi : lo);
  u16(big_endian_ ? lo : hi);
}

void ByteWriter::u64(std::uint64_t v) {
  const auto lo = static_cast<std::uint32_t>(v), hi = static_cast<std::uint32_t>(v >> 32);
  u32(big_endian_ ? hi : lo);
  u32(big_endian_ ? lo : hi);
}

void ByteWriter::size(std::uint64_t n) {
  if (v1_) {
    u32(static_cast<std::uint32_t>(n));
  } else {
    u64(n);
  }
}

void ByteWriter::f32(float v) { u32(std::bit_cast<std::uint32_t>(v)); }

void ByteWriter::f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }

void ByteWriter::str(std::string_view s) {
  size(s.size());
  data_.insert(data_.end(), s.begin(), s.end());
}

void ByteWriter::bytes(std::span<const std::uint8_t> b) {
  // resize + memcpy, not insert: GCC 12 at -O3 takes the insert into the empty vector (the
  // magic) for an overflow (-Wstringop-overflow, a false positive).
  if (b.empty()) return;
  const std::size_t at = data_.size();
  data_.resize(at + b.size());
  std::memcpy(data_.data() + at, b.data(), b.size());
}

void ByteWriter::pad_to(std::uint64_t alignment) {
  data_.resize(align_up(data_.size(), alignment), 0);
}

void ByteWriter::value(const Value& v) {
  switch (v.type) {
    case ValueType::kUint8:
    case ValueType::kInt8:
      u8(static_cast<std::uint8_t>(integer_bits(v)));
      return;
    case ValueType::kUint16:
    case ValueType::kInt16:
      u16(static_cast<std::uint16_t>(integer_bits(v)));
      return;
    case ValueType::kUint32:
    case ValueType::kInt32:
      u32(static_cast<std::uint32_t>(integer_bits(v)));
      return;
    case ValueType::kUint64:
    case ValueType::kInt64:
      u64(integer_bits(v));
      return;
    case ValueType::kFloat32:
      if (const auto* f = std::get_if<float>(&v.data)) return f32(*f);
      throw wrong_data(v.type, "a float");
    case ValueType::kFloat64:
      if (const auto* d = std::get_if<double>(&v.data)) return f64(*d);
      throw wrong_data(v.type, "a double");
    case ValueType::kBool:
      if (const auto* b = std::get_if<bool>(&v.data)) return u8(*b ? 1 : 0);
      throw wrong_data(v.type, "a bool");
    case ValueType::kString:
      if (const auto* s = std::get_if<std::string>(&v.data)) return str(*s);
      throw wrong_data(v.type, "a string");
    case ValueType::kArray: {
      const auto* a = std::get_if<Array>(&v.data);
      if (!a) throw wrong_data(v.type, "an Array");
      u32(static_cast<std::uint32_t>(a->elem_type()));
      size(a->size());
      for (std::size_t i = 0; i < a->size(); ++i) {
        if (a->elem_type() == ValueType::kString) {
          str(a->string_at(i));
        } else {
          value(a->at(i));
        }
      }
      return;
    }
  }
  throw std::invalid_argument(
      fmt::format("unknown value type {}", static_cast<std::uint32_t>(v.type)));
}

// --- GgufWriter ---------------------------------------------------------------------------

void GgufWriter::add(std::string key, Value v) { kv_.emplace_back(std::move(key), std::move(v)); }

void GgufWriter::add_string(std::string key, std::string v) {
  add(std::move(key), Value{ValueType::kString, std::move(v)});
}

void GgufWriter::add_u32(std::string key, std::uint32_t v) {
  add(std::move(key), Value{ValueType::kUint32, std::uint64_t{v}});
}

void GgufWriter::add_f32(std::string key, float v) {
  add(std::move(key), Value{ValueType::kFloat32, v});
}

void GgufWriter::add_tensor(std::string name, std::uint32_t type, std::vector<std::uint64_t> ne,
                            std::vector<std::uint8_t> data) {
  const std::uint64_t n = data.size();
  tensors_.push_back(Tensor{std::move(name), type, std::move(ne), std::move(data), n, {}});
}

void GgufWriter::add_tensor_stream(std::string name, std::uint32_t type,
                                   std::vector<std::uint64_t> ne, std::uint64_t n_bytes,
                                   TensorProducer produce) {
  tensors_.push_back(Tensor{std::move(name), type, std::move(ne), {}, n_bytes, std::move(produce)});
}

std::vector<std::uint8_t> GgufWriter::header() const {
  if (alignment_ == 0) throw std::invalid_argument("GGUF alignment must not be 0");
  bool implied_alignment = alignment_ != kDefaultAlignment;
  for (const auto& [key, value] : kv_) {
    if (key == kAlignmentKey) implied_alignment = false;  // the caller's own value wins
  }

  ByteWriter w(big_endian_, version_);
  w.bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>("GGUF"), 4));
  w.u32(version_);
  w.size(tensors_.size());
  w.size(kv_.size() + (implied_alignment ? 1 : 0));
  if (implied_alignment) {
    w.str(kAlignmentKey);
    w.u32(static_cast<std::uint32_t>(ValueType::kUint32));
    w.u32(alignment_);
  }
  for (const auto& [key, value] : kv_) {
    w.str(key);
    w.u32(static_cast<std::uint32_t>(value.type));
    w.value(value);
  }
  std::uint64_t offset = 0;  // relative to the data section
  for (const Tensor& t : tensors_) {
    offset = align_up(offset, alignment_);
    w.str(t.name);
    w.u32(static_cast<std::uint32_t>(t.ne.size()));
    for (std::uint64_t n : t.ne) w.size(n);
    w.u32(t.type);
    w.u64(offset);
    offset += t.n_bytes;
  }
  w.pad_to(alignment_);
  return std::move(w.data());
}

void GgufWriter::emit(const ByteSink& out) const {
  const std::vector<std::uint8_t> head = header();
  out(head);
  const std::vector<std::uint8_t> zeros(alignment_, 0);
  std::uint64_t offset = 0;  // relative to the data section
  for (const Tensor& t : tensors_) {
    const std::uint64_t aligned = align_up(offset, alignment_);
    out(std::span(zeros).first(static_cast<std::size_t>(aligned - offset)));
    if (!t.produce) {
      out(t.data);
    } else {
      std::uint64_t delivered = 0;
      t.produce([&](std::span<const std::uint8_t> chunk) {
        delivered += chunk.size();
        if (delivered > t.n_bytes) {
          throw std::logic_error(
              fmt::format("tensor {}: producer delivered more than {} bytes", t.name, t.n_bytes));
        }
        out(chunk);
      });
      if (delivered != t.n_bytes) {
        throw std::logic_error(fmt::format("tensor {}: producer delivered {} bytes, not {}", t.name,
                                           delivered, t.n_bytes));
      }
    }
    offset = aligned + t.n_bytes;
  }
}

std::vector<std::uint8_t> GgufWriter::finish() const {
  std::vector<std::uint8_t> file;
  emit([&](std::span<const std::uint8_t> chunk) {
    file.insert(file.end(), chunk.begin(), chunk.end());
  });
  return file;
}

namespace {

// An output file written through a buffer; removed by the destructor unless committed.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw IoError(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
    buffer_.reserve(kBufferSize);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (fd_ >= 0) {
      ::close(fd_);
      ::unlink(path_.c_str());
    }
  }

  void write(std::span<const std::uint8_t> chunk) {
    if (buffer_.size() + chunk.size() > kBufferSize) flush();
    if (chunk.size() >= kBufferSize) {
      write_all(chunk);
    } else {
      buffer_.insert(buffer_.end(), chunk.begin(), chunk.end());
    }
  }

  void commit() {
    flush();
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) {
      const int err = errno;
      ::unlink(path_.c_str());
      throw IoError(fmt::format("{}: cannot write: {}", path_, std::strerror(err)));
    }
  }

 private:
  static constexpr std::size_t kBufferSize = std::size_t{1} << 20;

  void flush() {
    write_all(buffer_);
    buffer_.clear();
  }

  void write_all(std::span<const std::uint8_t> bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        throw IoError(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
      }
      bytes = bytes.subspan(static_cast<std::size_t>(n));
    }
  }

  std::string path_;
  int fd_ = -1;
  std::vector<std::uint8_t> buffer_;
};

}  // namespace

void GgufWriter::write_file(const std::string& path) const {
  if (alignment_ == 0) throw std::invalid_argument("GGUF alignment must not be 0");
  OutputFile file(path);
  emit([&](std::span<const std::uint8_t> chunk) { file.write(chunk); });
  file.commit();
}

}  // namespace ggufs
