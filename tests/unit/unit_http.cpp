// HttpSource against a real nginx on loopback (no mount): exact bytes for any range, the chunk
// cache, how little is fetched, and the refusals (a server without ranges, a missing token, a
// file changed on the server).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ggufs/error.h"
#include "ggufs/http_source.h"
#include "http_server.h"
#include "mount_util.h"  // run
#include "test_util.h"

namespace ggufs {
namespace {

using test::Nginx;
using test::TempDir;

constexpr std::uint32_t kChunk = 256 << 10;

// Writes `n` pseudo-random bytes (seeded) to `path` and returns them.
std::vector<std::uint8_t> write_random(const std::filesystem::path& path, std::size_t n,
                                       std::uint32_t seed) {
  std::vector<std::uint8_t> b(n);
  std::mt19937 rng(seed);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), n);
  return b;
}

RemoteOptions options(const std::filesystem::path& cache) {
  RemoteOptions o;
  o.cache_dir = cache.string();
  o.chunk_bytes = kChunk;
  o.first_backoff_ms = 10;
  return o;
}

// libcurl is loaded when the first remote model is opened (src/remote/curl_library.h): the
// command must not link it, or every mount pays for loading it and its ~30 libraries.
TEST(Http, TheCommandLoadsLibcurlOnlyForRemoteModels) {
  const test::RunResult r = test::run(std::string("readelf -d ") + GGUFS_BINARY + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("(NEEDED)"), std::string::npos) << r.output;  // readelf's own words
  EXPECT_EQ(r.output.find("libcurl"), std::string::npos) << r.output;
}

TEST(Http, ALibcurlThatCannotServeIsACleanRefusal) {
  // A library named libcurl.so.4 without libcurl's functions, found first by the loader.
  TempDir dir;
  std::ofstream(dir.path() / "empty.c") << "int not_curl;\n";
  const test::RunResult cc =
      test::run("cc -shared -fPIC -o " + (dir.path() / "libcurl.so.4").string() + " " +
                (dir.path() / "empty.c").string() + " 2>&1");
  if (cc.exit_code != 0) GTEST_SKIP() << "no C compiler to build the stand-in: " << cc.output;
  const test::RunResult r = test::run("LD_LIBRARY_PATH=" + dir.path().string() + " " +
                                      GGUFS_BINARY + " --info http://127.0.0.1:9/m.gguf 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // cannot read FILE
  EXPECT_NE(r.output.find("libcurl.so.4: has no function curl_easy_init"), std::string::npos)
      << r.output;
}

TEST(Http, AnyRangeIsExactAndTheCacheServesItAgain) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  const auto data = write_random(root.path() / "f.bin", 5 * kChunk + 12345, 1);
  Nginx server(root.path());
  HttpSource s(server.url("f.bin"), options(cache.path()));
  ASSERT_EQ(s.size(), data.size());
  std::mt19937_64 rng(2);
  std::vector<char> buf;
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t off = rng() % data.size();
    const std::size_t n = 1 + rng() % std::min<std::uint64_t>(3 * kChunk, data.size() - off);
    buf.resize(n + 10);
    ASSERT_EQ(s.read_at(off, buf.data(), n), n);
    ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + off, n)) << off << "+" << n;
  }
  // Past the end: short, then nothing.
  buf.resize(100);
  EXPECT_EQ(s.read_at(data.size() - 10, buf.data(), 100), 10u);
  EXPECT_EQ(s.read_at(data.size(), buf.data(), 100), 0u);
  EXPECT_LE(s.bytes_fetched(), data.size());  // each chunk fetched once

  // A second reader of the same file finds every chunk in the cache: it fetches only the first
  // chunk, which tells it the file is still the same.
  const std::uint64_t sent = server.bytes_sent();
  HttpSource again(server.url("f.bin"), options(cache.path()));
  buf.resize(data.size());
  ASSERT_EQ(again.read_at(0, buf.data(), data.size()), data.size());
  EXPECT_EQ(0, std::memcmp(buf.data(), data.data(), data.size()));
  EXPECT_EQ(again.bytes_fetched(), kChunk);
  EXPECT_EQ(server.bytes_sent() - sent, kChunk);
}

TEST(Http, ReadingOneRangeFetchesLittleMoreThanIt) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  const auto data = write_random(root.path() / "big.bin", 64 << 20, 3);
  Nginx server(root.path());
  HttpSource s(server.url("big.bin"), options(cache.path()));
  std::vector<char> buf(1 << 20);
  const std::uint64_t off = 40 << 20;
  ASSERT_EQ(s.read_at(off, buf.data(), buf.size()), buf.size());
  EXPECT_EQ(0, std::memcmp(buf.data(), data.data() + off, buf.size()));
  // The first chunk (size and identity) and the four chunks of the range, not the 64 MiB.
  EXPECT_EQ(server.bytes_sent(), kChunk + buf.size()) << server.log();
}

TEST(Http, SequentialReadsFetchAheadInOneBatch) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  const auto data = write_random(root.path() / "seq.bin", 32 * kChunk, 4);
  Nginx server(root.path());
  RemoteOptions o = options(cache.path());
  o.readahead_chunks = 4;
  HttpSource s(server.url("seq.bin"), o);
  std::vector<char> buf(kChunk);
  for (std::uint64_t c = 0; c < 32; ++c) {
    ASSERT_EQ(s.read_at(c * kChunk, buf.data(), kChunk), kChunk);
    ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + c * kChunk, kChunk));
  }
  EXPECT_EQ(s.bytes_fetched(), data.size());
  // Fetched in batches of five chunks (the one needed and four ahead), concurrently: a read
  // waits for the network once in five chunks.
  const std::string log = server.log();
  const auto requests = std::count(log.begin(), log.end(), '\n');
  EXPECT_EQ(requests, 32);  // one request per chunk (chunk 0 when opening)
  EXPECT_EQ(s.bytes_fetched(), data.size());
  EXPECT_EQ(server.bytes_sent(), data.size());
}

TEST(Http, AServerWithoutRangesIsRefusedNotDownloaded) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  write_random(root.path() / "whole.bin", 64 << 20, 5);
  Nginx server(root.path());
  try {
    HttpSource s(server.url("noranges/whole.bin"), options(cache.path()));
    FAIL() << "opened";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("ignores byte ranges"), std::string::npos) << e.what();
  }
  EXPECT_LT(server.bytes_sent(), 16u << 20) << server.log();
}

TEST(Http, BearerTokenIsSentAndNeverShown) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  const auto data = write_random(root.path() / "private.bin", 3 * kChunk, 6);
  Nginx server(root.path());
  try {
    HttpSource s(server.url("auth/private.bin"), options(cache.path()));
    FAIL() << "opened without a token";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP status 401"), std::string::npos) << e.what();
  }
  RemoteOptions o = options(cache.path());
  o.bearer_token = "secret-token";
  HttpSource s(server.url("auth/private.bin"), o);
  std::vector<char> buf(data.size());
  ASSERT_EQ(s.read_at(0, buf.data(), buf.size()), buf.size());
  EXPECT_EQ(0, std::memcmp(buf.data(), data.data(), buf.size()));
  o.bearer_token = "wrong-token";
  try {
    HttpSource bad(server.url("auth/private.bin"), o);
    FAIL() << "opened with a wrong token";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()).find("wrong-token"), std::string::npos) << e.what();
  }
}

TEST(Http, MissingFilesAndChangedFilesFail) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  write_random(root.path() / "f.bin", 4 * kChunk, 7);
  Nginx server(root.path());
  try {
    HttpSource s(server.url("nothing.bin"), options(cache.path()));
    FAIL() << "opened";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP status 404"), std::string::npos) << e.what();
  }
  HttpSource s(server.url("f.bin"), options(cache.path()));
  // The file is replaced on the server (same size, new content and time): nginx's ETag
  // changes, so chunks not read yet are refused rather than mixed with the old ones.
  write_random(root.path() / "f.bin", 4 * kChunk, 8);
  std::filesystem::last_write_time(
      root.path() / "f.bin",
      std::filesystem::file_time_type::clock::now() + std::chrono::seconds(5));
  std::vector<char> buf(kChunk);
  try {
    s.read_at(3 * kChunk, buf.data(), kChunk);
    FAIL() << "read a changed file";
  } catch (const IoError& e) {
    EXPECT_EQ(e.fault(), Fault::kModified);
    EXPECT_NE(std::string(e.what()).find("changed on the server"), std::string::npos) << e.what();
  }
}

TEST(Http, TransientFaultsAreRetriedWithBackoff) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  const auto data = write_random(root.path() / "f.bin", 12 * kChunk, 9);
  Nginx server(root.path());
  // Every 3rd request 503, every 4th 429, every 5th connection reset, every 7th answered late
  // (after the 1 s timeout): every read still gets the right bytes.
  test::FaultProxy proxy(server.port(),
                         "--fail-every 3 --busy-every 4 --drop-every 5 --delay-every 7 --delay 2");
  RemoteOptions o = options(cache.path());
  o.timeout_s = 1;
  o.max_tries = 8;
  HttpSource s(proxy.url("f.bin"), o);
  std::vector<char> buf(data.size());
  for (std::uint64_t c = 0; c < 12; c += 2) {
    ASSERT_EQ(s.read_at(c * kChunk, buf.data(), 2 * kChunk), 2 * kChunk);
    ASSERT_EQ(0, std::memcmp(buf.data(), data.data() + c * kChunk, 2 * kChunk)) << c;
  }
  EXPECT_GT(s.retries(), 0u);
}

TEST(Http, PersistentFaultsFailOnlyTheirRead) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  const auto data = write_random(root.path() / "f.bin", 8 * kChunk, 10);
  Nginx server(root.path());
  test::FaultProxy proxy(server.port(), "--fail-from " + std::to_string(4 * kChunk));
  RemoteOptions o = options(cache.path());
  o.max_tries = 3;
  HttpSource s(proxy.url("f.bin"), o);
  std::vector<char> buf(kChunk);
  try {
    s.read_at(5 * kChunk, buf.data(), kChunk);
    FAIL() << "read a range the server never serves";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP status 503 (after 3 tries)"), std::string::npos)
        << e.what();
  }
  ASSERT_EQ(s.read_at(kChunk, buf.data(), kChunk), kChunk);  // the rest is still served
  EXPECT_EQ(0, std::memcmp(buf.data(), data.data() + kChunk, kChunk));
}

TEST(Http, TheCacheStaysWithinItsLimit) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  const auto data = write_random(root.path() / "f.bin", 40 * kChunk, 11);
  Nginx server(root.path());
  RemoteOptions o = options(cache.path());
  o.cache_limit_bytes = 8 * kChunk;
  HttpSource s(server.url("f.bin"), o);
  std::vector<char> buf(data.size());
  ASSERT_EQ(s.read_at(0, buf.data(), buf.size()), buf.size());  // the bytes are still right
  EXPECT_EQ(0, std::memcmp(buf.data(), data.data(), buf.size()));
  std::uint64_t cached = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache.path())) {
    if (e.is_regular_file()) cached += e.file_size();
  }
  // Trimmed to the limit after every eighth of it written: at most a batch above it.
  EXPECT_LE(cached, o.cache_limit_bytes + 5 * kChunk);
  EXPECT_GT(cached, 0u);
}

TEST(Http, HttpsWithTheServersCertificate) {
  GGUFS_REQUIRE_NGINX();
  TempDir root, cache;
  const auto data = write_random(root.path() / "f.bin", 3 * kChunk + 7, 12);
  Nginx server(root.path());
  if (server.https_url("f.bin").empty()) GTEST_SKIP() << "no openssl to make a certificate";
  // Not trusted by default: a self-signed certificate.
  try {
    HttpSource s(server.https_url("f.bin"), options(cache.path()));
    FAIL() << "trusted a self-signed certificate";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("bytes 0-"), std::string::npos) << e.what();
  }
  RemoteOptions o = options(cache.path());
  o.ca_file = server.cert().string();
  HttpSource s(server.https_url("f.bin"), o);
  std::vector<char> buf(data.size());
  ASSERT_EQ(s.read_at(0, buf.data(), buf.size()), buf.size());
  EXPECT_EQ(0, std::memcmp(buf.data(), data.data(), buf.size()));
}

}  // namespace
}  // namespace ggufs
