// The chunk cache never destroys what it did not write: a folder of the user's files is refused
// and left as it was, the trim deletes only chunk and part files of its own layout (never a
// link's target), chunks of the layout before the checks are not trusted, and two writers of
// one folder never show a reader part of a chunk. It is never steered by what another user or
// a link put in its folders: no write or read through a link at any level, no blocking open of
// a FIFO, no folder of another user's or open to others, no tag written over. The trim removes
// the least recently used chunks, and a failure of the cache never leaves a chunk "being
// fetched" for every later read to wait on.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <new>
#include <optional>
#include <string_view>
#include <thread>

#include "ggufs/chunk_cache.h"
#include "ggufs/error.h"
#include "ggufs/http_source.h"
#include "http_server.h"
#include "test_util.h"

namespace {
// Armed by ThrowInNextCacheWrite (below): the next write(2) to a file under this folder throws.
std::atomic<bool> g_throw_in_next_cache_write{false};
std::string g_cache_write_folder;  // set before arming, read only while armed
}  // namespace

// Every write(2) of this test program comes here (the program's own definition is found before
// libc's). No real failure of the chunk cache throws, yet an exception can come out of it (no
// memory for a name or a list, a library that throws), and AnExceptionFromTheCacheLeavesNoChunk
// InFlight needs one from inside store(): armed, the next write to a file under the cache folder
// throws std::bad_alloc, as an allocation would there. Every other write is the system call.
extern "C" ssize_t write(int fd, const void* buf, size_t n) {
  if (g_throw_in_next_cache_write.load()) {
    char target[4096];
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t len = ::readlink(link.c_str(), target, sizeof target);
    if (len > 0 &&
        std::string_view(target, static_cast<std::size_t>(len))
            .starts_with(g_cache_write_folder + "/") &&
        g_throw_in_next_cache_write.exchange(false)) {
      throw std::bad_alloc();
    }
  }
  return ::syscall(SYS_write, fd, buf, n);
}

namespace ggufs {
namespace {

namespace fs = std::filesystem;
using test::read_text;
using test::ScopedEnv;
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

// The user of the files that another user "owns" in these tests: nobody.
constexpr uid_t kOtherUser = 65534;

// Runs `body` in a child process without root's powers (as the other user when we are root:
// root lists and writes any folder whatever its mode) and returns its exit status (-1 when it
// did not exit). The folders `body` uses must be given to that user (give_to_child_user).
int in_unprivileged_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setresgid(kOtherUser, kOtherUser, kOtherUser) != 0 ||
         ::setresuid(kOtherUser, kOtherUser, kOtherUser) != 0)) {
      ::_exit(100);
    }
    int code = 101;
    try {
      code = body();
    } catch (...) {
    }
    ::_exit(code);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void give_to_child_user(const fs::path& p) {
  if (::geteuid() == 0) {
    ASSERT_EQ(::lchown(p.c_str(), kOtherUser, kOtherUser), 0) << p;
  }
}

// 0 when opening a cache at `root` throws IoError naming `root` (what it says goes to stderr),
// 1 when the cache is opened, 2 when the message does not name the folder.
int refused(const fs::path& root) {
  try {
    ChunkCache cache(root, 1 << 20);
    return 1;
  } catch (const IoError& e) {
    std::fprintf(stderr, "refused: %s\n", e.what());
    return std::string(e.what()).find(root.string()) != std::string::npos ? 0 : 2;
  }
}

// Expects opening a cache at `root` to throw IoError, one line naming `named` (the folder at
// fault, `root` unless given) and saying `why`.
void expect_refused(const fs::path& root, const std::string& why, fs::path named = {}) {
  if (named.empty()) named = root;
  try {
    ChunkCache cache(root, 1 << 20);
    ADD_FAILURE() << root << " was taken as a cache";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(named.string()), std::string::npos) << what;
    EXPECT_NE(what.find(why), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(ChunkCache, AStoreNeverWritesThroughALinkedKeyFolder) {
  TempDir dir, victim;
  ChunkCache cache(dir.path() / "c", 1 << 20);
  put(victim.path() / "0", "precious");
  fs::create_directory_symlink(victim.path(), cache.chunks_dir() / kKey);
  cache.store(kKey, 0, bytes(8, 'x'));
  EXPECT_EQ(read_text(victim.path() / "0"), "precious");
  EXPECT_EQ(entries(victim.path()), 1u);  // no part file left there either
  // Nor is a file behind the link served as a chunk.
  EXPECT_FALSE(cache.has(kKey, 0, 8));
  std::vector<char> out(8);
  EXPECT_FALSE(cache.read(kKey, 0, 8, 0, 8, out.data()));
}

TEST(ChunkCache, AStoreNeverWritesThroughALinkedChunksFolder) {
  TempDir dir, victim;
  const fs::path root = dir.path() / "c";
  ChunkCache cache(root, 1 << 20);
  put(victim.path() / kKey / "0", "precious");
  // chunks-v2 swapped for a link while the cache is open, then the cache opened again.
  fs::rename(cache.chunks_dir(), root / "moved");
  fs::create_directory_symlink(victim.path(), cache.chunks_dir());
  cache.store(kKey, 0, bytes(8, 'x'));
  cache.trim();
  EXPECT_THROW(ChunkCache(root, 1 << 20), IoError);
  EXPECT_EQ(read_text(victim.path() / kKey / "0"), "precious");
  EXPECT_EQ(entries(victim.path() / kKey), 1u);
}

TEST(ChunkCache, AFifoPlantedAsAChunkIsNeverOpenedBlocking) {
  TempDir dir;
  ChunkCache cache(dir.path(), 1 << 20);
  fs::create_directories(cache.chunks_dir() / kKey);
  const fs::path fifo = cache.chunks_dir() / kKey / "0";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(cache.has(kKey, 0, 100));
  std::promise<bool> read_result;
  std::future<bool> got = read_result.get_future();
  std::thread reader([&] {
    std::vector<char> out(10);
    read_result.set_value(cache.read(kKey, 0, 100, 0, 10, out.data()));
  });
  // A bound that fails the test rather than hanging it: a blocking open of a FIFO without a
  // writer never returns (the writer opened here lets it return after the failure).
  if (got.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "the read of a FIFO planted as a chunk blocked in open";
    const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (w >= 0) ::close(w);
  }
  reader.join();
  EXPECT_FALSE(got.get());
}

TEST(ChunkCache, AFolderThatCannotBeListedIsRefusedAndItsTagLeftAlone) {
  TempDir dir;
  fs::permissions(dir.path(), fs::perms(0755));
  // Empty; with another tool's tag; with a link named like the tag to a file of the user's.
  const fs::path empty = dir.path() / "empty", tagged = dir.path() / "tagged",
                 linked = dir.path() / "linked", victim = dir.path() / "victim";
  const std::string foreign = "Signature: 8a477f597d28d172789f06886806bc55\n# other tool\n";
  put(tagged / "CACHEDIR.TAG", foreign);
  put(victim, "precious");
  fs::create_directories(empty);
  fs::create_directories(linked);
  fs::create_symlink(victim, linked / "CACHEDIR.TAG");
  for (const fs::path& p : {empty, tagged, tagged / "CACHEDIR.TAG", linked, victim}) {
    give_to_child_user(p);
  }
  give_to_child_user(linked / "CACHEDIR.TAG");
  for (const fs::path& root : {empty, tagged, linked}) {
    fs::permissions(root, fs::perms(0300));  // writable and searchable, not readable
    EXPECT_EQ(in_unprivileged_child([&] { return refused(root); }), 0) << root;
  }
  EXPECT_FALSE(fs::exists(empty / "CACHEDIR.TAG"));
  EXPECT_EQ(read_text(tagged / "CACHEDIR.TAG"), foreign);
  EXPECT_TRUE(fs::is_symlink(linked / "CACHEDIR.TAG"));
  EXPECT_EQ(read_text(victim), "precious");
  // A folder that can be listed, with a link named like the tag: refused, the link kept.
  fs::permissions(linked, fs::perms(0700));
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(linked.c_str(), 0, 0), 0);
  }
  expect_refused(linked, "not ggufs's chunk cache");
  EXPECT_EQ(read_text(victim), "precious");
}

TEST(ChunkCache, AFolderOfAnotherUserOrOpenToOthersIsRefused) {
  TempDir dir;
  const fs::path open = dir.path() / "open", group = dir.path() / "group";
  fs::create_directories(open);
  fs::create_directories(group);
  fs::permissions(open, fs::perms(0777));
  fs::permissions(group, fs::perms(0770));
  expect_refused(open, "writable by group or others");
  expect_refused(group, "writable by group or others");
  EXPECT_TRUE(fs::is_empty(open));
  EXPECT_TRUE(fs::is_empty(group));
  // Our cache whose chunks folder another user could write in.
  const fs::path ours = dir.path() / "ours";
  { ChunkCache cache(ours, 1 << 20); }
  fs::permissions(ours / "chunks-v2", fs::perms(0777));
  expect_refused(ours, "writable by group or others", ours / "chunks-v2");
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a folder to another user";
  const fs::path theirs = dir.path() / "theirs";
  fs::create_directories(theirs);
  give_to_child_user(theirs);
  expect_refused(theirs, "owned by user 65534");
  EXPECT_TRUE(fs::is_empty(theirs));
}

TEST(ChunkCache, WithoutHomeTheFallbackIsAFolderOfTheUsersOwn) {
  TempDir tmp;
  const std::string uid = std::to_string(::geteuid());
  {
    const ScopedEnv env{
        {"HOME", nullptr}, {"XDG_CACHE_HOME", nullptr}, {"TMPDIR", tmp.path().c_str()}};
    const fs::path root = ChunkCache::default_root();
    EXPECT_EQ(root, tmp.path() / ("ggufs-cache-" + uid));
    ChunkCache cache(root, 1 << 20);
    struct stat st {};
    ASSERT_EQ(::lstat(root.c_str(), &st), 0) << root;
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    EXPECT_EQ(st.st_uid, ::geteuid());
  }
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a folder to another user";
  // Made first by another user: refused, not adopted.
  TempDir tmp2;
  const ScopedEnv env{
      {"HOME", nullptr}, {"XDG_CACHE_HOME", nullptr}, {"TMPDIR", tmp2.path().c_str()}};
  const fs::path planted = tmp2.path() / ("ggufs-cache-" + uid);
  fs::create_directories(planted);
  give_to_child_user(planted);
  expect_refused(ChunkCache::default_root(), "owned by user 65534");
  EXPECT_TRUE(fs::is_empty(planted));
}

TEST(ChunkCache, TheTrimRemovesTheLeastRecentlyUsedChunk) {
  TempDir dir;
  {
    ChunkCache writer(dir.path(), 1 << 20);
    writer.store(kKey, 0, bytes(400, 'a'));
    writer.store(kKey, 1, bytes(400, 'b'));
  }
  // Chunk 0 written two hours ago, chunk 1 one hour ago.
  const fs::path key_dir = dir.path() / "chunks-v2" / kKey;
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(key_dir / "0", now - std::chrono::hours(2));
  fs::last_write_time(key_dir / "1", now - std::chrono::hours(1));
  ChunkCache cache(dir.path(), 500);  // room for one chunk of 400 bytes
  std::vector<char> out(400);
  ASSERT_TRUE(cache.read(kKey, 0, 400, 0, 400, out.data()));  // chunk 0 is used now
  EXPECT_EQ(out, bytes(400, 'a'));
  cache.trim();
  EXPECT_TRUE(cache.has(kKey, 0, 400));
  EXPECT_FALSE(cache.has(kKey, 1, 400));
}

// Makes the next write of a file under `folder` throw std::bad_alloc (see write() above), for
// the scope of a test.
class ThrowInNextCacheWrite {
 public:
  explicit ThrowInNextCacheWrite(const fs::path& folder) {
    g_cache_write_folder = fs::canonical(folder).string();
    g_throw_in_next_cache_write = true;
  }
  ~ThrowInNextCacheWrite() { g_throw_in_next_cache_write = false; }
  ThrowInNextCacheWrite(const ThrowInNextCacheWrite&) = delete;
  ThrowInNextCacheWrite& operator=(const ThrowInNextCacheWrite&) = delete;
  bool fired() const { return !g_throw_in_next_cache_write; }
};

TEST(ChunkCache, AnExceptionFromTheCacheLeavesNoChunkInFlight) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  std::string data(4 * 4096, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 23);
  put(root.path() / "f.bin", data);
  test::Nginx server(root.path());
  RemoteOptions o;
  o.cache_dir = cache.path().string();
  o.chunk_bytes = 4096;
  o.read_timeout_s = 1;  // how long a chunk left in flight would stall the next read
  HttpSource s(server.url("f.bin"), o);
  std::vector<char> out(100);
  {
    const ThrowInNextCacheWrite fault(cache.path());
    EXPECT_THROW(s.read_at(2 * 4096, out.data(), out.size()), std::bad_alloc);
    ASSERT_TRUE(fault.fired()) << "the read stored nothing in the cache";
  }
  // The chunk that read fetched is not left "being fetched": this read fetches it again.
  try {
    ASSERT_EQ(s.read_at(2 * 4096, out.data(), out.size()), out.size());
  } catch (const IoError& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(std::string(out.begin(), out.end()), data.substr(2 * 4096, out.size()));
}

}  // namespace
}  // namespace ggufs
