// The packed metadata array (Array in gguf.h): every element type stored and read back exactly,
// and wrong items refused.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "ggufs/gguf.h"

namespace ggufs {
namespace {

TEST(Array, EveryScalarTypeReadsBackAsTheSameValue) {
  const Value values[] = {
      {ValueType::kUint8, std::uint64_t{255}},
      {ValueType::kInt8, std::int64_t{-128}},
      {ValueType::kUint16, std::uint64_t{65535}},
      {ValueType::kInt16, std::int64_t{-32768}},
      {ValueType::kUint32, std::uint64_t{4294967295u}},
      {ValueType::kInt32, std::int64_t{-2147483647 - 1}},
      {ValueType::kUint64, std::numeric_limits<std::uint64_t>::max()},
      {ValueType::kInt64, std::numeric_limits<std::int64_t>::min()},
      {ValueType::kFloat32, -0.0f},
      {ValueType::kFloat64, 1e-310},  // subnormal
      {ValueType::kBool, true},
  };
  for (const Value& v : values) {
    Array a(v.type);
    a.push_back(v);
    a.push_back(v);
    ASSERT_EQ(a.size(), 2u);
    const Value got = a.at(1);
    EXPECT_EQ(got.type, v.type);
    ASSERT_EQ(got.data.index(), v.data.index()) << value_type_name(v.type);
    if (const auto* f = std::get_if<float>(&v.data)) {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(std::get<float>(got.data)),
                std::bit_cast<std::uint32_t>(*f));
    } else if (const auto* d = std::get_if<double>(&v.data)) {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(std::get<double>(got.data)),
                std::bit_cast<std::uint64_t>(*d));
    } else {
      EXPECT_TRUE(got.data == v.data) << value_type_name(v.type);
    }
  }
}

TEST(Array, NanPayloadIsKept) {
  const float nan = std::bit_cast<float>(0x7fc01234u);
  Array a(ValueType::kFloat32);
  a.push_back(Value{ValueType::kFloat32, nan});
  EXPECT_EQ(std::bit_cast<std::uint32_t>(std::get<float>(a.at(0).data)), 0x7fc01234u);
}

TEST(Array, StringsIncludingEmptyAndNulBytes) {
  Array a(ValueType::kString);
  a.push_string("first");
  a.push_string("");
  a.push_string(std::string_view("a\0b", 3));
  a.push_back(Value{ValueType::kString, std::string("last")});
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a.string_at(0), "first");
  EXPECT_EQ(a.string_at(1), "");
  EXPECT_EQ(a.string_at(2), std::string_view("a\0b", 3));
  EXPECT_EQ(std::get<std::string>(a.at(3).data), "last");
}

TEST(Array, NestedArrays) {
  Array inner(ValueType::kInt32, {Value{ValueType::kInt32, std::int64_t{7}}});
  Array outer(ValueType::kArray);
  outer.push_array(inner);
  outer.push_back(Value{ValueType::kArray, Array(ValueType::kString)});
  ASSERT_EQ(outer.size(), 2u);
  EXPECT_EQ(std::get<std::int64_t>(outer.array_at(0).at(0).data), 7);
  EXPECT_EQ(outer.array_at(1).elem_type(), ValueType::kString);
  EXPECT_EQ(outer.array_at(1).size(), 0u);
}

TEST(Array, WrongItemsAreRefused) {
  Array ints(ValueType::kInt32);
  EXPECT_THROW(ints.push_back(Value{ValueType::kUint32, std::uint64_t{1}}), std::invalid_argument);
  EXPECT_THROW(ints.push_back(Value{ValueType::kInt32, std::uint64_t{1}}), std::invalid_argument);
  EXPECT_THROW(ints.push_string("x"), std::invalid_argument);
  EXPECT_THROW(ints.push_array(Array(ValueType::kInt32)), std::invalid_argument);
  Array strings(ValueType::kString);
  EXPECT_THROW(strings.push_scalar_bits(1), std::invalid_argument);
  EXPECT_THROW(strings.push_back(Value{ValueType::kString, std::uint64_t{1}}),
               std::invalid_argument);
  EXPECT_EQ(ints.size(), 0u);
  EXPECT_EQ(strings.size(), 0u);
}

TEST(Array, OutOfRangeAndWrongKindAccessThrow) {
  Array a(ValueType::kString);
  a.push_string("x");
  EXPECT_THROW((void)a.at(1), std::out_of_range);
  EXPECT_THROW((void)a.string_at(1), std::out_of_range);
  EXPECT_THROW((void)a.array_at(0), std::logic_error);
  Array b(ValueType::kUint8);
  EXPECT_THROW((void)b.string_at(0), std::logic_error);
}

}  // namespace
}  // namespace ggufs
