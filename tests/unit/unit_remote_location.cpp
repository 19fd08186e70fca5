// Remote names resolved without a server: hf:// as huggingface_hub's file system names Hub
// files (resolve/ URLs, revision main, HF_TOKEN before the token file), and URLs as they may be
// shown (no query string, no user:password).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <string>

#include "ggufs/error.h"
#include "ggufs/remote_location.h"
#include "test_util.h"

namespace ggufs {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

RemoteLocation hf(const std::string& name, std::map<std::string, std::string> vars = {}) {
  return resolve_remote(name, S3Settings{}, "", env_of(std::move(vars)));
}

TEST(RemoteLocation, HubNamesBecomeResolveUrls) {
  EXPECT_EQ(hf("hf://someone/tiny/m.gguf").url,
            "https://huggingface.co/someone/tiny/resolve/main/m.gguf");
  EXPECT_EQ(hf("hf://someone/tiny@v1.0/sub/dir/m-00001-of-00004.gguf").url,
            "https://huggingface.co/someone/tiny/resolve/v1.0/sub/dir/m-00001-of-00004.gguf");
  // A pull request's revision (refs/pr/1) is one path segment of the URL, written either way.
  EXPECT_EQ(hf("hf://someone/tiny@refs/pr/1/m.gguf").url,
            "https://huggingface.co/someone/tiny/resolve/refs%2Fpr%2F1/m.gguf");
  EXPECT_EQ(hf("hf://someone/tiny@refs%2Fpr%2F1/m.gguf").url,
            "https://huggingface.co/someone/tiny/resolve/refs%2Fpr%2F1/m.gguf");
  EXPECT_EQ(hf("hf://datasets/someone/data/x.gguf").url,
            "https://huggingface.co/datasets/someone/data/resolve/main/x.gguf");
  EXPECT_EQ(hf("hf://o/r/a b.gguf", {{"HF_ENDPOINT", "http://127.0.0.1:9/"}}).url,
            "http://127.0.0.1:9/o/r/resolve/main/a%20b.gguf");
}

TEST(RemoteLocation, MalformedHubNamesAreRefused) {
  for (const char* bad :
       {"hf://", "hf://someone", "hf://someone/tiny", "hf://someone/tiny/", "hf:///tiny/m.gguf",
        "hf://someone//m.gguf", "hf://someone/@v/m.gguf", "hf://someone/tiny@/m.gguf"}) {
    SCOPED_TRACE(bad);
    try {
      hf(bad);
      ADD_FAILURE() << "accepted";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(RemoteLocation, HubTokenFromTheVariableElseTheTokenFile) {
  test::TempDir home;
  std::ofstream(home.path() / "token") << "hf_from_file\n";
  EXPECT_EQ(hf("hf://o/r/m.gguf", {{"HF_TOKEN", "hf_var"}, {"HF_HOME", home.path().string()}})
                .auth.bearer_token,
            "hf_var");
  EXPECT_EQ(hf("hf://o/r/m.gguf", {{"HF_HOME", home.path().string()}}).auth.bearer_token,
            "hf_from_file");
  std::filesystem::create_directories(home.path() / ".cache" / "huggingface");
  std::ofstream(home.path() / ".cache" / "huggingface" / "token") << "hf_default\n";
  EXPECT_EQ(hf("hf://o/r/m.gguf", {{"HOME", home.path().string()}}).auth.bearer_token,
            "hf_default");
  EXPECT_EQ(hf("hf://o/r/m.gguf", {{"HF_TOKEN_PATH", (home.path() / "token").string()}})
                .auth.bearer_token,
            "hf_from_file");
  EXPECT_EQ(hf("hf://o/r/m.gguf").auth.bearer_token, "");  // public repositories need none
}

// As huggingface_hub's get_token() (utils/_auth.py, constants.py): CR and LF removed and
// surrounding white space stripped, a blank one counting as none; HF_HOME defaults to
// $XDG_CACHE_HOME/huggingface where that is set.
TEST(RemoteLocation, HubTokenCleanedAndFoundAsHuggingfaceHubFindsIt) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "xdg" / "huggingface");
  std::ofstream(dir.path() / "xdg" / "huggingface" / "token") << "  hf_xdg\r\n";
  std::ofstream(dir.path() / "lines") << "hf_one\r\nhf_two\n";
  const std::string xdg = (dir.path() / "xdg").string();
  EXPECT_EQ(
      hf("hf://o/r/m.gguf", {{"XDG_CACHE_HOME", xdg}, {"HOME", "/nowhere"}}).auth.bearer_token,
      "hf_xdg");
  EXPECT_EQ(
      hf("hf://o/r/m.gguf", {{"HF_TOKEN", " \t\r\n"}, {"XDG_CACHE_HOME", xdg}}).auth.bearer_token,
      "hf_xdg");
  EXPECT_EQ(hf("hf://o/r/m.gguf", {{"HF_TOKEN", " hf_var\r\n"}}).auth.bearer_token, "hf_var");
  EXPECT_EQ(
      hf("hf://o/r/m.gguf", {{"HF_TOKEN_PATH", (dir.path() / "lines").string()}}).auth.bearer_token,
      "hf_onehf_two");
}

// A token file that is not a regular file (a FIFO planted there, /dev/zero) or is huge is an
// error naming it, at once: opened as a FIFO it would wait for a writer for ever.
TEST(RemoteLocation, HubTokenFileThatIsNoRegularFileIsAnErrorNotAWait) {
  test::TempDir dir;
  const std::filesystem::path fifo = dir.path() / "token";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto resolved = std::async(std::launch::async, [&] {
    try {
      hf("hf://o/r/m.gguf", {{"HF_TOKEN_PATH", fifo.string()}});
      return std::string("no error");
    } catch (const IoError& e) {
      return std::string(e.what());
    }
  });
  if (resolved.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "reading the token file " << fifo << " blocked";
    std::ofstream(fifo) << "x";  // a writer: lets the read end, so the test can finish
  }
  const std::string what = resolved.get();
  EXPECT_NE(what.find(fifo.string() + ": not a regular file (a FIFO)"), std::string::npos) << what;

  const std::filesystem::path big = dir.path() / "big";
  std::ofstream(big) << std::string(64 * 1024 + 1, 'x');
  try {
    hf("hf://o/r/m.gguf", {{"HF_TOKEN_PATH", big.string()}});
    ADD_FAILURE() << "a 64 KiB + 1 byte token file was taken";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than 65536 bytes"), std::string::npos) << e.what();
  }
}

TEST(RemoteLocation, UrlsAreShownWithoutQueryOrPassword) {
  EXPECT_EQ(display_url("https://b.s3.amazonaws.com/m.gguf?X-Amz-Signature=abc&X-Amz-Credential=k"),
            "https://b.s3.amazonaws.com/m.gguf?…");
  EXPECT_EQ(display_url("http://user:pw@host:8/m.gguf"), "http://host:8/m.gguf");
  EXPECT_EQ(display_url("http://host/a@b.gguf"), "http://host/a@b.gguf");
  EXPECT_EQ(display_url("s3://bucket/m.gguf"), "s3://bucket/m.gguf");
  EXPECT_TRUE(is_remote("s3://b/k") && is_remote("hf://o/r/p") && is_remote("https://h/p"));
  EXPECT_FALSE(is_remote("./s3:/x") || is_remote("model.gguf"));
}

TEST(RemoteLocation, PlainUrlsCarryTheGivenToken) {
  const RemoteLocation loc = resolve_remote("https://h/m.gguf", S3Settings{}, "tok", env_of({}));
  EXPECT_EQ(loc.url, "https://h/m.gguf");
  EXPECT_EQ(loc.auth.bearer_token, "tok");
  EXPECT_TRUE(loc.auth.aws_region.empty());
}

}  // namespace
}  // namespace ggufs
