// The chunk cache never destroys what it did not write: a folder of the user's files is refused
// and left as it was, the trim deletes only chunk and part files of its own layout (never a
// link's target), chunks of the layout before the checks are not trusted, and two writers of
// one folder never show a reader part of a chunk.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include "ggufs/chunk_cache.h"
#include "ggufs/error.h"
#include "ggufs/http_source.h"
#include "http_server.h"
#include "test_util.h"

namespace ggufs {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::TempDir;

const std::string kKey(64, 'a');

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::vector<char> bytes(std::size_t n, char fill) { return std::vector<char>(n, fill); }

TEST(ChunkCache, AFolderOfOtherFilesIsRefusedAndLeftAsItWas) {
  TempDir dir;
  put(dir.path() / "thesis.tex", "years of work");
  put(dir.path() / "photos" / "a.jpg", "jpeg");
  try {
    ChunkCache cache(dir.path(), 1);
    FAIL() << "a folder of the user's files was taken as a cache";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(dir.path().string()), std::string::npos) << what;
    EXPECT_NE(what.find("not ggufs's chunk cache"), std::string::npos) << what;
  }
  EXPECT_EQ(read_text(dir.path() / "thesis.tex"), "years of work");
  EXPECT_EQ(read_text(dir.path() / "photos" / "a.jpg"), "jpeg");
  EXPECT_FALSE(fs::exists(dir.path() / "CACHEDIR.TAG"));
}

TEST(ChunkCache, AnotherToolsCacheTagIsNotOurs) {
  TempDir dir;
  put(dir.path() / "CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n# other tool\n");
  put(dir.path() / "data", "theirs");
  EXPECT_THROW(ChunkCache(dir.path(), 1), IoError);
  EXPECT_EQ(read_text(dir.path() / "data"), "theirs");
}

TEST(ChunkCache, AnEmptyOrMissingFolderBecomesATaggedCache) {
  TempDir dir;
  const fs::path root = dir.path() / "new" / "cache";
  ChunkCache cache(root, 1 << 20);
  // The Cache Directory Tagging Specification's signature line, which backup tools look for.
  EXPECT_EQ(read_text(root / "CACHEDIR.TAG").substr(0, 43),
            "Signature: 8a477f597d28d172789f06886806bc55");
  cache.store(kKey, 3, bytes(100, 'x'));
  EXPECT_TRUE(cache.has(kKey, 3, 100));
  EXPECT_FALSE(cache.has(kKey, 3, 99));  // a chunk of another size is not trusted
  std::vector<char> out(10);
  ASSERT_TRUE(cache.read(kKey, 3, 100, 90, 10, out.data()));
  EXPECT_EQ(out, bytes(10, 'x'));
  // Opened again: ours.
  EXPECT_NO_THROW(ChunkCache(root, 1 << 20));
}

TEST(ChunkCache, TheTrimDeletesOnlyItsOwnChunksAndNeverALinksTarget) {
  TempDir dir, outside;
  const fs::path root = dir.path() / "c";
  ChunkCache cache(root, 1000);
  put(outside.path() / "precious", std::string(5000, 'p'));
  // Things the cache did not write, inside its folders.
  put(root / "notes.txt", std::string(5000, 'n'));
  put(cache.chunks_dir() / "readme", std::string(5000, 'r'));
  put(cache.chunks_dir() / kKey / "notes", std::string(5000, 'k'));
  put(cache.chunks_dir() / "not-a-key" / "0", std::string(5000, 'z'));
  fs::create_directories(cache.chunks_dir() / kKey);
  fs::create_symlink(outside.path() / "precious", cache.chunks_dir() / kKey / "7");
  fs::create_directory_symlink(outside.path(), cache.chunks_dir() / std::string(64, 'b'));
  for (std::uint64_t n = 0; n < 6; ++n) cache.store(kKey, n, bytes(400, 'c'));
  cache.trim();
  std::uint64_t chunks = 0;
  for (std::uint64_t n = 0; n < 6; ++n) chunks += cache.has(kKey, n, 400) ? 1 : 0;
  EXPECT_LE(chunks * 400, 1000u);  // trimmed to its limit
  EXPECT_GE(chunks, 1u);           // the newest stay
  EXPECT_EQ(read_text(outside.path() / "precious"), std::string(5000, 'p'));
  EXPECT_EQ(read_text(root / "notes.txt"), std::string(5000, 'n'));
  EXPECT_EQ(read_text(cache.chunks_dir() / "readme"), std::string(5000, 'r'));
  EXPECT_EQ(read_text(cache.chunks_dir() / kKey / "notes"), std::string(5000, 'k'));
  EXPECT_EQ(read_text(cache.chunks_dir() / "not-a-key" / "0"), std::string(5000, 'z'));
  EXPECT_TRUE(fs::is_symlink(cache.chunks_dir() / kKey / "7"));
}

TEST(ChunkCache, OldPartFilesGoAndFreshOnesStay) {
  TempDir dir;
  ChunkCache cache(dir.path(), 1 << 20);
  const fs::path old_part = cache.chunks_dir() / kKey / ".4.100.101.1.part";
  const fs::path new_part = cache.chunks_dir() / kKey / ".5.100.101.2.part";
  put(old_part, "half");
  put(new_part, "half");
  fs::last_write_time(old_part, fs::file_time_type::clock::now() - std::chrono::hours(1));
  cache.trim();
  EXPECT_FALSE(fs::exists(old_part));
  EXPECT_TRUE(fs::exists(new_part));  // another mount may be writing it
}

TEST(ChunkCache, ChunksOfTheUncheckedLayoutAreDroppedAndTheFolderAdopted) {
  TempDir dir;
  // The layout before the tag: KEY folders of chunk files, stored before answers were checked.
  put(dir.path() / kKey / "0", "maybe poisoned");
  put(dir.path() / kKey / ".1.1234.tmp", "part");
  ChunkCache cache(dir.path(), 1 << 20);
  EXPECT_FALSE(fs::exists(dir.path() / kKey));
  EXPECT_TRUE(fs::exists(dir.path() / "CACHEDIR.TAG"));
  EXPECT_FALSE(cache.has(kKey, 0, 14));
}

TEST(ChunkCache, TwoWritersOfOneFolderNeverShowPartOfAChunk) {
  TempDir dir;
  ChunkCache a(dir.path(), 1 << 30), b(dir.path(), 1 << 30);
  constexpr std::size_t kBytes = 1 << 20;
  std::atomic<bool> stop{false};
  a.store(kKey, 0, bytes(kBytes, 'q'));  // then rewritten over and over while read
  std::thread wa([&] {
    while (!stop) a.store(kKey, 0, bytes(kBytes, 'q'));
  });
  std::thread wb([&] {
    while (!stop) b.store(kKey, 0, bytes(kBytes, 'q'));
  });
  std::vector<char> out(kBytes);
  int whole = 0;
  for (int i = 0; i < 300; ++i) {
    std::fill(out.begin(), out.end(), 0);
    if (!a.read(kKey, 0, kBytes, 0, kBytes, out.data())) continue;
    ++whole;
    ASSERT_EQ(out, bytes(kBytes, 'q')) << "read " << i << " saw part of a chunk";
  }
  stop = true;
  wa.join();
  wb.join();
  EXPECT_GT(whole, 0);
}

TEST(ChunkCache, ARemoteFileWithTheCacheInAFolderOfOtherFilesIsRefused) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  put(root.path() / "f.bin", std::string(10000, 'f'));
  put(cache.path() / "keep.me", "mine");
  test::Nginx server(root.path());
  RemoteOptions o;
  o.cache_dir = cache.path().string();
  EXPECT_THROW(HttpSource(server.url("f.bin"), o), IoError);
  EXPECT_EQ(read_text(cache.path() / "keep.me"), "mine");
}

}  // namespace
}  // namespace ggufs
