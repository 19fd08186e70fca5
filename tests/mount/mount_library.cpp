// Libraries of models through a real mount: a folder of GGUF files (the Hugging Face cache's
// shape included) and Ollama's model store, one folder per model, each opened on first use.
// Expected values come from the shared test data (llama.cpp's outputs and sums) or from the
// models the tests write themselves.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "corpus.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

// general.architecture of real/llama-2-tiny-random.gguf, a LLaMA-2 model (testdata's README).
constexpr const char* kTinyArchitecture = "llama\n";
constexpr const char* kModelMediaType = "application/vnd.ollama.image.model";

// The entries of folder `dir` in readdir order (the order the mount gives).
Names listing(const fs::path& dir) {
  Names out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

std::string arch_of(const Mount& m, const std::string& folder) {
  return read_text(m / folder / "metadata/general.architecture");
}

void make_link(const fs::path& target, const fs::path& link) {
  fs::create_directories(link.parent_path());
  fs::create_symlink(target, link);
}

// Expects `folder` of mount `m` to hold only `error`, whose text holds each of `pieces`.
void expect_error_folder(const Mount& m, const std::string& folder, const Names& pieces) {
  EXPECT_EQ(listing(m / folder), Names{"error"}) << folder;
  const std::string text = read_text(m / folder / "error");
  for (const std::string& p : pieces)
    EXPECT_NE(text.find(p), std::string::npos) << p << " in\n" << text;
}

void copy_split_shards(const fs::path& testdata, const fs::path& to) {
  fs::create_directories(to);
  for (int i = 1; i <= 3; ++i) {
    const std::string name = fmt::format("tiny-llama-0000{}-of-00003.gguf", i);
    fs::copy_file(testdata / "split" / name, to / name);
  }
}

TEST(LibraryFolder, ServesEachModelInItsOwnFolder) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  TempDir tmp;
  const fs::path lib = tmp.path() / "lib";
  write_arch_model(lib / "alpha.gguf", "alpha-arch");
  copy_split_shards(dir, lib / "split");
  write_arch_model(lib / "nested" / "deeper" / "gamma.gguf", "gamma-arch");
  write_file(lib / "bad.gguf", std::vector<std::uint8_t>(64, 'z'));
  write_arch_model(lib / ".cache" / "hidden.gguf", "hidden-arch");
  write_file(lib / "notes.txt", {'h', 'i'});
  make_link("..", lib / "nested" / "loop");  // back to lib: searched once, no endless walk

  Mount m(lib);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(listing(m.path()), (Names{"alpha", "bad", "gamma", "tiny-llama"}));
  EXPECT_FALSE(fs::exists(m / "hidden"));
  EXPECT_FALSE(fs::exists(m / ".cache"));

  EXPECT_EQ(arch_of(m, "alpha"), "alpha-arch\n");
  EXPECT_EQ(arch_of(m, "gamma"), "gamma-arch\n");
  const std::string merged = listed_split_sha256(dir, "tiny-llama-merged.gguf");
  ASSERT_EQ(merged.size(), 64u);
  EXPECT_EQ(sha256_of(m / "tiny-llama" / "model.gguf"), merged);
  EXPECT_TRUE(fs::exists(m / "alpha" / "gguf.json"));

  expect_error_folder(m, "bad", {(lib / "bad.gguf").string(), "not a GGUF file"});
  // The other models still read right after the failed one.
  EXPECT_EQ(arch_of(m, "alpha"), "alpha-arch\n");
  EXPECT_EQ(read_text(m / "gamma" / "metadata/general.architecture"), "gamma-arch\n");
  EXPECT_EQ(read_file(m / "alpha" / "raw" / "t.weight"), std::vector<std::uint8_t>(16, 7));
}

// The Hugging Face cache: snapshots/<revision>/<file> link to blobs/<hash>; two revisions of one
// blob are one model.
TEST(LibraryFolder, HuggingFaceCacheShape) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  TempDir tmp;
  const fs::path hub = tmp.path() / "hub";
  const fs::path tiny = dir / "real" / "llama-2-tiny-random.gguf";
  const std::string tiny_sha = sha256_of(tiny);
  const fs::path repo = hub / "models--org--name";
  fs::create_directories(repo / "blobs");
  fs::copy_file(tiny, repo / "blobs" / tiny_sha);
  for (const char* rev : {"1111aaaa", "2222bbbb"})
    make_link("../../blobs/" + tiny_sha, repo / "snapshots" / rev / "model-Q4.gguf");
  fs::create_directories(repo / "refs");
  write_file(repo / "refs" / "main", {'1', '1', '1', '1'});
  write_arch_model(hub / ".locks" / "models--org--name" / "x.gguf", "lock-arch");

  const fs::path split = hub / "models--org--split";
  copy_split_shards(dir, split / "blobs");
  for (int i = 1; i <= 3; ++i) {
    const std::string name = fmt::format("tiny-llama-0000{}-of-00003.gguf", i);
    const std::string hash = sha256_of(split / "blobs" / name);
    fs::rename(split / "blobs" / name, split / "blobs" / hash);
    make_link("../../blobs/" + hash, split / "snapshots" / "3333cccc" / name);
  }
  const fs::path dangling = hub / "models--org--gone" / "snapshots" / "4444dddd" / "gone.gguf";
  make_link("../../blobs/0123456789", dangling);

  Mount m(hub);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(listing(m.path()), (Names{"gone", "model-Q4", "tiny-llama"}));
  EXPECT_EQ(sha256_of(m / "model-Q4" / "model.gguf"), tiny_sha);
  EXPECT_EQ(arch_of(m, "model-Q4"), kTinyArchitecture);
  EXPECT_EQ(sha256_of(m / "tiny-llama" / "model.gguf"),
            listed_split_sha256(dir, "tiny-llama-merged.gguf"));
  expect_error_folder(m, "gone", {dangling.string(), "cannot open"});
}

TEST(LibraryFolder, CollidingNamesGetSuffixesInPathOrder) {
  GGUFS_REQUIRE_FUSE();
  TempDir tmp;
  const fs::path lib = tmp.path() / "lib";
  for (const char* d : {"c", "a", "b"})
    write_arch_model(lib / d / "x.gguf", std::string("arch-") + d);
  write_arch_model(lib / "100%.gguf", "percent");
  {
    Mount m(lib);
    ASSERT_TRUE(m.mounted()) << m.output();
    EXPECT_EQ(listing(m.path()), (Names{"100%25", "x", "x~2", "x~3"}));
    EXPECT_EQ(arch_of(m, "x"), "arch-a\n");
    EXPECT_EQ(arch_of(m, "x~2"), "arch-b\n");
    EXPECT_EQ(arch_of(m, "x~3"), "arch-c\n");
    EXPECT_EQ(arch_of(m, "100%25"), "percent\n");
  }
  // A suffix already taken by a model's own name is skipped: the first free one is used.
  const fs::path lib2 = tmp.path() / "lib2";
  write_arch_model(lib2 / "a" / "x.gguf", "arch-a");
  write_arch_model(lib2 / "b" / "x.gguf", "arch-b");
  write_arch_model(lib2 / "x~2.gguf", "tilde-2");
  Mount m(lib2);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(listing(m.path()), (Names{"x", "x~3", "x~2"}));
  EXPECT_EQ(arch_of(m, "x~2"), "tilde-2\n");
  EXPECT_EQ(arch_of(m, "x~3"), "arch-b\n");
}

TEST(LibraryFolder, ModelsAreOpenedOnFirstUse) {
  GGUFS_REQUIRE_FUSE();
  TempDir tmp;
  const fs::path lib = tmp.path() / "lib";
  write_arch_model(lib / "a.gguf", "first-a");
  write_arch_model(lib / "b.gguf", "old-b");
  {
    Mount m(lib);
    ASSERT_TRUE(m.mounted()) << m.output();
    EXPECT_EQ(arch_of(m, "a"), "first-a\n");
    write_arch_model(lib / "b.gguf", "new-b");  // b not used yet: not parsed yet
    EXPECT_EQ(arch_of(m, "b"), "new-b\n");
  }
  // Listing the root (and stat of its folders) opens no model.
  const fs::path lib2 = tmp.path() / "lib2";
  write_arch_model(lib2 / "c.gguf", "before");
  Mount m(lib2);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(listing(m.path()), Names{"c"});
  EXPECT_EQ(run("ls -l " + quote(m.path()) + " >/dev/null 2>&1").exit_code, 0);
  EXPECT_TRUE(fs::is_directory(m / "c"));
  write_arch_model(lib2 / "c.gguf", "after");
  EXPECT_EQ(arch_of(m, "c"), "after\n");
}

// ---- Ollama's store ----

// Writes `bytes` as blob blobs/sha256-<hex> of `store`; returns the hex digest.
std::string add_blob(const fs::path& store, const std::vector<std::uint8_t>& bytes) {
  const std::string hex = sha256_hex(bytes.data(), bytes.size());
  fs::create_directories(store / "blobs");
  write_file(store / "blobs" / ("sha256-" + hex), bytes);
  return hex;
}

// An Ollama manifest whose layer of media type `media_type` names blob `hex` of `size` bytes,
// followed by a template layer.
std::string manifest_json(const std::string& hex, std::uint64_t size,
                          const std::string& media_type = kModelMediaType) {
  return fmt::format(
      R"({{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",)"
      R"("config":{{"mediaType":"application/vnd.docker.container.image.v1+json",)"
      R"("digest":"sha256:{0}","size":2}},"layers":[)"
      R"({{"mediaType":"{3}","digest":"sha256:{1}","size":{2}}},)"
      R"({{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:{0}","size":2}}]}})",
      std::string(64, 'c'), hex, size, media_type);
}

// Writes manifests/<rel> of `store` holding `text`.
void add_manifest(const fs::path& store, const std::string& rel, const std::string& text) {
  const fs::path p = store / "manifests" / rel;
  fs::create_directories(p.parent_path());
  write_file(p, std::vector<std::uint8_t>(text.begin(), text.end()));
}

struct OllamaStore {
  fs::path store;
  std::string tiny_hex;  // blob of real/llama-2-tiny-random.gguf
  std::uint64_t tiny_size = 0;
  std::string q8_hex;  // blob of a model written here, architecture "q8-arch"
};

// A store of good, broken and incomplete models (see the listing in ListsEveryManifest).
OllamaStore make_store(const fs::path& store, const fs::path& testdata) {
  OllamaStore s;
  s.store = store;
  const auto tiny = read_file(testdata / "real" / "llama-2-tiny-random.gguf");
  s.tiny_hex = add_blob(store, tiny);
  s.tiny_size = tiny.size();
  write_arch_model(store / "q8.tmp", "q8-arch");
  const auto q8 = read_file(store / "q8.tmp");
  fs::remove(store / "q8.tmp");
  s.q8_hex = add_blob(store, q8);
  const std::string lib = "registry.ollama.ai/library/";
  const std::string good = manifest_json(s.tiny_hex, s.tiny_size);
  add_manifest(store, lib + "tiny/latest", good);
  add_manifest(store, lib + "tiny/q8", manifest_json(s.q8_hex, q8.size()));
  add_manifest(store, "registry.ollama.ai/someone/thing/v1", good);
  add_manifest(store, "hf.co/org/repo/Q4_K_M", good);
  add_manifest(store, lib + "broken/latest", "{not json");
  add_manifest(store, lib + "gone/latest", manifest_json(std::string(64, 'a'), 10));
  add_manifest(store, lib + "short/latest", manifest_json(s.tiny_hex, s.tiny_size + 1));
  add_manifest(store, lib + "nolayer/latest",
               manifest_json(s.tiny_hex, s.tiny_size, "application/vnd.ollama.image.license"));
  return s;
}

std::string ollama_env(const fs::path& store) { return "env OLLAMA_MODELS=" + quote(store); }

// "%2F" back to "/" and "%25" back to "%".
std::string unescape(std::string s) {
  for (std::size_t i = 0; (i = s.find('%', i)) != std::string::npos; ++i)
    s.replace(i, 3, s.substr(i + 1, 2) == "2F" ? "/" : "%");
  return s;
}

TEST(OllamaStore, ListsEveryManifestLikeOllamaList) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  TempDir tmp;
  const OllamaStore s = make_store(tmp.path() / "models", dir);
  Mount m(fs::path("ollama:"), "", ollama_env(s.store));
  ASSERT_TRUE(m.mounted()) << m.output();
  const Names names = listing(m.path());
  EXPECT_EQ(names,
            (Names{"broken:latest", "gone:latest", "hf.co%2Forg%2Frepo:Q4_K_M", "nolayer:latest",
                   "short:latest", "someone%2Fthing:v1", "tiny:latest", "tiny:q8"}));
  Names shown;
  for (const std::string& n : names) shown.push_back(unescape(n));
  EXPECT_TRUE(std::is_sorted(shown.begin(), shown.end()));

  const auto manifest = read_json(dir / "real" / "manifest.json")["llama-2-tiny-random.gguf"];
  ASSERT_EQ(manifest["file_sha256"], s.tiny_hex);
  std::string q_sha;
  for (const auto& t : manifest["tensors"])
    if (t["name"] == "blk.0.attn_q.weight") q_sha = t["raw_sha256"].get<std::string>();
  for (const char* good : {"tiny:latest", "someone%2Fthing:v1", "hf.co%2Forg%2Frepo:Q4_K_M"}) {
    EXPECT_EQ(arch_of(m, good), kTinyArchitecture) << good;
    EXPECT_EQ(sha256_of(m / good / "model.gguf"), s.tiny_hex) << good;
    EXPECT_EQ(sha256_of(m / good / "raw" / "blk.0.attn_q.weight"), q_sha) << good;
  }
  EXPECT_EQ(arch_of(m, "tiny:q8"), "q8-arch\n");
  EXPECT_EQ(sha256_of(m / "tiny:q8" / "model.gguf"), s.q8_hex);

  const fs::path manifests = s.store / "manifests" / "registry.ollama.ai" / "library";
  expect_error_folder(m, "broken:latest", {(manifests / "broken" / "latest").string(), "not JSON"});
  expect_error_folder(m, "gone:latest", {"cannot open the model blob", std::string(64, 'a')});
  expect_error_folder(m, "short:latest",
                      {fmt::format("the model blob is {} bytes, but", s.tiny_size),
                       fmt::format("says {}", s.tiny_size + 1)});
  expect_error_folder(m, "nolayer:latest",
                      {"has no layer of media type application/vnd.ollama.image.model"});
  EXPECT_EQ(arch_of(m, "tiny:latest"), kTinyArchitecture);  // still fine after the errors
}

// Issue 23: a manifest whose digest is 100 000 nested arrays (200 kB, under the 1 MiB cap) once
// overflowed a worker thread's stack (copying and printing JSON recurse once per level) and took
// every model of the mount down with it. A number beyond a double (found by fuzzing) raised an
// exception that made an error file quoting all of it, without the manifest's name.
TEST(OllamaStore, HostileManifestsAreErrorFoldersAndTheMountStaysUp) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  TempDir tmp;
  const fs::path store = tmp.path() / "models";
  const auto tiny = read_file(dir / "real" / "llama-2-tiny-random.gguf");
  const std::string hex = add_blob(store, tiny);
  const std::string lib = "registry.ollama.ai/library/";
  const std::string good = manifest_json(hex, tiny.size());
  // The model layer's digest "sha256:<hex>" replaced with [[[…]]]: 100 000 levels.
  std::string deep = good;
  const std::size_t at = deep.find("\"sha256:" + hex + "\"");
  ASSERT_NE(at, std::string::npos);
  deep.replace(at, 1 + 7 + 64 + 1, std::string(100000, '[') + std::string(100000, ']'));
  add_manifest(store, lib + "deep/latest", deep);
  // Its size: 300 000 digits.
  std::string huge = good;
  const std::size_t size_at = huge.find(std::to_string(tiny.size()));
  huge.replace(size_at, std::to_string(tiny.size()).size(), std::string(300000, '9'));
  add_manifest(store, lib + "huge/latest", huge);
  add_manifest(store, lib + "good/latest", good);
  Mount m(fs::path("ollama:"), "", ollama_env(store));
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(listing(m.path()), (Names{"deep:latest", "good:latest", "huge:latest"}));
  // The object, "layers" and the layer hold the digest: its 62nd '[' is the 65th level.
  expect_error_folder(m, "deep:latest",
                      {(store / "manifests" / lib / "deep/latest").string(),
                       fmt::format("at byte {}: ", at + 61), "nested more than 64 levels deep"});
  expect_error_folder(m, "huge:latest",
                      {(store / "manifests" / lib / "huge/latest").string(),
                       fmt::format("at byte {}: ", size_at), "beyond the range of a double"});
  for (const char* folder : {"deep:latest", "huge:latest"}) {
    const std::string message = read_text(m / folder / "error");
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
    EXPECT_LT(message.size(), 1000u) << message;
  }
  EXPECT_TRUE(is_mounted(m.path()));
  EXPECT_EQ(arch_of(m, "good:latest"), kTinyArchitecture);
  EXPECT_EQ(sha256_of(m / "good:latest" / "model.gguf"), hex);
}

TEST(OllamaStore, DefaultsToTheStoreInHome) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  TempDir home;
  const fs::path store = home.path() / ".ollama" / "models";
  const auto tiny = read_file(dir / "real" / "llama-2-tiny-random.gguf");
  const std::string hex = add_blob(store, tiny);
  add_manifest(store, "registry.ollama.ai/library/tiny/latest", manifest_json(hex, tiny.size()));
  Mount m(fs::path("ollama:"), "", "env -u OLLAMA_MODELS HOME=" + quote(home.path()));
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(listing(m.path()), Names{"tiny:latest"});
  EXPECT_EQ(arch_of(m, "tiny:latest"), kTinyArchitecture);
}

TEST(OllamaStore, SaysWhichStoreItMounts) {
  GGUFS_REQUIRE_FUSE();
  TempDir home;
  const fs::path store = home.path() / ".ollama" / "models";
  write_arch_model(store / "m.tmp", "arch-m");
  const auto bytes = read_file(store / "m.tmp");
  fs::remove(store / "m.tmp");
  add_manifest(store, "registry.ollama.ai/library/m/latest",
               manifest_json(add_blob(store, bytes), bytes.size()));
  const std::string env = "env -u OLLAMA_MODELS HOME=" + quote(home.path());
  Mount m(fs::path("ollama:"), "-v", env);  // -v: the log's info lines, on stderr until detached
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(arch_of(m, "m:latest"), "arch-m\n");
  const std::string line =
      "Ollama's store " + store.string() + " (~/.ollama/models: $OLLAMA_MODELS is unset)";
  EXPECT_NE(m.output().find(line), std::string::npos) << m.output();
  const RunResult info = run(env + " " + GGUFS_BINARY + " --info ollama: 2>&1");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find(store.string() +
                             ": a library of 1 models\n"
                             "  Ollama's store: ~/.ollama/models: $OLLAMA_MODELS is unset\n"),
            std::string::npos)
      << info.output;
  const RunResult set =
      run("env OLLAMA_MODELS=" + quote(store) + " " + GGUFS_BINARY + " --info ollama: 2>&1");
  EXPECT_NE(set.output.find("  Ollama's store: $OLLAMA_MODELS\n"), std::string::npos) << set.output;
  // --info of one model of the store names the store first, then reports the model.
  const RunResult one = run(env + " " + GGUFS_BINARY + " --info ollama:m 2>&1");
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output.rfind("ollama:m: Ollama's store " + store.string() +
                                 " (~/.ollama/models: $OLLAMA_MODELS is unset)\n",
                             0),
            0u)
      << one.output;
  EXPECT_NE(one.output.find("arch-m"), std::string::npos) << one.output;
}

TEST(OllamaStore, WithNoStoreAtAllTheErrorNamesTheUsers) {
  // Ollama's Linux service's store (kOllamaSystemStore) is taken only where it exists: a user
  // without Ollama is told of ~/.ollama/models, the store Ollama's docs name first.
  GGUFS_REQUIRE_FUSE();
  if (fs::exists("/usr/share/ollama")) GTEST_SKIP() << "/usr/share/ollama exists here";
  TempDir home;
  Mount m(fs::path("ollama:"), "", "env -u OLLAMA_MODELS HOME=" + quote(home.path()));
  EXPECT_FALSE(m.mounted());
  EXPECT_NE(m.output().find((home.path() / ".ollama/models/manifests").string()), std::string::npos)
      << m.output();
}

TEST(OllamaModel, MountsOneModelAtTheRoot) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  TempDir tmp;
  const OllamaStore s = make_store(tmp.path() / "models", dir);
  const Names tree = {"gguf.json", "tensors.tsv", "metadata",         "raw", "f32", "npy",
                      "f16",       "model.gguf",  "model.safetensors"};
  struct Case {
    const char* ref;
    const char* arch;
    std::string sha;
  };
  for (const Case& c : {Case{"ollama:tiny:q8", "q8-arch\n", s.q8_hex},
                        Case{"ollama:tiny", kTinyArchitecture, s.tiny_hex},
                        Case{"ollama:tiny:latest", kTinyArchitecture, s.tiny_hex},
                        Case{"ollama:someone/thing:v1", kTinyArchitecture, s.tiny_hex},
                        Case{"ollama:hf.co/org/repo:Q4_K_M", kTinyArchitecture, s.tiny_hex}}) {
    Mount m(fs::path(c.ref), "", ollama_env(s.store));
    ASSERT_TRUE(m.mounted()) << c.ref << ": " << m.output();
    // The tiny llama is also a transformers model: hf/ and mlx/ (the q8 entry's architecture is
    // not).
    Names expected = tree;
    if (std::string_view(c.arch) == kTinyArchitecture) {
      expected.push_back("hf");
      expected.push_back("mlx");
    }
    EXPECT_EQ(listing(m.path()), expected) << c.ref;
    EXPECT_EQ(read_text(m / "metadata/general.architecture"), c.arch) << c.ref;
    EXPECT_EQ(sha256_of(m / "model.gguf"), c.sha) << c.ref;
  }
}

TEST(OllamaModel, RefusalsHaveTheirExitCodes) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_TESTDATA(dir);
  TempDir tmp;
  const OllamaStore s = make_store(tmp.path() / "models", dir);
  struct Case {
    const char* ref;
    int exit_code;
    const char* says;
  };
  for (const Case& c :
       {Case{"ollama:nosuch", 2, "no such model in the Ollama store"},
        Case{"ollama:tiny:nosuchtag", 2, "no such model in the Ollama store"},
        Case{"ollama:a/../b", 1, "not a model name"}, Case{"ollama:a/b/c/d", 1, "not a model name"},
        Case{"ollama:broken", 3, "not JSON"},
        Case{"ollama:nolayer", 3, "has no layer of media type"},
        Case{"ollama:gone", 2, "cannot open the model blob"},
        Case{"ollama:short", 2, "the model blob is"}}) {
    Mount m(fs::path(c.ref), "", ollama_env(s.store));
    EXPECT_FALSE(m.mounted()) << c.ref;
    EXPECT_EQ(m.exit_code(), c.exit_code) << c.ref << ": " << m.output();
    EXPECT_NE(m.output().find(c.says), std::string::npos) << c.ref << ": " << m.output();
  }
  // A store without a manifests folder, and a folder that does not exist.
  TempDir empty;
  Mount no_store(fs::path("ollama:"), "", ollama_env(empty.path()));
  EXPECT_EQ(no_store.exit_code(), 2) << no_store.output();
  EXPECT_NE(no_store.output().find("manifests"), std::string::npos) << no_store.output();
  Mount no_dir(fs::path("/nonexistent-folder-xyz/"));
  EXPECT_EQ(no_dir.exit_code(), 2) << no_dir.output();
}

// ---- One projector beside many models (issue 60) ----

// The daemon's peak memory is measured with this many models beside one projector of this many
// tensor infos (some 8 MB of file).
constexpr int kFewModels = 2, kManyModels = 16;
constexpr std::size_t kProjectorTensors = 100000;

// SmolVLM's text model and projector as the converter writes them (corpus::vision_pairs:
// "vision.idefics3").
corpus::VisionPair idefics3_pair() {
  for (corpus::VisionPair& p : corpus::vision_pairs()) {
    if (p.name == "vision.idefics3") return std::move(p);
  }
  throw std::logic_error("no vision.idefics3 pair");
}

// A projector (general.architecture "clip") of `tensors` one-float tensors: what its parse
// holds grows with its tensor infos, and hf/ of a model paired with it is the text model alone.
std::vector<std::uint8_t> projector_of(const fs::path& scratch, std::size_t tensors) {
  GgufWriter g;
  g.add_string("general.architecture", "clip");
  g.add_string("general.type", "mmproj");
  g.add_string("clip.projector_type", "idefics3");
  for (std::size_t i = 0; i < tensors; ++i) {
    g.add_tensor(fmt::format("v.extra.{}.weight", i), GGML_TYPE_F32, {1},
                 std::vector<std::uint8_t>(4, 0));
  }
  g.write_file(scratch.string());
  std::vector<std::uint8_t> bytes = read_file(scratch);
  fs::remove(scratch);
  return bytes;
}

// The bytes of the tensor of safetensors file `p` whose name ends with `suffix` (empty if none).
std::vector<std::uint8_t> safetensors_tensor(const fs::path& p, const std::string& suffix) {
  const std::vector<std::uint8_t> bytes = read_file(p);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | bytes.at(i);  // little-endian header length
  const auto header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + n);
  for (const auto& [name, t] : header.items()) {
    if (!name.ends_with(suffix) || name == "__metadata__") continue;
    const auto begin = bytes.begin() + 8 + n + t["data_offsets"][0].get<std::size_t>();
    return {begin, bytes.begin() + 8 + n + t["data_offsets"][1].get<std::size_t>()};
  }
  return {};
}

// Models beside one projector whose hf/ is the pair's vision-language model each read the
// projector's tensors there (issue 60: the pair's file then takes the place of the model's own),
// as its own folder's f32/ gives them.
TEST(LibraryFolder, ModelsBesideOneProjectorEachServeItsVisionTower) {
  GGUFS_REQUIRE_FUSE();
  TempDir tmp;
  const corpus::VisionPair pair = idefics3_pair();
  const fs::path lib = tmp.path() / "lib";
  fs::create_directories(lib);
  write_file(lib / "smol-a.gguf", pair.text);
  write_file(lib / "smol-b.gguf", pair.text);
  write_file(lib / "mmproj-F32.gguf", pair.projector);
  const Mount m(lib);
  ASSERT_TRUE(m.mounted()) << m.output();
  for (const char* model : {"smol-a", "smol-b"}) {
    SCOPED_TRACE(model);
    const fs::path hf = m / model / "hf";
    EXPECT_EQ(read_json(hf / "config.json")["architectures"][0],
              "Idefics3ForConditionalGeneration");
    for (const auto& [hf_name, gguf_name] :
         {std::pair{"post_layernorm.weight", "v.post_ln.weight"},
          std::pair{"embeddings.patch_embedding.weight", "v.patch_embd.weight"}}) {
      const std::vector<std::uint8_t> got = safetensors_tensor(hf / "model.safetensors", hf_name);
      EXPECT_FALSE(got.empty()) << hf_name;
      EXPECT_EQ(got, read_file(m / "mmproj-F32" / "f32" / gguf_name)) << hf_name;
    }
  }
  EXPECT_EQ(sha256_of(m / "smol-a/hf/model.safetensors"),
            sha256_of(m / "smol-b/hf/model.safetensors"));
}

// The peak memory (VmHWM) of the daemon of `m` once each of `folders` is opened, one by one.
std::uint64_t peak_after_opening(const Mount& m, const Names& folders) {
  if (!m.mounted()) {
    ADD_FAILURE() << m.output();
    return 0;
  }
  for (const std::string& f : folders) {
    EXPECT_NO_THROW(read_text(m / f / "gguf.json")) << f;
    EXPECT_FALSE(fs::exists(m / f / "error")) << f;
  }
  const std::vector<int> pids = pids_with(m.path().string());
  EXPECT_EQ(pids.size(), 1u);
  return pids.empty() ? 0 : proc_status_bytes(pids.front(), "VmHWM");
}

// A library of `models` models (`text`) that pair with one `projector`, written into `dir`:
// what to mount (and the command's prefix) and the models' folders there.
struct PairedLibrary {
  fs::path source;
  std::string env;
  Names folders;
};
using WriteLibrary = std::function<PairedLibrary(const fs::path& dir, int models,
                                                 const std::vector<std::uint8_t>& text,
                                                 const std::vector<std::uint8_t>& projector)>;

// What each model added to the daemon's peak from kFewModels to kManyModels models (SmolVLM's
// text model) that pair with one projector of kProjectorTensors tensor infos, each library
// written by `write`, is what the README bounds a model's tree by, its file's bytes (512 per byte
// plus 1 MiB), not the projector's: the projector is parsed and held once per library. Before
// issue 60 every model parsed it again and held two copies of its tensor infos, some 34 MiB a
// model here.
void expect_projector_held_once(const WriteLibrary& write) {
#if defined(GGUFS_SANITIZED)
  GTEST_SKIP() << "ASan's quarantine keeps freed blocks: the daemon's peak measures them, not what "
                  "it holds";
#endif
  TempDir tmp;
  const std::vector<std::uint8_t> text = idefics3_pair().text;
  const std::vector<std::uint8_t> projector =
      projector_of(tmp.path() / "scratch.gguf", kProjectorTensors);
  std::uint64_t peak[2] = {};
  for (const int models : {kFewModels, kManyModels}) {
    const PairedLibrary lib =
        write(tmp.path() / fmt::format("lib{}", models), models, text, projector);
    const Mount m(lib.source, "", lib.env);
    peak[models == kManyModels] = peak_after_opening(m, lib.folders);
  }
  ASSERT_GT(peak[0], 0u);
  const double per_model = (double(peak[1]) - double(peak[0])) / (kManyModels - kFewModels);
  const double bound = 512.0 * double(text.size()) + double(1 << 20);
  constexpr double kMiB = 1 << 20;
  fmt::print(
      "daemon VmHWM: {:.1f} MiB with {} models, {:.1f} MiB with {}: {:.2f} MiB a model "
      "(bound {:.2f} MiB)\n",
      double(peak[0]) / kMiB, kFewModels, double(peak[1]) / kMiB, kManyModels, per_model / kMiB,
      bound / kMiB);
  EXPECT_LT(per_model, bound) << "each model beside the projector holds a copy of it";
}

TEST(LibraryFolder, AProjectorIsHeldOnceWhateverTheModelsBesideIt) {
  GGUFS_REQUIRE_FUSE();
  expect_projector_held_once(
      [](const fs::path& dir, int models, const auto& text, const auto& projector) {
        fs::create_directories(dir);
        write_file(dir / "mmproj-F16.gguf", projector);
        PairedLibrary lib{dir, "", {}};
        for (int i = 0; i < models; ++i) {
          lib.folders.push_back(fmt::format("model-{:02}", i));
          write_file(dir / (lib.folders.back() + ".gguf"), text);
        }
        return lib;
      });
}

// The same of an Ollama store whose manifests (tags of one vision model) name one projector blob.
TEST(OllamaStore, AProjectorBlobIsHeldOnceWhateverTheManifestsNamingIt) {
  GGUFS_REQUIRE_FUSE();
  expect_projector_held_once(
      [](const fs::path& dir, int models, const auto& text, const auto& projector) {
        std::string manifest = manifest_json(add_blob(dir, text), text.size());
        manifest.insert(manifest.size() - 2,
                        fmt::format(R"(,{{"mediaType":"application/vnd.ollama.image.projector",)"
                                    R"("digest":"sha256:{}","size":{}}})",
                                    add_blob(dir, projector), projector.size()));
        PairedLibrary lib{"ollama:", ollama_env(dir), {}};
        for (int i = 0; i < models; ++i) {
          lib.folders.push_back(fmt::format("smolvlm:{:02}", i));
          add_manifest(dir, fmt::format("registry.ollama.ai/library/smolvlm/{:02}", i), manifest);
        }
        return lib;
      });
}

}  // namespace
}  // namespace ggufs::test
