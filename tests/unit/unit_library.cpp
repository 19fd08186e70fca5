// Model libraries without a mount: folder names and their clashes, the inode scheme, opening on
// first use (once, from any number of threads), error folders, and the scans of a folder and of
// an Ollama store that the tests build themselves.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/library.h"
#include "ggufs/library_scan.h"
#include "mount_util.h"  // write_arch_model
#include "test_util.h"

namespace ggufs {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::write_arch_model;

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// An entry named `name` that opens `path` and counts how often it was opened.
LibraryEntry entry(std::string name, const fs::path& path, std::atomic<int>* opened = nullptr) {
  LibraryEntry e;
  e.name = std::move(name);
  e.path = path.string();
  e.open = [p = path.string(), opened] {
    if (opened) ++*opened;
    return open_model(p);
  };
  return e;
}

Library make_library(std::vector<LibraryEntry> entries) {
  return Library(std::move(entries), {}, {}, {});
}

std::vector<std::string> names(const std::vector<LibraryEntry>& entries) {
  std::vector<std::string> out;
  for (const LibraryEntry& e : entries) out.push_back(e.name);
  return out;
}

// The text of file `name` in folder `folder` of `lib`, or "(none)".
std::string text_of(const Library& lib, Ino folder, const std::string& name) {
  const Library::Found f = lib.find(lib.lookup(folder, name));
  return f.node ? f.node->text : "(none)";
}

TEST(Library, FolderNamesAreEscapedAndClashesGetTheFirstFreeTildeNumber) {
  TempDir tmp;
  std::vector<LibraryEntry> entries;
  for (const char* n : {"a", "a", "a~2", "x/y", "", "a"}) entries.push_back(entry(n, tmp.path()));
  const Library lib = make_library(std::move(entries));
  // "a~2" is a name of its own, so the second "a" skips it; '/' and "" are escaped as in
  // file_name_for (names.h).
  EXPECT_EQ(lib.folder_names(), (std::vector<std::string>{"a", "a~3", "a~2", "x%2Fy", "%", "a~4"}));
}

TEST(Library, ListsAndLooksUpFoldersWithoutOpeningTheirModels) {
  TempDir tmp;
  write_arch_model(tmp.path() / "one.gguf", "first");
  write_arch_model(tmp.path() / "two.gguf", "second");
  std::atomic<int> opened{0};
  const Library lib = make_library({entry("one", tmp.path() / "one.gguf", &opened),
                                    entry("two", tmp.path() / "two.gguf", &opened)});
  const Library::Found root = lib.find(kRootIno);
  ASSERT_NE(root.node, nullptr);
  ASSERT_EQ(root.node->children.size(), 2u);
  const Ino two = lib.lookup(kRootIno, "two");
  EXPECT_EQ(two, root.node->children[1]);
  EXPECT_EQ(lib.find(two, /*open=*/false).node->name, "two");
  EXPECT_EQ(lib.find(two, /*open=*/false).node->kind, NodeKind::kDirectory);
  EXPECT_EQ(lib.parent(two), kRootIno);
  EXPECT_EQ(lib.lookup(kRootIno, "three"), 0u);
  EXPECT_EQ(opened.load(), 0);

  // A lookup inside a folder opens that model only.
  const Ino metadata = lib.lookup(two, "metadata");
  ASSERT_NE(metadata, 0u);
  EXPECT_EQ(opened.load(), 1);
  EXPECT_EQ(text_of(lib, metadata, "general.architecture"), "second\n");
  EXPECT_EQ(lib.parent(metadata), two);
  // The inodes of two models never meet.
  const Ino other = lib.lookup(lib.lookup(kRootIno, "one"), "metadata");
  EXPECT_NE(other, metadata);
  EXPECT_EQ(text_of(lib, other, "general.architecture"), "first\n");
  EXPECT_EQ(opened.load(), 2);
  // Log lines name a file by its path below the mount point.
  EXPECT_EQ(lib.path_of(lib.lookup(metadata, "general.architecture")),
            "two/metadata/general.architecture");
  EXPECT_EQ(lib.path_of(two), "two");
  EXPECT_EQ(lib.path_of(kRootIno), "");
  EXPECT_EQ(lib.find(Ino{99} << 32 | 1).node, nullptr);
}

TEST(Library, OpensEachModelOnceWhateverTheThreads) {
  TempDir tmp;
  write_arch_model(tmp.path() / "m.gguf", "m");
  std::atomic<int> opened{0};
  const Library lib = make_library({entry("m", tmp.path() / "m.gguf", &opened)});
  const Ino folder = lib.lookup(kRootIno, "m");
  std::vector<std::thread> threads;
  std::atomic<int> found{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] { found += lib.lookup(folder, "gguf.json") != 0; });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(found.load(), 8);
  EXPECT_EQ(opened.load(), 1);
}

TEST(Library, AModelThatFailsToOpenIsAFolderHoldingOnlyItsError) {
  TempDir tmp;
  write_text(tmp.path() / "bad.gguf", "not a model at all");
  write_arch_model(tmp.path() / "good.gguf", "fine");
  std::vector<std::string> logged;
  const Library lib(
      {entry("bad", tmp.path() / "bad.gguf"), entry("good", tmp.path() / "good.gguf")}, {},
      [&](const std::string& line) { logged.push_back(line); }, {});
  const Ino bad = lib.lookup(kRootIno, "bad");
  const Library::Found f = lib.find(bad);
  ASSERT_NE(f.node, nullptr);
  ASSERT_EQ(f.node->children.size(), 1u);
  const std::string error = text_of(lib, bad, "error");
  EXPECT_NE(error.find((tmp.path() / "bad.gguf").string() + ": at byte 0: not a GGUF file"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.back(), '\n');
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("bad: "), std::string::npos) << logged[0];
  EXPECT_EQ(
      text_of(lib, lib.lookup(lib.lookup(kRootIno, "good"), "metadata"), "general.architecture"),
      "fine\n");
}

// A thread that cannot start while a model is opened (std::thread and std::async throw
// std::system_error(EAGAIN) when pthread_create cannot map its stack, as under RLIMIT_AS) reads
// as the memory it lacked, as a std::bad_alloc does: in the error file and the log line. Another
// system error keeps its own text.
TEST(Library, AThreadThatCannotStartReadsAsNotEnoughMemory) {
  TempDir tmp;
  write_arch_model(tmp.path() / "good.gguf", "fine");
  auto throwing = [](std::string name, std::exception_ptr e) {
    LibraryEntry l;
    l.name = std::move(name);
    l.open = [e]() -> Model { std::rethrow_exception(e); };
    return l;
  };
  std::vector<std::string> logged;
  const Library lib(
      {throwing("eagain", std::make_exception_ptr(
                              std::system_error(std::error_code(EAGAIN, std::generic_category())))),
       throwing("nomem", std::make_exception_ptr(std::bad_alloc())),
       throwing("denied", std::make_exception_ptr(std::system_error(
                              std::error_code(EACCES, std::generic_category()), "opening x"))),
       entry("good", tmp.path() / "good.gguf")},
      {}, [&](const std::string& line) { logged.push_back(line); }, {});
  EXPECT_EQ(text_of(lib, lib.lookup(kRootIno, "eagain"), "error"),
            "not enough memory to lay out this model (Resource temporarily unavailable)\n");
  EXPECT_EQ(text_of(lib, lib.lookup(kRootIno, "nomem"), "error"),
            "not enough memory to lay out this model (std::bad_alloc)\n");
  EXPECT_EQ(text_of(lib, lib.lookup(kRootIno, "denied"), "error"),
            "opening x: Permission denied\n");
  EXPECT_EQ(logged, (std::vector<std::string>{
                        "eagain: not enough memory to lay out this model (Resource temporarily "
                        "unavailable)",
                        "nomem: not enough memory to lay out this model (std::bad_alloc)",
                        "denied: opening x: Permission denied"}));
  EXPECT_EQ(
      text_of(lib, lib.lookup(lib.lookup(kRootIno, "good"), "metadata"), "general.architecture"),
      "fine\n");
}

// The one classifier of memory shortages (error.h), which the tree's views use too: the
// allocation's and the failed thread's causes, ENOMEM's; nothing else.
TEST(NotEnoughMemory, NamesBadAllocAndThreadStartsOnly) {
  using std::generic_category;
  const auto says = [](const std::exception& e) { return not_enough_memory(e, "lay it out"); };
  EXPECT_EQ(says(std::bad_alloc()), "not enough memory to lay it out (std::bad_alloc)");
  EXPECT_EQ(says(std::system_error(std::error_code(EAGAIN, generic_category()), "thread")),
            "not enough memory to lay it out (Resource temporarily unavailable)");
  EXPECT_EQ(says(std::system_error(std::error_code(ENOMEM, std::system_category()))),
            "not enough memory to lay it out (Cannot allocate memory)");
  EXPECT_EQ(says(std::system_error(std::error_code(EINVAL, generic_category()))), std::nullopt);
  EXPECT_EQ(says(std::runtime_error("Resource temporarily unavailable")), std::nullopt);
}

TEST(Library, ASingleModelKeepsItsTreesInodes) {
  TempDir tmp;
  write_arch_model(tmp.path() / "m.gguf", "solo");
  auto served =
      std::make_unique<ServedModel>(open_model((tmp.path() / "m.gguf").string()), TreeOptions{});
  const Tree& tree = served->tree;
  const Ino metadata = tree.lookup(kRootIno, "metadata");
  const Library lib(std::move(served));
  EXPECT_EQ(lib.lookup(kRootIno, "metadata"), metadata);
  EXPECT_EQ(text_of(lib, metadata, "general.architecture"), "solo\n");
  EXPECT_TRUE(lib.folder_names().empty());
  EXPECT_EQ(lib.path_of(lib.lookup(lib.lookup(kRootIno, "raw"), "t.weight")), "raw/t.weight");
}

TEST(FolderScan, FindsModelsAndSplitModelsAndSkipsHiddenFoldersAndLoops) {
  TempDir tmp;
  const fs::path d = tmp.path();
  write_arch_model(d / "b.gguf", "b");
  write_arch_model(d / "sub" / "deeper" / "a.gguf", "a");
  write_arch_model(d / ".cache" / "hidden.gguf", "h");
  write_text(d / "notes.txt", "not a model");
  for (int i = 1; i <= 3; ++i) {
    write_text(d / "split" / ("big-0000" + std::to_string(i) + "-of-00003.gguf"), "shard");
  }
  fs::create_directory_symlink("..", d / "sub" / "loop");
  fs::create_symlink(d / "b.gguf", d / "sub" / "same-as-b.gguf");  // same file: listed once
  fs::create_symlink(d / "missing", d / "dangling.gguf");
  std::vector<std::string> warnings;
  const std::vector<LibraryEntry> found = find_gguf_models(d.string(), warnings);
  // Sorted by path: b.gguf, dangling.gguf, split/big-00001…, sub/deeper/a.gguf.
  EXPECT_EQ(names(found), (std::vector<std::string>{"b", "dangling", "big", "a"}));
  EXPECT_EQ(found[2].path, (d / "split" / "big-00001-of-00003.gguf").string());
  EXPECT_TRUE(warnings.empty());
  EXPECT_THROW(find_gguf_models((d / "no-such-folder").string(), warnings), IoError);
}

// A folder's one projector pairs with its other models; several pair with none (which one is
// meant is not known); a file named as a projector that is none leaves its model unpaired.
TEST(FolderScan, PairsAFoldersOneProjectorAndNoneOfSeveral) {
  TempDir tmp;
  const fs::path d = tmp.path();
  write_arch_model(d / "one" / "model.gguf", "gemma3");
  write_arch_model(d / "one" / "mmproj-model-f16.gguf", "clip");
  write_arch_model(d / "two" / "model.gguf", "gemma3");
  write_arch_model(d / "two" / "mmproj-F16.gguf", "clip");
  write_arch_model(d / "two" / "Gemma-MMPROJ-F32.gguf", "clip");
  write_arch_model(d / "wrong" / "model.gguf", "gemma3");
  write_arch_model(d / "wrong" / "mmproj.gguf", "llama");
  write_arch_model(d / "alone.gguf", "gemma3");
  std::vector<std::string> warnings;
  const std::vector<LibraryEntry> found = find_gguf_models(d.string(), warnings);
  std::map<std::string, const LibraryEntry*> by_path;
  for (const LibraryEntry& e : found) by_path[fs::path(e.path).lexically_relative(d)] = &e;
  ASSERT_EQ(by_path.size(), 8u);
  EXPECT_EQ(by_path["one/model.gguf"]->projector, (d / "one" / "mmproj-model-f16.gguf").string());
  EXPECT_EQ(by_path["one/mmproj-model-f16.gguf"]->projector, "");  // not paired with itself
  EXPECT_EQ(by_path["two/model.gguf"]->projector, "");
  EXPECT_EQ(by_path["two/model.gguf"]->unpaired,
            "2 projectors beside it (Gemma-MMPROJ-F32.gguf, mmproj-F16.gguf): which one is meant "
            "is not known");
  EXPECT_EQ(by_path["alone.gguf"]->projector, "");
  EXPECT_EQ(by_path["alone.gguf"]->unpaired, "");

  const Model paired = by_path["one/model.gguf"]->open();
  ASSERT_NE(paired.projector, nullptr);
  EXPECT_EQ(paired.projector->file.path, (d / "one" / "mmproj-model-f16.gguf").string());
  EXPECT_EQ(paired.unpaired, "");
  const Model two = by_path["two/model.gguf"]->open();
  EXPECT_EQ(two.projector, nullptr);
  EXPECT_EQ(two.unpaired, by_path["two/model.gguf"]->unpaired);
  const Model wrong = by_path["wrong/model.gguf"]->open();
  EXPECT_EQ(wrong.projector, nullptr);
  EXPECT_NE(wrong.unpaired.find("mmproj.gguf: at byte "), std::string::npos) << wrong.unpaired;
  EXPECT_NE(wrong.unpaired.find("not a vision projector: general.architecture is \"llama\""),
            std::string::npos)
      << wrong.unpaired;
}

// Issue 60: the models beside one projector share its one parsed copy, however many threads
// open them; where a model's tree reads none of the projector's tensors (here its hf/ is not a
// vision-language model), the model holds no copy of their infos either: its file is its own.
TEST(FolderScan, ModelsBesideOneProjectorShareItsOneParsedCopy) {
  TempDir tmp;
  const fs::path d = tmp.path();
  constexpr int kModels = 6;
  for (int i = 0; i < kModels; ++i) {
    write_arch_model(d / "repo" / ("m" + std::to_string(i) + ".gguf"), "gemma3");
  }
  write_arch_model(d / "repo" / "mmproj-F16.gguf", "clip");
  std::vector<std::string> warnings;
  const Library lib(find_gguf_models(d.string(), warnings), {}, {}, {});
  std::vector<const ServedModel*> served(kModels);
  std::vector<std::thread> threads;
  for (int i = 0; i < kModels; ++i) {
    threads.emplace_back([&lib, &served, i] {
      served[i] = lib.find(lib.lookup(kRootIno, "m" + std::to_string(i))).model;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kModels; ++i) {
    ASSERT_NE(served[i], nullptr);
    ASSERT_NE(served[i]->model.projector, nullptr) << served[i]->model.unpaired;
    EXPECT_EQ(served[i]->model.projector, served[0]->model.projector) << i;
    EXPECT_EQ(served[i]->model.file.tensors.size(), 1u);
    EXPECT_EQ(served[i]->file_paths.back(), (d / "repo" / "mmproj-F16.gguf").string());
  }
  // Held by the models and the library's cache, nowhere else.
  EXPECT_EQ(served[0]->model.projector.use_count(), kModels + 1);
}

// A projector that cannot be opened is tried once: each model says why it has none.
TEST(ProjectorCache, KeepsAFailureToOpenAndOpensEachPathOnce) {
  TempDir tmp;
  write_text(tmp.path() / "mmproj-bad.gguf", "not a GGUF file");
  write_arch_model(tmp.path() / "mmproj.gguf", "clip");
  ProjectorCache cache;
  const auto failure = [&cache, bad = (tmp.path() / "mmproj-bad.gguf").string()] {
    try {
      cache.open(bad);
      return std::string("(opened)");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
  };
  const std::string first = failure();
  EXPECT_NE(first.find("mmproj-bad.gguf"), std::string::npos) << first;
  fs::remove(tmp.path() / "mmproj-bad.gguf");  // not opened again: still the first error
  EXPECT_EQ(failure(), first);
  const std::string good = (tmp.path() / "mmproj.gguf").string();
  EXPECT_EQ(cache.open(good), cache.open(good));
  EXPECT_EQ(cache.size(), 2u);
}

TEST(OllamaStore, ManifestPathsFollowOllamasNameDefaults) {
  const std::string s = "/store";
  EXPECT_EQ(ollama_manifest_path(s, "llama3.2"),
            "/store/manifests/registry.ollama.ai/library/llama3.2/latest");
  EXPECT_EQ(ollama_manifest_path(s, "llama3.2:3b"),
            "/store/manifests/registry.ollama.ai/library/llama3.2/3b");
  EXPECT_EQ(ollama_manifest_path(s, "me/m:v1"), "/store/manifests/registry.ollama.ai/me/m/v1");
  EXPECT_EQ(ollama_manifest_path(s, "hf.co/org/repo:Q4_K_M"),
            "/store/manifests/hf.co/org/repo/Q4_K_M");
  EXPECT_EQ(ollama_manifest_path(s, "localhost:5000/ns/m"),
            "/store/manifests/localhost:5000/ns/m/latest");
  for (const char* bad : {"", "a/../b", "a//b", "x:", "a/b/c/d", "./m"}) {
    EXPECT_THROW(ollama_manifest_path(s, bad), std::invalid_argument) << bad;
  }
}

// `s` `n` times.
std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Writes an Ollama manifest whose model layer names blob `hex` of `size` bytes.
std::string manifest_json(const std::string& hex, std::uint64_t size) {
  return R"({"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",)"
         R"("config":{"mediaType":"application/vnd.docker.container.image.v1+json",)"
         R"("digest":"sha256:)" +
         std::string(64, '0') +
         R"(","size":2},"layers":[)"
         R"({"mediaType":"application/vnd.ollama.image.template","digest":"sha256:)" +
         std::string(64, '1') +
         R"(","size":3},)"
         R"({"mediaType":"application/vnd.ollama.image.model","digest":"sha256:)" +
         hex + R"(","size":)" + std::to_string(size) + "}]}";
}

// Writes blob `hex` of `store`: a model of architecture `arch`; returns its size in bytes.
std::uint64_t write_blob(const fs::path& store, const std::string& hex, const std::string& arch) {
  write_arch_model(store / "blobs" / ("sha256-" + hex), arch);
  return fs::file_size(store / "blobs" / ("sha256-" + hex));
}

TEST(OllamaStore, NamesEveryManifestAsOllamaListDoesAndOpensItsModelBlob) {
  TempDir tmp;
  const fs::path store = tmp.path();
  const std::string hex(64, 'a');
  const std::uint64_t size = write_blob(store, hex, "from-blob");
  const fs::path m = store / "manifests";
  write_text(m / "registry.ollama.ai" / "library" / "tiny" / "latest", manifest_json(hex, size));
  write_text(m / "registry.ollama.ai" / "library" / "tiny" / "q8", manifest_json(hex, size));
  write_text(m / "registry.ollama.ai" / "someone" / "thing" / "v1", manifest_json(hex, size));
  write_text(m / "hf.co" / "org" / "repo" / "Q4_K_M", manifest_json(hex, size));
  std::vector<std::string> warnings;
  const std::vector<LibraryEntry> found = find_ollama_models(store.string(), warnings);
  EXPECT_EQ(names(found), (std::vector<std::string>{"hf.co/org/repo:Q4_K_M", "someone/thing:v1",
                                                    "tiny:latest", "tiny:q8"}));
  const Model model = found[2].open();
  EXPECT_EQ(model.file.path, (store / "blobs" / ("sha256-" + hex)).string());
  EXPECT_THROW(find_ollama_models((store / "nothing").string(), warnings), IoError);
}

TEST(OllamaStore, BrokenManifestsAndMissingOrShortBlobsRaiseErrorsNamingTheFile) {
  TempDir tmp;
  const fs::path store = tmp.path();
  const std::string hex(64, 'b');
  const std::uint64_t size = write_blob(store, hex, "x");
  const auto expect_error = [&](const std::string& manifest, const std::string& piece, auto type) {
    const fs::path p = store / "manifests" / "m";
    write_text(p, manifest);
    try {
      open_ollama_manifest(store.string(), p.string());
      ADD_FAILURE() << "no error for " << manifest;
    } catch (const decltype(type)& e) {
      EXPECT_NE(std::string(e.what()).find(piece), std::string::npos) << e.what();
    }
  };
  expect_error("{not json", "not JSON", ParseError("", 0, ""));
  expect_error(R"({"layers":[{"mediaType":"application/vnd.ollama.image.license"}]})",
               "no layer of media type application/vnd.ollama.image.model", ParseError("", 0, ""));
  expect_error(manifest_json("../../../etc/passwd", size), "not sha256:<64 hex digits>",
               ParseError("", 0, ""));
  expect_error(manifest_json(std::string(64, 'c'), size),
               "sha256-" + std::string(64, 'c') + ": cannot open the model blob", IoError(""));
  expect_error(manifest_json(hex, size + 1),
               "is " + std::to_string(size) + " bytes, but " + (store / "manifests/m").string() +
                   " says " + std::to_string(size + 1),
               IoError(""));
  // Hostile nesting: refused at the 65th level (see DeepNesting below).
  expect_error(std::string(1000000, '['), "at byte 64: not an Ollama manifest: JSON nested",
               ParseError("", 0, ""));
  expect_error(std::string(500000, '[') + std::string(500000, ']'),
               "at byte 64: not an Ollama manifest: JSON nested", ParseError("", 0, ""));
  expect_error(std::string((1 << 20) + 1, ' '), "larger than 1048576 bytes", ParseError("", 0, ""));
  // A good one opens.
  write_text(store / "manifests" / "m", manifest_json(hex, size));
  EXPECT_EQ(open_ollama_manifest(store.string(), (store / "manifests" / "m").string())
                .file.tensors.size(),
            1u);
}

// The ParseError that parse_ollama_manifest raises for `text`.
ParseError manifest_error(const std::string& text) {
  try {
    parse_ollama_manifest(text, "/store/manifests/m");
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  return ParseError("", 0, "");
}

// `text` with its first "sha256:<64 x hex digit>" string (quotes included) replaced by `value`;
// `at` receives its offset.
std::string with_digest(std::string text, const std::string& hex, const std::string& value,
                        std::size_t& at) {
  const std::string digest = "\"sha256:" + hex + "\"";
  at = text.find(digest);
  EXPECT_NE(at, std::string::npos);
  return text.replace(at, digest.size(), value);
}

// Issue 23: JSON 100 000 levels deep once overflowed a thread's stack (copying and printing
// recurse per level). Such a manifest is refused where it passes 64 levels, naming the manifest.
TEST(OllamaManifest, DeepNestingIsRefusedAtTheByteWhereItPasses64Levels) {
  const std::string hex(64, 'a');
  std::size_t at = 0;
  // The model layer (the third layer object, inside "layers", inside the manifest) holds the
  // digest at level 4, so the digest's 62nd '[' opens level 65.
  const std::string deep_digest = with_digest(
      manifest_json(hex, 10), hex, std::string(100000, '[') + std::string(100000, ']'), at);
  ParseError e = manifest_error(deep_digest);
  EXPECT_EQ(e.file(), "/store/manifests/m");
  EXPECT_EQ(e.offset(), at + 61) << e.what();
  EXPECT_EQ(e.problem(), "not an Ollama manifest: JSON nested more than 64 levels deep");

  // Elsewhere: objects 100 000 deep under a key of the manifest, before its layers. Level 1 is
  // the manifest; the 64th '{' of {"a":{"a":… (5 bytes each) opens level 65.
  std::string deep_elsewhere = manifest_json(hex, 10);
  std::string nest;
  for (int i = 0; i < 100000; ++i) nest += R"({"a":)";
  nest += "0" + std::string(100000, '}') + ",";
  deep_elsewhere.insert(1, R"("x":)" + nest);
  e = manifest_error(deep_elsewhere);
  EXPECT_EQ(e.offset(), 1 + 4 + 63 * 5) << e.what();
  EXPECT_NE(e.problem().find("nested more than 64 levels deep"), std::string::npos);

  // A syntax error before the deep part is reported as such, at its own offset.
  e = manifest_error(R"({"x":tru)" + std::string(1000, '['));
  EXPECT_NE(e.problem().find("not JSON"), std::string::npos) << e.what();
  EXPECT_EQ(e.offset(), 8u) << e.what();

  // 64 levels are read: the digest at level 4 with 60 levels inside it is a malformed digest,
  // not a refusal of the nesting.
  e = manifest_error(
      with_digest(manifest_json(hex, 10), hex, std::string(61, '[') + std::string(61, ']'), at));
  EXPECT_NE(e.problem().find("digest is not sha256:<64 hex digits>"), std::string::npos)
      << e.what();
  e = manifest_error(
      with_digest(manifest_json(hex, 10), hex, std::string(62, '[') + std::string(62, ']'), at));
  EXPECT_EQ(e.offset(), at + 61) << e.what();
}

// Found by the fuzz target: nlohmann-json refuses a number beyond the range of a double with an
// out_of_range exception (not a parse_error), whose message holds the whole number. It escaped
// as an exception no caller expects (the command aborted), or made an error file quoting up to
// 1 MiB with no file name.
TEST(OllamaManifest, ANumberBeyondADoubleIsRefusedAtItsFirstByte) {
  const std::string head = R"({"layers":[],"size":"1e999","x":[1.5e308,)";
  ParseError e = manifest_error(head + "-" + std::string(5000, '1') + "]}");
  EXPECT_EQ(e.file(), "/store/manifests/m");
  EXPECT_EQ(e.offset(), head.size()) << e.what();
  EXPECT_EQ(e.problem(),
            "not an Ollama manifest: not JSON (a number beyond the range of a double: -" +
                std::string(63, '1') + "…)");
  e = manifest_error(head + "2e308]}");
  EXPECT_EQ(e.offset(), head.size()) << e.what();
  EXPECT_EQ(e.problem(),
            "not an Ollama manifest: not JSON (a number beyond the range of a double: 2e308)");
}

TEST(OllamaManifest, MessagesQuoteAtMost64BytesOfTheManifest) {
  const std::string hex(64, 'a');
  std::size_t at = 0;
  // A 100 000-byte digest: the message shows its first 64 bytes as JSON text, then "…".
  ParseError e = manifest_error(
      with_digest(manifest_json(hex, 10), hex, "\"sha256:" + std::string(100000, 'x') + "\"", at));
  EXPECT_EQ(e.problem(), "the model layer's digest is not sha256:<64 hex digits>: \"sha256:" +
                             std::string(56, 'x') + "…");
  EXPECT_EQ(e.offset(), 0u);
  // Never cut inside a UTF-8 character: "é" is 2 bytes, and byte 64 is the second of one.
  e = manifest_error(with_digest(manifest_json(hex, 10), hex, "\"" + repeat("é", 1000) + "\"", at));
  EXPECT_EQ(e.problem(),
            "the model layer's digest is not sha256:<64 hex digits>: \"" + repeat("é", 31) + "…");
  // A deep digest of 60 levels: its text is cut too.
  e = manifest_error(
      with_digest(manifest_json(hex, 10), hex, std::string(60, '[') + std::string(60, ']'), at));
  EXPECT_EQ(e.problem(), "the model layer's digest is not sha256:<64 hex digits>: " +
                             std::string(60, '[') + "]]]]…");
  // A syntax error in a string of 100 000 bytes: the token that nlohmann-json quotes is cut.
  e = manifest_error(R"({"layers":")" + std::string(100000, 'y') + "\x01\"}");
  EXPECT_LT(e.problem().size(), 300u) << e.problem();
  EXPECT_TRUE(e.problem().ends_with("last read: '\"" + std::string(63, 'y') + "…)")) << e.problem();
  EXPECT_EQ(e.offset(), 11u + 100000u) << e.what();
  // Also when the token holds the words that may follow it ("'; expected "), as a fuzz run found.
  e = manifest_error(R"({"layers":"'; expected )" + std::string(1000, 'y') + "\xff\"}");
  EXPECT_LT(e.problem().size(), 300u) << e.problem();
}

TEST(OllamaManifest, AGoodManifestGivesItsModelLayer) {
  const OllamaModelLayer layer =
      parse_ollama_manifest(manifest_json(std::string(64, 'e'), 1234), "m");
  EXPECT_EQ(layer.digest_hex, std::string(64, 'e'));
  EXPECT_EQ(layer.size, 1234u);
}

// A manifest with the model's projector: Ollama's layer of media type
// application/vnd.ollama.image.projector (server/images.go), after the model's.
std::string with_projectors(std::string manifest, const std::vector<std::string>& digests,
                            std::uint64_t size = 7) {
  std::string layers;
  for (const std::string& d : digests) {
    layers += R"(,{"mediaType":"application/vnd.ollama.image.projector","digest":")" + d +
              R"(","size":)" + std::to_string(size) + "}";
  }
  manifest.insert(manifest.size() - 2, layers);
  return manifest;
}

TEST(OllamaManifest, ProjectorLayersAreListedAndTheirDigestsChecked) {
  const std::string a = "sha256:" + std::string(64, 'a'), b = "sha256:" + std::string(64, 'b');
  const OllamaModelLayer layer = parse_ollama_manifest(
      with_projectors(manifest_json(std::string(64, 'e'), 1234), {a, b}), "m");
  EXPECT_EQ(layer.digest_hex, std::string(64, 'e'));
  ASSERT_EQ(layer.projectors.size(), 2u);
  EXPECT_EQ(layer.projectors[0].digest_hex, std::string(64, 'a'));
  EXPECT_EQ(layer.projectors[1].digest_hex, std::string(64, 'b'));
  EXPECT_EQ(layer.projectors[1].size, 7u);
  EXPECT_TRUE(
      parse_ollama_manifest(manifest_json(std::string(64, 'e'), 1), "m").projectors.empty());
  const ParseError e =
      manifest_error(with_projectors(manifest_json(std::string(64, 'e'), 1234), {"sha256:../x"}));
  EXPECT_NE(std::string(e.problem()).find("the projector layer's digest is not sha256:"),
            std::string::npos)
      << e.problem();
}

// Manifests that name one projector blob (tags of one vision model) share its parsed copy.
TEST(OllamaStore, ManifestsNamingOneProjectorBlobShareIt) {
  TempDir tmp;
  const fs::path store = tmp.path();
  const std::string model(64, 'a'), projector(64, 'b');
  const std::uint64_t size = write_blob(store, model, "gemma3");
  const std::uint64_t projector_size = write_blob(store, projector, "clip");
  const std::string manifest =
      with_projectors(manifest_json(model, size), {"sha256:" + projector}, projector_size);
  for (const char* tag : {"latest", "4b", "4b-it"}) {
    write_text(store / "manifests" / "registry.ollama.ai" / "library" / "gemma3" / tag, manifest);
  }
  std::vector<std::string> warnings;
  const std::vector<LibraryEntry> found = find_ollama_models(store.string(), warnings);
  ASSERT_EQ(found.size(), 3u);
  std::vector<Model> models;
  for (const LibraryEntry& e : found) models.push_back(e.open());
  for (const Model& m : models) {
    ASSERT_NE(m.projector, nullptr) << m.unpaired;
    EXPECT_EQ(m.projector, models[0].projector);
  }
  EXPECT_EQ(models[0].projector->file.path, (store / "blobs" / ("sha256-" + projector)).string());
}

}  // namespace
}  // namespace ggufs
