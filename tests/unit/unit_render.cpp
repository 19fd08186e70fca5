// Unit tests of the text renderers (metadata files, gguf.json, tensors.tsv, .npy header) and the
// name rules, by hand-built values and against the shared metadata and conformance files.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/names.h"
#include "ggufs/render.h"
#include "test_util.h"

namespace ggufs {
namespace {

using nlohmann::json;

// ---- building values by hand ----

Value u(ValueType t, std::uint64_t x) { return Value{t, x}; }
Value i(ValueType t, std::int64_t x) { return Value{t, x}; }
Value f32(float x) { return Value{ValueType::kFloat32, x}; }
Value f64(double x) { return Value{ValueType::kFloat64, x}; }
Value boolean(bool x) { return Value{ValueType::kBool, x}; }
Value str(std::string s) { return Value{ValueType::kString, std::move(s)}; }
Value arr(ValueType elem, std::vector<Value> items) {
  return Value{ValueType::kArray, Array{elem, std::move(items)}};
}

std::string render(const Value& v) { return render_metadata_value(v); }

// ---- metadata files ----

TEST(RenderMetadata, Integers) {
  EXPECT_EQ(render(u(ValueType::kUint8, 0)), "0\n");
  EXPECT_EQ(render(u(ValueType::kUint8, 255)), "255\n");
  EXPECT_EQ(render(i(ValueType::kInt8, -128)), "-128\n");
  EXPECT_EQ(render(i(ValueType::kInt16, -32768)), "-32768\n");
  EXPECT_EQ(render(u(ValueType::kUint32, 4294967295u)), "4294967295\n");
  EXPECT_EQ(render(i(ValueType::kInt32, -2147483648LL)), "-2147483648\n");
  EXPECT_EQ(render(u(ValueType::kUint64, std::numeric_limits<std::uint64_t>::max())),
            "18446744073709551615\n");
  EXPECT_EQ(render(i(ValueType::kInt64, std::numeric_limits<std::int64_t>::min())),
            "-9223372036854775808\n");
  EXPECT_EQ(render(i(ValueType::kInt64, std::numeric_limits<std::int64_t>::max())),
            "9223372036854775807\n");
}

TEST(RenderMetadata, Float32ShortestRoundTrip) {
  EXPECT_EQ(render(f32(0.0f)), "0\n");
  EXPECT_EQ(render(f32(-0.0f)), "-0\n");
  EXPECT_EQ(render(f32(0.1f)), "0.1\n");
  EXPECT_EQ(render(f32(3.1415927f)), "3.1415927\n");
  EXPECT_EQ(render(f32(1.5f)), "1.5\n");
  EXPECT_EQ(render(f32(std::bit_cast<float>(0x00000001u))), "1e-45\n");  // smallest subnormal
  EXPECT_EQ(render(f32(std::numeric_limits<float>::max())), "3.4028235e+38\n");
  EXPECT_EQ(render(f32(std::numeric_limits<float>::infinity())), "inf\n");
  EXPECT_EQ(render(f32(-std::numeric_limits<float>::infinity())), "-inf\n");
  EXPECT_EQ(render(f32(std::bit_cast<float>(0x7fc00000u))), "nan\n");
}

TEST(RenderMetadata, Float64ShortestRoundTrip) {
  EXPECT_EQ(render(f64(0.1)), "0.1\n");
  EXPECT_EQ(render(f64(-0.0)), "-0\n");
  EXPECT_EQ(render(f64(2.718281828459045)), "2.718281828459045\n");
  EXPECT_EQ(render(f64(1e300)), "1e+300\n");
  EXPECT_EQ(render(f64(-1.5e-300)), "-1.5e-300\n");
  EXPECT_EQ(render(f64(std::bit_cast<double>(std::uint64_t{1}))), "5e-324\n");
  EXPECT_EQ(render(f64(-std::numeric_limits<double>::infinity())), "-inf\n");
  EXPECT_EQ(render(f64(std::numeric_limits<double>::quiet_NaN())), "nan\n");
  // The text reads back as the same bits.
  for (const double d : {0.1, 1.0 / 3.0, 2.718281828459045, 1e-310, 123456789.123456789}) {
    std::string s = render(f64(d));
    s.pop_back();
    EXPECT_EQ(std::bit_cast<std::uint64_t>(std::strtod(s.c_str(), nullptr)),
              std::bit_cast<std::uint64_t>(d))
        << s;
  }
}

TEST(RenderMetadata, Bool) {
  EXPECT_EQ(render(boolean(true)), "true\n");
  EXPECT_EQ(render(boolean(false)), "false\n");
}

TEST(RenderMetadata, StringsAreRawBytesPlusOneNewline) {
  EXPECT_EQ(render(str("hello, world")), "hello, world\n");
  EXPECT_EQ(render(str("")), "\n");
  EXPECT_EQ(render(str("bell\a esc\x1b del\x7f cr\r end")), "bell\a esc\x1b del\x7f cr\r end\n");
  EXPECT_EQ(render(str("C:\\path\tx \"q\"")), "C:\\path\tx \"q\"\n");
  EXPECT_EQ(render(str("ends in newline\n")), "ends in newline\n\n");
  EXPECT_EQ(render(str(std::string("nul\0inside", 10))), std::string("nul\0inside\n", 11));
  EXPECT_EQ(render(str("\xff\xfe not utf-8")), "\xff\xfe not utf-8\n");
}

TEST(RenderMetadata, ArraysOneElementPerLine) {
  EXPECT_EQ(render(arr(ValueType::kUint8, {u(ValueType::kUint8, 0), u(ValueType::kUint8, 255)})),
            "0\n255\n");
  EXPECT_EQ(render(arr(ValueType::kInt64, {i(ValueType::kInt64, -1), i(ValueType::kInt64, 7)})),
            "-1\n7\n");
  EXPECT_EQ(render(arr(ValueType::kFloat32,
                       {f32(0.1f), f32(-0.0f), f32(std::numeric_limits<float>::infinity())})),
            "0.1\n-0\ninf\n");
  EXPECT_EQ(render(arr(ValueType::kFloat64, {f64(0.1), f64(5e-324)})), "0.1\n5e-324\n");
  EXPECT_EQ(render(arr(ValueType::kBool, {boolean(true), boolean(false)})), "true\nfalse\n");
}

TEST(RenderMetadata, StringArrayElementsAreJsonEscaped) {
  const Value v = arr(ValueType::kString, {str("alpha"), str(""), str("multi\nline"),
                                           str("tab\there"), str("back\\slash"), str("\x01"),
                                           str("say \"hi\""), str("cr\r"), str("ütf-8 🦙")});
  EXPECT_EQ(render(v),
            "alpha\n"
            "\n"
            "multi\\nline\n"
            "tab\\there\n"
            "back\\\\slash\n"
            "\\u0001\n"
            "say \\\"hi\\\"\n"
            "cr\\r\n"
            "ütf-8 🦙\n");
}

TEST(RenderMetadata, EmptyArrayIsEmptyFile) {
  EXPECT_EQ(render(arr(ValueType::kUint32, {})), "");
  EXPECT_EQ(render(arr(ValueType::kString, {})), "");
  EXPECT_EQ(render(arr(ValueType::kArray, {})), "");
}

TEST(RenderMetadata, NestedArraysAsJsonLines) {
  const auto i32 = [](std::int64_t x) { return i(ValueType::kInt32, x); };
  EXPECT_EQ(render(arr(ValueType::kArray,
                       {arr(ValueType::kInt32, {i32(1), i32(2), i32(3)}),
                        arr(ValueType::kInt32, {}), arr(ValueType::kInt32, {i32(-4)})})),
            "[1,2,3]\n[]\n[-4]\n");
  EXPECT_EQ(render(arr(ValueType::kArray, {arr(ValueType::kString, {str("a"), str("b")}),
                                           arr(ValueType::kString, {str("c\n\"")})})),
            "[\"a\",\"b\"]\n[\"c\\n\\\"\"]\n");
  EXPECT_EQ(render(arr(ValueType::kArray,
                       {arr(ValueType::kArray, {arr(ValueType::kInt32, {i32(7)}),
                                                arr(ValueType::kInt32, {i32(8), i32(9)})})})),
            "[[7],[8,9]]\n");
  // Floats inside a JSON line: shortest text, non-finite as strings so the line parses as JSON.
  const std::string line =
      render(arr(ValueType::kArray,
                 {arr(ValueType::kFloat32, {f32(0.1f), f32(std::numeric_limits<float>::quiet_NaN()),
                                            f32(-std::numeric_limits<float>::infinity())}),
                  arr(ValueType::kBool, {boolean(true)}),
                  arr(ValueType::kUint64, {u(ValueType::kUint64, 5)})}));
  EXPECT_EQ(line, "[0.1,\"nan\",\"-inf\"]\n[true]\n[5]\n");
}

TEST(RenderMetadata, JsonEscapingMatchesNlohmann) {
  // Every ASCII byte escapes exactly as nlohmann::json writes it inside a string.
  for (int c = 0; c < 0x80; ++c) {
    const std::string s(1, static_cast<char>(c));
    std::string ours;
    append_json_escaped(ours, s);
    const std::string theirs = json(s).dump();
    EXPECT_EQ(ours, theirs.substr(1, theirs.size() - 2)) << "byte " << c;
  }
  std::string out = "x";
  append_json_escaped(out, "\xff\xc3\xa9");
  EXPECT_EQ(out, "x\xff\xc3\xa9");  // bytes >= 0x80 copied, appended after what was there
}

TEST(RenderMetadata, TypeDisplayName) {
  EXPECT_EQ(type_display_name(GGML_TYPE_F32), "F32");
  EXPECT_EQ(type_display_name(GGML_TYPE_F16), "F16");
  EXPECT_EQ(type_display_name(GGML_TYPE_Q4_K), "Q4_K");
  EXPECT_EQ(type_display_name(GGML_TYPE_BF16), "BF16");
  EXPECT_EQ(type_display_name(4), "type_4");  // removed Q4_2
  EXPECT_EQ(type_display_name(1000), "type_1000");
  EXPECT_EQ(type_display_name(0xffffffffu), "type_4294967295");
}

// ---- gguf.json and tensors.tsv of a hand-built file ----

GgufFile hand_built() {
  GgufFile f;
  f.path = "hand.gguf";
  f.version = 3;
  f.tensor_count = 3;
  f.kv_count = 6;
  f.alignment = 64;
  f.data_offset = 448;
  f.file_size = 1000;
  f.kv.push_back({"general.name", str("bad \xff utf-8"), 24});
  f.kv.push_back({"z.first_in_file", u(ValueType::kUint64, 18446744073709551615ull), 60});
  f.kv.push_back({"a.int64", i(ValueType::kInt64, std::numeric_limits<std::int64_t>::min()), 90});
  f.kv.push_back({"f.specials",
                  arr(ValueType::kFloat32, {f32(0.1f), f32(std::numeric_limits<float>::quiet_NaN()),
                                            f32(std::numeric_limits<float>::infinity()),
                                            f32(-std::numeric_limits<float>::infinity())}),
                  120});
  f.kv.push_back(
      {"n.nested",
       arr(ValueType::kArray, {arr(ValueType::kString, {str("a")}), arr(ValueType::kInt32, {})}),
       200});
  f.kv.push_back({"d.float64", f64(-0.0), 260});

  TensorInfo a;
  a.name = "tok_embd.weight";
  a.n_dims = 2;
  a.ne = {4, 3, 1, 1};
  a.type = GGML_TYPE_F32;
  a.offset = 0;
  a.file_offset = 448;
  a.n_elements = 12;
  a.n_bytes = 48;
  TensorInfo b;
  b.name = "odd\tname\n\"q\"";
  b.n_dims = 1;
  b.ne = {256, 1, 1, 1};
  b.type = 99;
  b.offset = 64;
  b.file_offset = 512;
  b.n_elements = 256;
  b.n_bytes = std::nullopt;
  TensorInfo c;
  c.name = "scalar";
  c.n_dims = 0;
  c.type = GGML_TYPE_F32;
  c.offset = 128;
  c.file_offset = 576;
  c.n_elements = 1;
  c.n_bytes = 4;
  f.tensors = {a, b, c};
  return f;
}

TEST(RenderJson, HandBuiltDocument) {
  const std::string text = render_gguf_json(hand_built());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text);  // valid despite \xff

  std::vector<std::string> top;
  for (const auto& [k, v] : doc.items()) top.push_back(k);
  EXPECT_EQ(top, (std::vector<std::string>{"header", "metadata", "tensors"}));

  const auto& h = doc["header"];
  EXPECT_EQ(h, nlohmann::ordered_json::parse(R"({"version":3,"byte_order":"little-endian",
      "tensor_count":3,"metadata_kv_count":6,"alignment":64,"data_offset":448,"file_size":1000})"));
  std::vector<std::string> header_keys;
  for (const auto& [k, v] : h.items()) header_keys.push_back(k);
  EXPECT_EQ(header_keys,
            (std::vector<std::string>{"version", "byte_order", "tensor_count", "metadata_kv_count",
                                      "alignment", "data_offset", "file_size"}));

  const auto& m = doc["metadata"];
  ASSERT_EQ(m.size(), 6u);
  // File order, not alphabetical.
  EXPECT_EQ(m[0]["key"], "general.name");
  EXPECT_EQ(m[1]["key"], "z.first_in_file");
  EXPECT_EQ(m[2]["key"], "a.int64");
  EXPECT_EQ(m[0]["type"], "string");
  EXPECT_EQ(m[0]["value"], "bad \xef\xbf\xbd utf-8");  // U+FFFD
  EXPECT_EQ(m[1]["type"], "uint64");
  EXPECT_EQ(m[1]["value"].get<std::uint64_t>(), 18446744073709551615ull);
  EXPECT_EQ(m[2]["value"].get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(m[3], nlohmann::ordered_json::parse(R"({"key":"f.specials","type":"array",
      "element_type":"float32","count":4,"value":[0.10000000149011612,"nan","inf","-inf"]})"));
  EXPECT_EQ(m[4], nlohmann::ordered_json::parse(R"({"key":"n.nested","type":"array",
      "element_type":"array","count":2,"value":[
        {"type":"array","element_type":"string","count":1,"value":["a"]},
        {"type":"array","element_type":"int32","count":0,"value":[]}]})"));
  EXPECT_EQ(m[5]["type"], "float64");
  EXPECT_TRUE(std::signbit(m[5]["value"].get<double>()));
  EXPECT_NE(text.find("\"z.first_in_file\""), std::string::npos);

  const auto& t = doc["tensors"];
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], nlohmann::ordered_json::parse(R"({"name":"tok_embd.weight","type":"F32",
      "type_id":0,"ne":[4,3],"n_elements":12,"offset":0,"file_offset":448,"n_bytes":48})"));
  EXPECT_EQ(t[1], nlohmann::ordered_json::parse(R"({"name":"odd\tname\n\"q\"","type":"type_99",
      "type_id":99,"ne":[256],"n_elements":256,"offset":64,"file_offset":512,"n_bytes":null})"));
  EXPECT_EQ(t[2]["ne"], nlohmann::ordered_json::array());
}

// gguf.json is written without a JSON library; its layout is that of a two-space indented dump
// (one member or element per line), which nlohmann::json's dump(2) is the reference for.
TEST(RenderJson, LayoutIsAnIndentedDump) {
  GgufFile f = hand_built();
  f.kv.push_back(
      {"x.floats", arr(ValueType::kFloat64, {f64(100.0), f64(1e300), f64(-2.5e-7)}), 300});
  f.kv.push_back({"x.empty", arr(ValueType::kString, {}), 340});
  const std::string text = render_gguf_json(f);
  const auto doc = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(text, doc.dump(2) + "\n");
  // Integral doubles stay floats.
  EXPECT_TRUE(doc["metadata"][6]["value"][0].is_number_float());
  EXPECT_EQ(doc["metadata"][6]["value"][1].get<double>(), 1e300);
  EXPECT_EQ(doc["metadata"][7]["value"], nlohmann::ordered_json::array());
}

TEST(RenderJson, IllFormedUtf8IsReplacedByteByByte) {
  const std::pair<std::string, std::string> cases[] = {
      {"ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
      {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},                                  // overlong '/'
      {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},                  // a surrogate
      {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},  // > U+10FFFF
      {"cut \xe2\x82", "cut \xef\xbf\xbd\xef\xbf\xbd"},
      {"\x80x", "\xef\xbf\xbdx"},
  };
  for (const auto& [in, want] : cases) {
    GgufFile f;
    f.kv.push_back({"k", str(in), 24});
    const auto doc = nlohmann::ordered_json::parse(render_gguf_json(f));
    EXPECT_EQ(doc["metadata"][0]["value"].get<std::string>(), want);
  }
}

TEST(RenderTsv, HandBuilt) {
  EXPECT_EQ(render_tensors_tsv(hand_built()),
            "name\ttype\tne\tn_elements\tfile_offset\tbytes\n"
            "tok_embd.weight\tF32\t4,3\t12\t448\t48\n"
            "odd\\tname\\n\\\"q\\\"\ttype_99\t256\t256\t512\t\n"
            "scalar\tF32\t\t1\t576\t4\n");
  GgufFile empty;
  EXPECT_EQ(render_tensors_tsv(empty), "name\ttype\tne\tn_elements\tfile_offset\tbytes\n");
}

// ---- against the shared metadata files ----

// The expected metadata file text computed from the reference JSON only.
std::uint64_t parse_bits(const json& bits) {
  return std::stoull(bits.get<std::string>(), nullptr, 16);
}

std::string expected_float(const std::string& type, const json& bits) {
  if (type == "float32") {
    return fmt::format("{}", std::bit_cast<float>(static_cast<std::uint32_t>(parse_bits(bits))));
  }
  return fmt::format("{}", std::bit_cast<double>(parse_bits(bits)));
}

// A nested array element as a compact JSON line: integers and booleans as JSON writes them,
// strings as JSON strings (nlohmann's escaping), nested arrays recursively.
std::string expected_json_line(const json& element) {
  std::string out = "[";
  bool first = true;
  for (const json& x : element["value"]) {
    if (!first) out += ',';
    first = false;
    if (x.is_object()) {
      out += expected_json_line(x);
    } else {
      EXPECT_FALSE(x.is_number_float()) << "no floats in nested test arrays";
      out += x.dump();
    }
  }
  return out + "]";
}

std::string expected_text(const json& kv) {
  const std::string type = kv["type"];
  if (type == "string") return kv["value"].get<std::string>() + "\n";
  if (type == "float32" || type == "float64") return expected_float(type, kv["bits"]) + "\n";
  if (type != "array") return kv["value"].dump() + "\n";  // integers and bools
  const std::string elem = kv["element_type"];
  std::string out;
  for (std::size_t n = 0; n < kv["value"].size(); ++n) {
    const json& x = kv["value"][n];
    if (elem == "string") {
      const std::string quoted = json(x.get<std::string>()).dump();
      out += quoted.substr(1, quoted.size() - 2);
    } else if (elem == "float32" || elem == "float64") {
      out += expected_float(elem, kv["bits"][n]);
    } else if (elem == "array") {
      out += expected_json_line(x);
    } else {
      out += x.dump();
    }
    out += '\n';
  }
  return out;
}

// Our gguf.json entry must equal the reference entry without its "bits" lists.
json strip_bits(json kv) {
  kv.erase("bits");
  return kv;
}

void check_metadata_file(const std::filesystem::path& gguf, const std::filesystem::path& ref_path) {
  const json ref = test::read_json(ref_path);
  const GgufFile f = parse_gguf(FileSource(gguf.string()), gguf.string());
  ASSERT_EQ(f.kv.size(), ref["kv"].size());
  for (std::size_t n = 0; n < f.kv.size(); ++n) {
    const json& r = ref["kv"][n];
    EXPECT_EQ(f.kv[n].key, r["key"].get<std::string>());
    EXPECT_EQ(render_metadata_value(f.kv[n].value), expected_text(r)) << r["key"];
  }

  const std::string text = render_gguf_json(f);
  const json doc = json::parse(text);
  EXPECT_EQ(doc["header"]["version"], ref["version"]);
  EXPECT_EQ(doc["header"]["metadata_kv_count"], ref["n_kv"]);
  EXPECT_EQ(doc["header"]["tensor_count"], ref["n_tensors"]);
  EXPECT_EQ(doc["header"]["alignment"], ref["alignment"]);
  EXPECT_EQ(doc["header"]["file_size"], ref["size"]);
  ASSERT_EQ(doc["metadata"].size(), ref["kv"].size());
  EXPECT_EQ(doc["tensors"].size(), 0u);
  for (std::size_t n = 0; n < ref["kv"].size(); ++n) {
    EXPECT_EQ(doc["metadata"][n], strip_bits(ref["kv"][n])) << ref["kv"][n]["key"];
  }
}

TEST(RenderShared, AllValueTypes) {
  GGUFS_REQUIRE_TESTDATA(dir);
  check_metadata_file(dir / "metadata/all-value-types.gguf", dir / "metadata/all-value-types.json");
}

TEST(RenderShared, AllValueTypesNested) {
  GGUFS_REQUIRE_TESTDATA(dir);
  check_metadata_file(dir / "metadata/all-value-types-nested.gguf",
                      dir / "metadata/all-value-types-nested.json");
}

TEST(RenderShared, ConformanceTensorInfos) {
  GGUFS_REQUIRE_TESTDATA(dir);
  const json manifest = test::read_json(dir / "conformance/manifest.json");
  ASSERT_FALSE(manifest["files"].empty());
  for (const json& file : manifest["files"]) {
    SCOPED_TRACE(file["file"].get<std::string>());
    const std::string path = (dir / "conformance" / file["file"].get<std::string>()).string();
    const GgufFile f = parse_gguf(FileSource(path), path);

    std::string tsv = "name\ttype\tne\tn_elements\tfile_offset\tbytes\n";
    json tensors = json::array();
    for (const json& t : file["tensors"]) {
      std::string ne;
      for (const json& d : t["ne"]) ne += (ne.empty() ? "" : ",") + d.dump();
      tsv += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", t["name"].get<std::string>(),
                         t["type"].get<std::string>(), ne, t["n_elements"].dump(),
                         t["file_offset"].dump(), t["nbytes"].dump());
      tensors.push_back({{"name", t["name"]},
                         {"type", t["type"]},
                         {"type_id", t["type_id"]},
                         {"ne", t["ne"]},
                         {"n_elements", t["n_elements"]},
                         {"offset", t["offset"]},
                         {"file_offset", t["file_offset"]},
                         {"n_bytes", t["nbytes"]}});
    }
    EXPECT_EQ(render_tensors_tsv(f), tsv);

    const json doc = json::parse(render_gguf_json(f));
    EXPECT_EQ(doc["tensors"], tensors);
    EXPECT_EQ(doc["header"]["data_offset"], file["data_offset"]);
    EXPECT_EQ(doc["header"]["file_size"], file["size"]);
    EXPECT_EQ(doc["header"]["tensor_count"], file["n_tensors"]);
    ASSERT_EQ(doc["metadata"].size(), file["kv"].size());
    for (std::size_t n = 0; n < file["kv"].size(); ++n) {
      EXPECT_EQ(doc["metadata"][n], file["kv"][n]);
    }
  }
}

// ---- .npy header ----

std::string npy(std::vector<std::uint64_t> shape) { return npy_header(shape); }

std::string npy_prefix(std::uint16_t header_len) {
  std::string p("\x93NUMPY\x01\x00", 8);
  p += static_cast<char>(header_len & 0xff);
  p += static_cast<char>(header_len >> 8);
  return p;
}

TEST(NpyHeader, ExactText2D) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  const std::string h = npy({3, 4});
  ASSERT_EQ(h.size(), 128u);
  EXPECT_EQ(h, npy_prefix(118) + dict + std::string(118 - dict.size() - 1, ' ') + "\n");
}

TEST(NpyHeader, ExactText1DAnd0D) {
  const std::string dict1 = "{'descr': '<f4', 'fortran_order': False, 'shape': (4096,), }";
  const std::string h1 = npy({4096});
  ASSERT_EQ(h1.size(), 128u);
  EXPECT_EQ(h1, npy_prefix(118) + dict1 + std::string(118 - dict1.size() - 1, ' ') + "\n");

  const std::string dict0 = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }";
  const std::string h0 = npy({});
  ASSERT_EQ(h0.size(), 128u);
  EXPECT_EQ(h0, npy_prefix(118) + dict0 + std::string(118 - dict0.size() - 1, ' ') + "\n");
}

TEST(NpyHeader, AlwaysMultipleOf64) {
  const std::uint64_t big = std::numeric_limits<std::uint64_t>::max();
  for (const auto& shape : std::vector<std::vector<std::uint64_t>>{
           {}, {1}, {7, 5}, {1, 2, 3}, {1, 2, 3, 4}, {big, big, big, big}, {123456789, 1}}) {
    const std::string h = npy(shape);
    EXPECT_EQ(h.size() % 64, 0u);
    EXPECT_EQ(h.back(), '\n');
    const std::size_t len =
        static_cast<unsigned char>(h[8]) | (static_cast<unsigned char>(h[9]) << 8);
    EXPECT_EQ(len + 10, h.size());
  }
}

bool python_has_numpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

// Runs `script` with /usr/bin/python3 and returns its standard output.
std::string run_python(const std::filesystem::path& script) {
  const std::string cmd = "/usr/bin/python3 '" + script.string() + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  std::string out;
  char buf[512];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(NpyHeader, NumpyLoadsIt) {
  if (!python_has_numpy()) GTEST_SKIP() << "/usr/bin/python3 has no numpy";
  test::TempDir tmp;
  struct Case {
    std::vector<std::uint64_t> shape;
    std::string py_shape;
  };
  const std::vector<Case> cases = {{{2, 3, 4}, "(2, 3, 4)"},
                                   {{5}, "(5,)"},
                                   {{}, "()"},
                                   {{3, 1}, "(3, 1)"},
                                   {{1, 2, 2, 3}, "(1, 2, 2, 3)"}};
  std::string script = "import numpy as np\n";
  for (std::size_t n = 0; n < cases.size(); ++n) {
    std::uint64_t count = 1;
    for (std::uint64_t d : cases[n].shape) count *= d;
    const std::string h = npy_header(cases[n].shape);
    std::vector<std::uint8_t> bytes(h.begin(), h.end());
    for (std::uint64_t k = 0; k < count; ++k) {
      const float x = static_cast<float>(k) + 0.5f;
      std::uint8_t le[4];
      std::memcpy(le, &x, 4);
      bytes.insert(bytes.end(), le, le + 4);
    }
    const auto path = tmp.path() / fmt::format("a{}.npy", n);
    test::write_file(path, bytes);
    script += fmt::format(
        "a = np.load('{}')\n"
        "assert a.shape == {}, a.shape\n"
        "assert a.dtype == np.dtype('<f4'), a.dtype\n"
        "assert (a.ravel() == np.arange({}, dtype=np.float32) + 0.5).all()\n",
        path.string(), cases[n].py_shape, count);
  }
  // Headers of shapes far too large to hold data: numpy must read the header alone.
  const std::string big = npy_header(std::vector<std::uint64_t>{4294967296ull, 3});
  test::write_file(tmp.path() / "big.npy", std::vector<std::uint8_t>(big.begin(), big.end()));
  script += fmt::format(
      "f = open('{}', 'rb')\n"
      "assert np.lib.format.read_magic(f) == (1, 0)\n"
      "shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)\n"
      "assert shape == (4294967296, 3) and not fortran and dtype == np.dtype('<f4')\n"
      "assert f.tell() == {}\n"
      "print('ok')\n",
      (tmp.path() / "big.npy").string(), big.size());
  const auto script_path = tmp.path() / "check.py";
  test::write_file(script_path, std::vector<std::uint8_t>(script.begin(), script.end()));
  EXPECT_EQ(run_python(script_path), "ok\n");
}

// ---- names ----

TEST(Names, UsableNamesUnchanged) {
  for (const char* n : {"general.name", "blk.0.attn_q.weight", "tokenizer.ggml.tokens", "a b",
                        "ütf-8 🦙", "...", ".hidden", "a.", "-", "back\\slash"}) {
    EXPECT_EQ(file_name_for(n), n);
  }
}

TEST(Names, Escapes) {
  EXPECT_EQ(file_name_for("a/b"), "a%2Fb");
  EXPECT_EQ(file_name_for("/"), "%2F");
  EXPECT_EQ(file_name_for("%"), "%25");
  EXPECT_EQ(file_name_for("100%/x"), "100%25%2Fx");
  EXPECT_EQ(file_name_for(""), "%");
  EXPECT_EQ(file_name_for("."), "%2E");
  EXPECT_EQ(file_name_for(".."), "%2E%2E");
  EXPECT_EQ(file_name_for(std::string("a\0b", 3)), "a%00b");
  EXPECT_EQ(file_name_for("tab\there\nnl\x1b[31m\x7f"), "tab%09here%0Anl%1B[31m%7F");
}

TEST(Names, NeverUnusable) {
  for (int c = 0; c < 256; ++c) {
    for (const std::string& n :
         {std::string(1, static_cast<char>(c)), std::string(2, static_cast<char>(c))}) {
      const std::string f = file_name_for(n);
      EXPECT_FALSE(f.empty());
      EXPECT_NE(f, ".");
      EXPECT_NE(f, "..");
      EXPECT_EQ(f.find('/'), std::string::npos);
      EXPECT_EQ(f.find('\0'), std::string::npos);
    }
  }
}

TEST(Names, Injective) {
  std::vector<std::string> names = {
      "",     "%",   "%%",    "%25",     "%2F", "/", ".", "..",  "...", "%2E", "%2E%2E", ".%2E",
      "%2E.", "a/b", "a%2Fb", "a%252Fb", "%00", "a", "A", "%2f", "%0A", "\n",  "%0a"};
  names.emplace_back(std::string(1, '\0'));
  names.emplace_back(std::string(2, '\0'));
  for (int c = 0; c < 256; ++c) names.emplace_back(1, static_cast<char>(c));
  std::set<std::string> distinct(names.begin(), names.end());
  std::set<std::string> files;
  for (const std::string& n : distinct) files.insert(file_name_for(n));
  EXPECT_EQ(files.size(), distinct.size());
}

TEST(Names, PrintableEscapesControls) {
  EXPECT_EQ(printable("plain text"), "plain text");
  EXPECT_EQ(printable("\x1b[2Jgone"), "\\x1b[2Jgone");
  EXPECT_EQ(printable("a\nb\tc\rd\x7f"), "a\\x0ab\\x09c\\x0dd\\x7f");
  EXPECT_EQ(printable(std::string("nul\0", 4)), "nul\\x00");
  EXPECT_EQ(printable("back\\slash"), "back\\\\slash");
  EXPECT_EQ(printable("ütf-8"), "ütf-8");
  // The escaping cannot be forged: an escaped ESC and a literal "\x1b" differ.
  EXPECT_NE(printable("\x1b"), printable("\\x1b"));
}

// RFC 3629 §3-4: each byte outside a well-formed sequence is one U+FFFD.
TEST(Names, ValidUtf8ReplacesEachIllFormedByte) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(valid_utf8("plain \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"),
            "plain \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(valid_utf8(std::string("a\xFF") + "b"), "a" + r + "b");
  EXPECT_EQ(valid_utf8("\xC0\xAF"), r + r);                  // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), r + r + r);          // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(valid_utf8("\xE2\x82"), r + r);                  // cut short
  EXPECT_EQ(valid_utf8(std::string("n\0l", 3)), std::string("n\0l", 3));
}

TEST(Names, UniqueNamesNumbersRepeatsAroundTakenNames) {
  EXPECT_EQ(unique_names({"a", "b", "a", "a~2", "a"}),
            (std::vector<std::string>{"a", "b", "a~3", "a~2", "a~4"}));
  EXPECT_EQ(unique_names({"x", "y"}), (std::vector<std::string>{"x", "y"}));
}

}  // namespace
}  // namespace ggufs
