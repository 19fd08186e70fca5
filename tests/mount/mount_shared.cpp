// Mount tests on the shared test data (skipped with a message where it is absent): ggml's
// conformance files against their reference outputs, real converter output, every metadata
// value type, and a corrupt file.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "ggufs/ggml_type.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

TEST(MountConformance, RawAndF32MatchGgmlReferences) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto manifest = read_json(dir / "conformance" / "manifest.json");
  int checked = 0;
  for (const auto& mf : manifest["files"]) {
    const TypeTraits* tr = type_traits(mf["type_id"].get<std::uint32_t>());
    ASSERT_NE(tr, nullptr);
    Mount m(dir / "conformance" / mf["file"].get<std::string>());
    ASSERT_TRUE(m.mounted()) << m.output();
    for (const auto& mt : mf["tensors"]) {
      const std::string name = mt["name"];
      SCOPED_TRACE(mf["file"].get<std::string>() + " " + name);
      EXPECT_EQ(sha256_of(m / ("raw/" + name)), mt["sha256_raw"].get<std::string>());
      ASSERT_NE(tr->to_float, nullptr);  // every type of src/ggml/README.md is decoded
      const auto f32 = m / ("f32/" + name);
      EXPECT_EQ(std::filesystem::file_size(f32), mt["n_elements"].get<std::uint64_t>() * 4);
      EXPECT_EQ(sha256_of(f32), mt["sha256_ref"].get<std::string>());
      // Odd sub-ranges, starting and ending inside a float and inside a block, through dd.
      const auto ref = read_file(dir / "conformance" / mt["ref"].get<std::string>());
      ASSERT_GE(ref.size(), 128u);
      for (auto [skip, count] : std::initializer_list<std::pair<std::size_t, std::size_t>>{
               {3, 5}, {37, 61}, {ref.size() / 2 - 1, ref.size() / 2 - 2}, {ref.size() - 9, 9}}) {
        const RunResult r = run("dd if=" + quote(f32) + " bs=1 skip=" + std::to_string(skip) +
                                " count=" + std::to_string(count) + " status=none");
        ASSERT_EQ(r.output.size(), count);
        EXPECT_EQ(0, std::memcmp(r.output.data(), ref.data() + skip, count)) << skip;
      }
      ++checked;
    }
  }
  std::size_t tensors = 0;
  for (const auto& mf : manifest["files"]) tensors += mf["tensors"].size();
  EXPECT_EQ(manifest["files"].size(), 35u);  // one file per type
  EXPECT_EQ(static_cast<std::size_t>(checked), tensors);
}

TEST(MountConformance, NumpyLoadsNpyWithShapeAndValues) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NUMPY();
  GGUFS_REQUIRE_TESTDATA(dir);
  for (const char* type : {"Q4_K", "F16", "Q6_K"}) {
    Mount m(dir / "conformance" / (std::string(type) + ".gguf"));
    ASSERT_TRUE(m.mounted()) << m.output();
    const std::string script =
        "import numpy as np, sys\n"
        "a = np.load(sys.argv[1] + '/npy/test.cube.npy', mmap_mode='r')\n"
        "ref = np.fromfile(sys.argv[2] + '/test.cube.f32', dtype='<f4')\n"
        "assert a.shape == (2, 2, 2 * int(sys.argv[3])), a.shape\n"
        "assert np.array_equal(a.reshape(-1), ref)\n"
        "b = np.load(sys.argv[1] + '/npy/test.vec.npy')\n"
        "assert b.shape == (int(sys.argv[3]),)\n"
        "print('ok')\n";
    const int block = std::string(type) == "F16" ? 64 : 256;
    const RunResult r =
        run("/usr/bin/python3 -c " + quote(script) + " " + quote(m.path()) + " " +
            quote(dir / "conformance" / "ref" / type) + " " + std::to_string(block) + " 2>&1");
    EXPECT_EQ(r.output, "ok\n") << type;
  }
}

// f16/ holds NumPy's float16 of ggml's reference float32 values, bit for bit, for every type;
// sub-ranges through dd agree with the whole file.
TEST(MountConformance, F16IsNumpysFloat16OfTheReferences) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NUMPY();
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto manifest = read_json(dir / "conformance" / "manifest.json");
  const std::string script =
      "import numpy as np, sys\n"
      "np.seterr(over='ignore')  # values beyond 65504 become inf, as they must\n"
      "mnt, ref = sys.argv[1], sys.argv[2]\n"
      "for pair in sys.argv[3:]:\n"
      "    name, ref_file = pair.split('=')\n"
      "    want = np.fromfile(ref + '/' + ref_file, dtype='<f4').astype('<f2').tobytes()\n"
      "    got = open(mnt + '/f16/' + name, 'rb').read()\n"
      "    assert got == want, (name, len(got), len(want))\n"
      "print('ok')\n";
  int checked = 0;
  for (const auto& mf : manifest["files"]) {
    SCOPED_TRACE(mf["file"].get<std::string>());
    Mount m(dir / "conformance" / mf["file"].get<std::string>());
    ASSERT_TRUE(m.mounted()) << m.output();
    std::string pairs;
    for (const auto& mt : mf["tensors"]) {
      const std::string name = mt["name"];
      pairs += " " + quote(name + "=" + mt["ref"].get<std::string>());
      const auto f16 = m / ("f16/" + name);
      EXPECT_EQ(std::filesystem::file_size(f16), mt["n_elements"].get<std::uint64_t>() * 2);
      const std::string whole = read_text(f16);
      const RunResult part =
          run("dd if=" + quote(f16) + " bs=1 skip=3 count=37 status=none 2>/dev/null");
      EXPECT_EQ(part.output, whole.substr(3, 37)) << name;
      ++checked;
    }
    const RunResult r = run("/usr/bin/python3 -c " + quote(script) + " " + quote(m.path()) + " " +
                            quote(dir / "conformance") + pairs + " 2>&1");
    EXPECT_EQ(r.output, "ok\n");
  }
  EXPECT_GE(checked, 35);
}

TEST(MountReal, TinyLlamaMatchesTheManifest) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto manifest = read_json(dir / "real" / "manifest.json");
  const auto& mf = manifest["llama-2-tiny-random.gguf"];
  Mount m(dir / "real" / "llama-2-tiny-random.gguf");
  ASSERT_TRUE(m.mounted()) << m.output();
  for (const auto& mt : mf["tensors"]) {
    const std::string name = mt["name"];
    EXPECT_EQ(sha256_of(m / ("raw/" + name)), mt["raw_sha256"].get<std::string>()) << name;
    EXPECT_EQ(sha256_of(m / ("f32/" + name)), mt["f32_sha256"].get<std::string>()) << name;
    struct stat st {};
    ASSERT_EQ(::stat((m / ("raw/" + name)).c_str(), &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), mt["nbytes"].get<std::uint64_t>());
  }
  if (have_numpy()) {
    const std::string script =
        "import numpy as np, sys\n"
        "a = np.load(sys.argv[1] + '/npy/token_embd.weight.npy', mmap_mode='r')\n"
        "print(a.shape, a.dtype)\n";
    EXPECT_EQ(run("/usr/bin/python3 -c " + quote(script) + " " + quote(m.path()) + " 2>&1").output,
              "(32000, 8) float32\n");
  }
}

TEST(MountReal, VocabularyTokenFilesHaveOneLinePerToken) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NUMPY();
  GGUFS_REQUIRE_TESTDATA(dir);
  for (const char* f :
       {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-bert-bge.gguf",
        "ggml-vocab-phi-3.gguf", "ggml-vocab-deepseek-llm.gguf", "llama-2-tiny-random.gguf"}) {
    Mount m(dir / "real" / f);
    ASSERT_TRUE(m.mounted()) << m.output();
    const std::string script =
        "import json, sys\n"
        "d = json.load(open(sys.argv[1] + '/gguf.json'))\n"
        "kv = {e['key']: e for e in d['metadata']}\n"
        "lines = open(sys.argv[1] + '/metadata/tokenizer.ggml.tokens', 'rb').read().split(b'\\n')\n"
        "assert lines[-1] == b''\n"
        "n = len(lines) - 1\n"
        "assert n == len(kv['tokenizer.ggml.tokens']['value']), n\n"
        "print('ok' if n > 1000 else n)\n";
    EXPECT_EQ(run("/usr/bin/python3 -c " + quote(script) + " " + quote(m.path()) + " 2>&1").output,
              "ok\n")
        << f;
  }
}

TEST(MountReal, CorruptFileIsRefusedWithAnOffset) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  Mount m(dir / "real" / "corrupt" / "ggml-vocab-gpt-2.text-mangled.gguf");
  EXPECT_FALSE(m.mounted());
  EXPECT_EQ(m.exit_code(), 3);
  EXPECT_NE(m.output().find("text-mangled.gguf: at byte "), std::string::npos) << m.output();
}

// Checks one line of a float value: it parses back to exactly `bits` and has no more
// significant digits than the type needs (9 for float32, 17 for float64).
void expect_float_line(const std::string& line, const std::string& type, const std::string& bits) {
  const std::uint64_t want = std::stoull(bits, nullptr, 16);
  if (type == "float32") {
    const float v = std::strtof(line.c_str(), nullptr);
    if (std::isnan(std::bit_cast<float>(static_cast<std::uint32_t>(want)))) {
      EXPECT_TRUE(std::isnan(v)) << line;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(v), want) << line;
    }
  } else {
    const double v = std::strtod(line.c_str(), nullptr);
    if (std::isnan(std::bit_cast<double>(want))) {
      EXPECT_TRUE(std::isnan(v)) << line;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(v), want) << line;
    }
  }
  std::size_t digits = 0;
  for (char c : line.substr(0, line.find_first_of("eE")))
    digits += std::isdigit(static_cast<unsigned char>(c)) != 0;
  EXPECT_LE(digits, type == "float32" ? 9u : 17u) << line;
}

// The expected text of one scalar JSON value from all-value-types.json (floats are checked by
// round trip instead: any shortest representation is acceptable).
std::string scalar_text(const nlohmann::json& v, const std::string& type) {
  if (type == "bool") return v.get<bool>() ? "true" : "false";
  if (type == "string") return v.get<std::string>();
  return v.dump();  // integers: JSON integers are exact
}

TEST(MountMetadata, EveryValueTypeMatchesTheJson) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto expected = read_json(dir / "metadata" / "all-value-types.json");
  Mount m(dir / "metadata" / "all-value-types.gguf");
  ASSERT_TRUE(m.mounted()) << m.output();
  int checked = 0;
  for (const auto& kv : expected["kv"]) {
    const std::string key = kv["key"], type = kv["type"];
    SCOPED_TRACE(key);
    const std::string got = read_text(m / ("metadata/" + key));
    if (type == "array") {
      const std::string et = kv["element_type"];
      std::vector<std::string> lines;
      std::stringstream ss(got);
      for (std::string line; std::getline(ss, line);) lines.push_back(line);
      ASSERT_EQ(lines.size(), kv["value"].size());
      if (lines.empty()) {
        EXPECT_EQ(got, "");
      }
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (et == "float32" || et == "float64") {
          expect_float_line(lines[i], et, kv["bits"][i]);
        } else if (et == "string") {
          // Each line is the string as a JSON string body: decoded by nlohmann-json (an
          // implementation of its own), it must be the value.
          EXPECT_EQ(nlohmann::json::parse("\"" + lines[i] + "\"").get<std::string>(),
                    kv["value"][i].get<std::string>());
        } else {
          EXPECT_EQ(lines[i], scalar_text(kv["value"][i], et));
        }
      }
    } else {
      ASSERT_FALSE(got.empty());
      EXPECT_EQ(got.back(), '\n');
      const std::string body = got.substr(0, got.size() - 1);
      if (type == "float32" || type == "float64") {
        expect_float_line(body, type, kv["bits"]);
      } else {
        EXPECT_EQ(body, scalar_text(kv["value"], type));
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 61);
}

}  // namespace
}  // namespace ggufs::test
