// The packed storage of metadata arrays (see Array in gguf.h).
#include <fmt/format.h>

#include <bit>
#include <stdexcept>

#include "ggufs/gguf.h"

namespace ggufs {
namespace {

bool is_scalar(ValueType t) { return t != ValueType::kString && t != ValueType::kArray; }

std::invalid_argument wrong_item(ValueType item, ValueType elem) {
  return std::invalid_argument(
      fmt::format("a {} item in an array of {}", value_type_name(item), value_type_name(elem)));
}

// The Value of a scalar of type `t` from its 8-byte form (the inverse of scalar_bits).
Value scalar_value(ValueType t, std::uint64_t bits) {
  switch (t) {
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64:
      return Value{t, static_cast<std::int64_t>(bits)};
    case ValueType::kFloat32:
      return Value{t, std::bit_cast<float>(static_cast<std::uint32_t>(bits))};
    case ValueType::kFloat64:
      return Value{t, std::bit_cast<double>(bits)};
    case ValueType::kBool:
      return Value{t, bits != 0};
    default:
      return Value{t, bits};
  }
}

// Whether v.data holds the alternative that v.type calls for (see Value).
bool data_matches_type(const Value& v) {
  switch (v.type) {
    case ValueType::kUint8:
    case ValueType::kUint16:
    case ValueType::kUint32:
    case ValueType::kUint64:
      return std::holds_alternative<std::uint64_t>(v.data);
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64:
      return std::holds_alternative<std::int64_t>(v.data);
    case ValueType::kFloat32:
      return std::holds_alternative<float>(v.data);
    case ValueType::kFloat64:
      return std::holds_alternative<double>(v.data);
    case ValueType::kBool:
      return std::holds_alternative<bool>(v.data);
    case ValueType::kString:
      return std::holds_alternative<std::string>(v.data);
    case ValueType::kArray:
      return std::holds_alternative<Array>(v.data);
  }
  return false;
}

}  // namespace

Array::Array(ValueType elem_type, const std::vector<Value>& items) : elem_type_(elem_type) {
  reserve(items.size());
  for (const Value& v : items) push_back(v);
}

std::size_t Array::size() const {
  switch (elem_type_) {
    case ValueType::kString:
      return ends_.size();
    case ValueType::kArray:
      return arrays_.size();
    default:
      return scalars_.size();
  }
}

void Array::reserve(std::size_t n) {
  switch (elem_type_) {
    case ValueType::kString:
      ends_.reserve(n);
      break;
    case ValueType::kArray:
      arrays_.reserve(n);
      break;
    default:
      scalars_.reserve(n);
  }
}

void Array::reserve_string_bytes(std::size_t bytes) {
  if (elem_type_ == ValueType::kString) chars_.reserve(bytes);
}

void Array::push_back(const Value& v) {
  if (v.type != elem_type_) throw wrong_item(v.type, elem_type_);
  if (!data_matches_type(v)) {
    throw std::invalid_argument(
        fmt::format("a {} item whose data is of another type", value_type_name(v.type)));
  }
  if (const auto* s = std::get_if<std::string>(&v.data)) {
    push_string(*s);
  } else if (const auto* a = std::get_if<Array>(&v.data)) {
    push_array(*a);
  } else {
    push_scalar_bits(scalar_bits(v));
  }
}

void Array::push_string(std::string_view s) {
  if (elem_type_ != ValueType::kString) throw wrong_item(ValueType::kString, elem_type_);
  chars_ += s;
  ends_.push_back(chars_.size());
}

void Array::push_scalar_bits(std::uint64_t bits) {
  if (!is_scalar(elem_type_)) {
    throw std::invalid_argument(
        fmt::format("a scalar item in an array of {}", value_type_name(elem_type_)));
  }
  scalars_.push_back(bits);
}

void Array::push_array(Array a) {
  if (elem_type_ != ValueType::kArray) throw wrong_item(ValueType::kArray, elem_type_);
  arrays_.push_back(std::move(a));
}

Value Array::at(std::size_t i) const {
  if (i >= size()) {
    throw std::out_of_range(fmt::format("array element {} of {}", i, size()));
  }
  switch (elem_type_) {
    case ValueType::kString:
      return Value{elem_type_, std::string(string_at(i))};
    case ValueType::kArray:
      return Value{elem_type_, arrays_[i]};
    default:
      return scalar_value(elem_type_, scalars_[i]);
  }
}

std::string_view Array::string_at(std::size_t i) const {
  if (elem_type_ != ValueType::kString) {
    throw std::logic_error(fmt::format("string_at on an array of {}", value_type_name(elem_type_)));
  }
  const std::size_t begin = i == 0 ? 0 : ends_.at(i - 1);
  return std::string_view(chars_).substr(begin, ends_.at(i) - begin);
}

const Array& Array::array_at(std::size_t i) const {
  if (elem_type_ != ValueType::kArray) {
    throw std::logic_error(fmt::format("array_at on an array of {}", value_type_name(elem_type_)));
  }
  return arrays_.at(i);
}

std::uint64_t Array::scalar_bits(const Value& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v.data)) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&v.data)) return static_cast<std::uint64_t>(*i);
  if (const auto* f = std::get_if<float>(&v.data)) return std::bit_cast<std::uint32_t>(*f);
  if (const auto* d = std::get_if<double>(&v.data)) return std::bit_cast<std::uint64_t>(*d);
  if (const auto* b = std::get_if<bool>(&v.data)) return *b ? 1 : 0;
  throw std::invalid_argument(fmt::format("a {} value is not a scalar", value_type_name(v.type)));
}

}  // namespace ggufs
