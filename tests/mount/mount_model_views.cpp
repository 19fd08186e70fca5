// The whole-model views through a real mount: model.gguf against what llama.cpp's
// llama-gguf-split --merge writes, model.safetensors read by a reader written from the format's
// specification (tests/support/safetensors_reader.py) against ggml's reference values.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>

#include "http_server.h"
#include "mount_util.h"
#include "node_clients.h"

namespace ggufs::test {
namespace {

RunResult python(const std::string& script, const std::string& args) {
  return run("cd " GGUFS_SOURCE_DIR "/tests/support && /usr/bin/python3 -c " + quote(script) + " " +
             args + " 2>&1");
}

TEST(ModelGguf, SplitModelIsWhatLlamaGgufSplitMergeWrites) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  const std::string want = listed_split_sha256(dir, "tiny-llama-merged.gguf");
  ASSERT_EQ(want.size(), 64u);
  // From any shard.
  for (const char* shard : {"tiny-llama-00001-of-00003.gguf", "tiny-llama-00003-of-00003.gguf"}) {
    Mount m(dir / "split" / shard);
    ASSERT_TRUE(m.mounted()) << m.output();
    struct stat st {};
    ASSERT_EQ(::stat((m / "model.gguf").c_str(), &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size),
              std::filesystem::file_size(dir / "split" / "tiny-llama-merged.gguf"));
    EXPECT_EQ(sha256_of(m / "model.gguf"), want) << shard;
    // dd of ranges that start and end inside the header, a tensor and its padding.
    const auto merged = read_file(dir / "split" / "tiny-llama-merged.gguf");
    for (auto [skip, count] : std::initializer_list<std::pair<std::size_t, std::size_t>>{
             {3, 70000}, {724470, 20}, {1236600, 1000}, {merged.size() - 7, 7}}) {
      const RunResult r =
          run("dd if=" + quote(m / "model.gguf") + " bs=1 skip=" + std::to_string(skip) +
              " count=" + std::to_string(count) + " status=none");
      ASSERT_EQ(r.output.size(), count);
      EXPECT_EQ(0, std::memcmp(r.output.data(), merged.data() + skip, count)) << skip;
    }
    // Past the end: nothing.
    EXPECT_EQ(run("dd if=" + quote(m / "model.gguf") + " bs=4096 skip=10000 status=none").output,
              "");
  }
}

TEST(ModelGguf, MmapReadsTheSameBytes) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  Mount m(dir / "split" / "tiny-llama-00001-of-00003.gguf");
  ASSERT_TRUE(m.mounted()) << m.output();
  const std::string script =
      "import mmap, sys, hashlib\n"
      "with open(sys.argv[1], 'rb') as f:\n"
      "    mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
      "    print(hashlib.sha256(mm[:]).hexdigest())\n";
  EXPECT_EQ(python(script, quote(m / "model.gguf")).output,
            listed_split_sha256(dir, "tiny-llama-merged.gguf") + "\n");
}

TEST(ModelGguf, SingleFileIsTheFileItself) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  for (const char* f : {"real/llama-2-tiny-random.gguf", "conformance/Q4_K.gguf"}) {
    Mount m(dir / f);
    ASSERT_TRUE(m.mounted()) << m.output();
    EXPECT_EQ(sha256_of(m / "model.gguf"), sha256_of(dir / f)) << f;
    EXPECT_EQ(
        run("getfattr --only-values -n user.ggufs.view " + quote(m / "model.gguf") + " 2>/dev/null")
            .output,
        "GGUF: the model file as it is");
  }
}

// A shard that loses its tail fails the reads of model.gguf that touch it, and only those.
TEST(ModelGguf, ATruncatedShardFailsOnlyItsReads) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  TempDir tmp;
  for (int i = 1; i <= 3; ++i) {
    const std::string name = fmt::format("tiny-llama-0000{}-of-00003.gguf", i);
    std::filesystem::copy_file(dir / "split" / name, tmp.path() / name);
  }
  Mount m(tmp.path() / "tiny-llama-00001-of-00003.gguf");
  ASSERT_TRUE(m.mounted()) << m.output();
  std::filesystem::resize_file(tmp.path() / "tiny-llama-00003-of-00003.gguf", 1000);
  const auto merged = read_file(dir / "split" / "tiny-llama-merged.gguf");
  // Header and shard 1's tensors: fine. Shard 3's last tensor (output.weight, at byte 1238624
  // of the merge): EIO.
  const RunResult head = run("dd if=" + quote(m / "model.gguf") + " bs=4096 count=100 status=none");
  ASSERT_EQ(head.exit_code, 0);
  EXPECT_EQ(0, std::memcmp(head.output.data(), merged.data(), head.output.size()));
  const RunResult tail =
      run("dd if=" + quote(m / "model.gguf") + " bs=4096 skip=400 status=none 2>&1 >/dev/null");
  EXPECT_NE(tail.exit_code, 0);
  EXPECT_NE(tail.output.find("Input/output error"), std::string::npos) << tail.output;
  EXPECT_EQ(sha256_of(m / "raw/blk.0.attn_q.weight"), sha256_hex(merged.data() + 1236480, 128));
}

// The reader of tests/support/safetensors_reader.py on model.safetensors of every conformance
// file: plain types as stored (their raw bytes, by ggml's sha256), every other type as float32
// equal to ggml's reference values; shapes are ne reversed.
TEST(ModelSafetensors, ConformanceFilesHoldGgmlsValues) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NUMPY();
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto manifest = read_json(dir / "conformance" / "manifest.json");
  const std::string script =
      "import sys, json, hashlib, numpy as np, safetensors_reader as st\n"
      "kept = {'F32','F16','BF16','F64','I8','I16','I32','I64'}\n"
      "meta, arrays = st.read(sys.argv[1])\n"
      "assert meta['format'] == 'pt', meta\n"
      "mf = json.loads(sys.argv[3])\n"
      "assert sorted(arrays) == sorted(t['name'] for t in mf['tensors']), sorted(arrays)\n"
      "for t in mf['tensors']:\n"
      "    a = arrays[t['name']]\n"
      "    assert list(a.shape) == list(reversed(t['ne'])), (t['name'], a.shape)\n"
      "    if mf['type'] in kept:\n"
      "        assert hashlib.sha256(a.tobytes()).hexdigest() == t['sha256_raw'], t['name']\n"
      "    else:\n"
      "        assert a.dtype == np.dtype('<f4'), a.dtype\n"
      "        ref = np.fromfile(sys.argv[2] + '/' + t['ref'], dtype='<u4')\n"
      "        assert np.array_equal(a.reshape(-1).view('<u4'), ref), t['name']\n"
      "print('ok')\n";
  int files = 0;
  for (const auto& mf : manifest["files"]) {
    SCOPED_TRACE(mf["file"].get<std::string>());
    Mount m(dir / "conformance" / mf["file"].get<std::string>());
    ASSERT_TRUE(m.mounted()) << m.output();
    const RunResult r = python(script, quote(m / "model.safetensors") + " " +
                                           quote(dir / "conformance") + " " + quote(mf.dump()));
    EXPECT_EQ(r.output, "ok\n");
    ++files;
  }
  EXPECT_EQ(files, 35);
}

// -o safetensors_dtype=f16|bf16|f32: every floating tensor in that dtype, NumPy's float16 of
// ggml's reference values, or their bfloat16 as torch rounds (round_to_nearest_even of
// c10/util/BFloat16.h: NaN to 0x7fc0, else the upper half after adding 0x7fff plus the lowest
// kept bit); a tensor already of that dtype stays as stored; integer tensors stay as they are.
TEST(ModelSafetensors, DtypeOptionRoundsTheReferences) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NUMPY();
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto manifest = read_json(dir / "conformance" / "manifest.json");
  const std::string script =
      "import sys, json, hashlib, numpy as np, safetensors_reader as st\n"
      "np.seterr(over='ignore')\n"
      "want_dtype = {'f16': 'F16', 'bf16': 'BF16', 'f32': 'F32'}[sys.argv[4]]\n"
      "meta, arrays = st.read(sys.argv[1])\n"
      "mf = json.loads(sys.argv[3])\n"
      "header = json.loads(open(sys.argv[1], 'rb').read(8 + int.from_bytes(open(sys.argv[1], "
      "'rb').read(8), 'little'))[8:])\n"
      "for t in mf['tensors']:\n"
      "    a = arrays[t['name']]\n"
      "    dtype = header[t['name']]['dtype']\n"
      "    if mf['type'] in ('I8', 'I16', 'I32', 'I64') or mf['type'] == want_dtype:\n"
      "        assert dtype == mf['type'], (dtype, mf['type'])\n"
      "        assert hashlib.sha256(a.tobytes()).hexdigest() == t['sha256_raw'], t['name']\n"
      "        continue\n"
      "    assert dtype == want_dtype, dtype\n"
      "    ref = np.fromfile(sys.argv[2] + '/' + t['ref'], dtype='<f4')\n"
      "    if want_dtype == 'F16':\n"
      "        want = ref.astype('<f2').view('<u2')\n"
      "    elif want_dtype == 'BF16':\n"
      "        u = ref.view('<u4').astype(np.uint64)\n"
      "        want = ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype('<u2')\n"
      "        want[np.isnan(ref)] = 0x7fc0\n"
      "    else:\n"
      "        want = ref.view('<u4')\n"
      "    assert np.array_equal(a.reshape(-1).view(want.dtype), want), t['name']\n"
      "print('ok')\n";
  for (const char* dtype : {"f16", "bf16", "f32"}) {
    for (const auto& mf : manifest["files"]) {
      const std::string type = mf["type"];
      // The plain types, and two of each family of quantized ones.
      if (type.find('_') != std::string::npos && type != "Q4_K" && type != "Q8_0" &&
          type != "IQ2_XXS" && type != "IQ4_NL" && type != "TQ1_0" && type != "MXFP4") {
        continue;
      }
      SCOPED_TRACE(fmt::format("{} {}", dtype, type));
      Mount m(dir / "conformance" / mf["file"].get<std::string>(),
              fmt::format("-o safetensors_dtype={}", dtype));
      ASSERT_TRUE(m.mounted()) << m.output();
      const RunResult r =
          python(script, quote(m / "model.safetensors") + " " + quote(dir / "conformance") + " " +
                             quote(mf.dump()) + " " + dtype);
      EXPECT_EQ(r.output, "ok\n");
    }
  }
}

TEST(ModelSafetensors, TinyLlamaSplitHoldsEveryTensorAndScalarKey) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NUMPY();
  GGUFS_REQUIRE_TESTDATA(dir);
  const auto manifest = read_json(dir / "real" / "manifest.json");
  const auto& mf = manifest["llama-2-tiny-random.gguf"];
  for (const char* f : {"real/llama-2-tiny-random.gguf", "split/tiny-llama-00002-of-00003.gguf"}) {
    Mount m(dir / f);
    ASSERT_TRUE(m.mounted()) << m.output();
    // F16 tensors are kept: their bytes are the raw ones; F32 likewise.
    const std::string script =
        "import sys, json, hashlib, safetensors_reader as st\n"
        "meta, arrays = st.read(sys.argv[1])\n"
        "mf = json.loads(sys.argv[2])\n"
        "assert meta['general.architecture'] == 'llama', meta\n"
        "assert meta['llama.attention.layer_norm_rms_epsilon'] == '1e-05', meta\n"
        "assert 'tokenizer.ggml.tokens' not in meta\n"
        "assert sorted(arrays) == sorted(t['name'] for t in mf['tensors'])\n"
        "for t in mf['tensors']:\n"
        "    assert hashlib.sha256(arrays[t['name']].tobytes()).hexdigest() == t['raw_sha256']\n"
        "print('ok')\n";
    EXPECT_EQ(python(script, quote(m / "model.safetensors") + " " + quote(mf.dump())).output,
              "ok\n")
        << f;
    EXPECT_EQ(run("getfattr --only-values -n user.ggufs.view " + quote(m / "model.safetensors") +
                  " 2>/dev/null")
                  .output,
              "safetensors: 12 tensors");
  }
}

TEST(ModelSafetensors, BadDtypeOptionIsAUsageError) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  Mount m(dir / "conformance" / "F32.gguf", "-o safetensors_dtype=f8");
  EXPECT_FALSE(m.mounted());
  EXPECT_EQ(m.exit_code(), 1);
  EXPECT_NE(m.output().find("safetensors_dtype=f8: must be f32, f16 or bf16"), std::string::npos)
      << m.output();
}

TEST(HfFolderOptions, BadValuesAreUsageErrors) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  const std::pair<const char*, const char*> cases[] = {
      {"hf_dtype=f8", "hf_dtype=f8: must be f32, f16 or bf16"},
      {"mlx_dtype=f64", "mlx_dtype=f64: must be f32, f16 or bf16"},
      {"mlx_requantize=7", "mlx_requantize=7: must be 8, 6 or 4 (bits)"},
      {"hf_max_shard_size=0", "hf_max_shard_size=0: must be a positive number"},
      {"hf_max_shard_size=5XB", "hf_max_shard_size=5XB: must be a positive number"},
      {"hf_max_shard_size=GB", "hf_max_shard_size=GB: must be a positive number"},
      {"hf_max_shard_size=2000000TB", "hf_max_shard_size=2000000TB: must be a positive number"},
  };
  for (const auto& [option, message] : cases) {
    Mount m(dir / "real" / "llama-2-tiny-random.gguf", std::string("-o ") + option);
    EXPECT_FALSE(m.mounted()) << option;
    EXPECT_EQ(m.exit_code(), 1) << option;
    EXPECT_NE(m.output().find(message), std::string::npos) << m.output();
  }
  // save_pretrained's own spelling is taken: the 2 MB tiny llama in shards of at most 1 MB, each
  // named by the index (how save_pretrained splits is checked against it in
  // tests/python/test_hf_folder.py).
  Mount m(dir / "real" / "llama-2-tiny-random.gguf", "-o hf_max_shard_size=1MB");
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_FALSE(std::filesystem::exists(m / "hf/model.safetensors"));
  const nlohmann::json index = read_json(m / "hf/model.safetensors.index.json");
  std::map<std::string, int> tensors_in;  // shard file → tensors
  for (const auto& [name, file] : index["weight_map"].items()) ++tensors_in[file];
  EXPECT_GE(tensors_in.size(), 2u);
  for (const auto& [file, n] : tensors_in) {
    ASSERT_TRUE(std::filesystem::exists(m / "hf" / file)) << file;
    // At most 1 MB of tensor data (a header of under 4 KiB), unless one larger tensor alone.
    if (n > 1) {
      EXPECT_LE(std::filesystem::file_size(m / "hf" / file), 1'004'096u) << file;
    }
  }
}

// llama.cpp (node-llama-cpp's prebuilt CPU build) loads model.gguf from the mount and computes
// exactly the reference logits of split/README.md: of the split model, of the single file, and
// of the split model served by nginx.
TEST(ModelGguf, LlamaCppLoadsTheMergedSplitModelAndTheSingleFile) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  GGUFS_REQUIRE_NODE_CLIENTS();
  for (const char* f : {"split/tiny-llama-00001-of-00003.gguf", "real/llama-2-tiny-random.gguf"}) {
    Mount m(dir / f);
    ASSERT_TRUE(m.mounted()) << m.output();
    expect_llama_reference(m / "model.gguf");
  }
}

TEST(ModelGguf, LlamaCppLoadsTheMergedRemoteSplitModel) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  GGUFS_REQUIRE_TESTDATA(dir);
  GGUFS_REQUIRE_NODE_CLIENTS();
  TempDir cache;
  Nginx server(dir / "split");
  Mount m(server.url("tiny-llama-00002-of-00003.gguf"), "-o cache_dir=" + cache.path().string());
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(sha256_of(m / "model.gguf"), listed_split_sha256(dir, "tiny-llama-merged.gguf"));
  expect_llama_reference(m / "model.gguf");
}

// Hugging Face's own GGUF reader sees in model.gguf of the split model the original's metadata
// (less the split keys) and tensor infos.
TEST(ModelGguf, HuggingFaceGgufReadsTheMergedSplitModelAsTheOriginal) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  GGUFS_REQUIRE_NODE_CLIENTS();
  Mount m(dir / "split" / "tiny-llama-00001-of-00003.gguf");
  ASSERT_TRUE(m.mounted()) << m.output();
  auto merged = gguf_js_dump((m / "model.gguf").string());
  auto original = gguf_js_dump((dir / "real" / "llama-2-tiny-random.gguf").string());
  for (auto* j : {&merged, &original}) {
    auto& md = (*j)["metadata"];
    for (const char* k : {"split.no", "split.count", "split.tensors.count", "kv_count"}) {
      md.erase(k);
    }
  }
  EXPECT_EQ(merged["metadata"], original["metadata"]);
  ASSERT_EQ(merged["tensorInfos"].size(), 12u);
  EXPECT_EQ(merged["tensorInfos"], original["tensorInfos"]);
}

}  // namespace
}  // namespace ggufs::test
