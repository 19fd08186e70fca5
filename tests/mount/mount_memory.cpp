// Memory that runs out while a library's model is laid out, on a real mount: the daemon runs
// under an address-space limit (prlimit --as, RLIMIT_AS) that a model of a million-token
// vocabulary does not fit in. That model loses a view, or becomes an error folder; the daemon
// stays up and the model beside it is served (issue 31: listing such a model once ended the
// daemon, as nlohmann-json's destructor allocated while a std::bad_alloc unwound).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/statfs.h>

#include <algorithm>

#include "corpus.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

namespace fs = std::filesystem;

// The causes ggufs names when memory runs out (error.h, not_enough_memory): a failed allocation
// (what() of libstdc++'s std::bad_alloc), or a thread that could not start (std::system_error of
// EAGAIN, what pthread_create returns when no stack can be mapped; ENOMEM likewise), by
// strerror's text.
bool is_memory_shortage(const std::string& text, const std::string& before,
                        const std::string& after) {
  for (const char* cause :
       {"std::bad_alloc", "Resource temporarily unavailable", "Cannot allocate memory"}) {
    if (text == fmt::format("{}{}{}", before, cause, after)) return true;
  }
  return false;
}

// The good model's general.architecture as the mount serves it, else its error file (the reason
// it is not served) or the read's failure.
std::string served(const Mount& m) {
  try {
    return read_text(m / "good/metadata/general.architecture");
  } catch (const std::exception& e) {
    std::error_code ec;
    if (fs::exists(m / "good/error", ec)) return "good/error: " + read_text(m / "good/error");
    return e.what();
  }
}

TEST(NeverAbort, ALibraryUnderAnAddressSpaceLimitStaysUp) {
  GGUFS_REQUIRE_FUSE();
#if defined(GGUFS_SANITIZED)
  GTEST_SKIP() << "ASan reserves terabytes of address space for its shadow: no RLIMIT_AS fits";
#endif
  if (run("command -v prlimit").exit_code != 0) GTEST_SKIP() << "prlimit is missing (util-linux)";
  TempDir tmp;
  const fs::path lib = tmp.path() / "lib";
  fs::create_directories(lib);
  write_arch_model(lib / "good.gguf", "llama");
  // The daemon's own address space, serving the good model: threads' stacks, malloc's arenas.
  std::uint64_t peak = 0;
  {
    const Mount m(lib);
    ASSERT_TRUE(m.mounted()) << m.output();
    ASSERT_EQ(read_text(m / "good/metadata/general.architecture"), "llama\n");
    const std::vector<int> pids = pids_with(m.path().string());
    ASSERT_EQ(pids.size(), 1u);
    peak = proc_status_bytes(pids[0], "VmPeak");
  }
  ASSERT_GT(peak, 0u);
  write_file(lib / "pairs.gguf", corpus::pair_vocabulary_llama(1000));
  // Room for the parsed model (some 40 MB) but not for its views, then for more of them: what
  // fits where depends on the C library's arenas and the threads' stacks, so each limit may end
  // in any of the three outcomes, but the tightest cannot hold every view.
  int short_of_memory = 0;
  for (const std::uint64_t room : {64ull << 20, 128ull << 20, 384ull << 20}) {
    SCOPED_TRACE(fmt::format("limit: {} MiB above the daemon's peak", room >> 20));
    const Mount m(lib, "", fmt::format("prlimit --as={}", peak + room));
    ASSERT_TRUE(m.mounted()) << m.output();
    // The good model is opened first, in the room it had: opened after the large model's
    // failure, the room left would depend on which of that attempt's threads (their stacks) and
    // arenas are gone yet, a matter of timing on a busy machine.
    EXPECT_EQ(served(m), "llama\n");
    // Opening the large model: what fits is served, the rest is an error folder or a view less.
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(m / "pairs", ec)) {
      names.push_back(e.path().filename().string());
    }
    EXPECT_FALSE(ec) << ec.message();
    if (names == std::vector<std::string>{"error"}) {
      ++short_of_memory;
      const std::string error = read_text(m / "pairs/error");
      EXPECT_TRUE(is_memory_shortage(error, "not enough memory to lay out this model (", ")\n"))
          << error;
    } else if (!fs::exists(m / "pairs/hf")) {
      // Laid out without the folder that did not fit: the extended attribute says why.
      ++short_of_memory;
      EXPECT_NE(std::find(names.begin(), names.end(), "gguf.json"), names.end());
      const RunResult why = run("getfattr --only-values -n user.ggufs.hf " + quote(m / "pairs"));
      EXPECT_TRUE(
          is_memory_shortage(why.output, "not offered: not enough memory to lay it out (", ")"))
          << why.output;
    } else {
      EXPECT_TRUE(fs::exists(m / "pairs/hf/tokenizer.json"));
    }
    // The daemon is up, and the model beside is served.
    struct statfs sfs {};
    EXPECT_EQ(::statfs(m.path().c_str(), &sfs), 0) << "the daemon died";
    EXPECT_EQ(served(m), "llama\n");
  }
  EXPECT_GT(short_of_memory, 0) << "every view fit under every limit: the test tests nothing";
}

// A library where no thread can start: glibc sizes a thread's stack by RLIMIT_STACK
// (pthread_create(3)), here 1 GiB under a 768 MiB address space, and -s keeps libfuse to the one
// thread it has. The layout's helper threads (std::async) then run their work on the thread that
// lays the model out, which is served whole, not as an error folder.
TEST(NeverAbort, ALibraryWhoseThreadsCannotStartServesItsModels) {
  GGUFS_REQUIRE_FUSE();
#if defined(GGUFS_SANITIZED)
  GTEST_SKIP() << "ASan reserves terabytes of address space for its shadow: no RLIMIT_AS fits";
#endif
  if (run("command -v prlimit").exit_code != 0) GTEST_SKIP() << "prlimit is missing (util-linux)";
  if (run("command -v python3").exit_code != 0) GTEST_SKIP() << "python3 is missing";
  const std::string limits = fmt::format("prlimit --stack={} --as={}", 1ull << 30, 768ull << 20);
  // The limits do stop threads: Python's threading (pthread_create with default attributes).
  ASSERT_NE(
      run(limits + " python3 -c 'import threading; threading.Thread(target=int).start()' 2>&1")
          .exit_code,
      0);
  TempDir tmp;
  const fs::path lib = tmp.path() / "lib";
  fs::create_directories(lib);
  write_arch_model(lib / "good.gguf", "llama");
  // What the model is without limits: its listing, and why it has no hf/ (no weights of llama's).
  const auto served = [](const Mount& m) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(m / "good")) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    const RunResult why = run("getfattr --only-values -n user.ggufs.hf " + quote(m / "good"));
    return std::make_pair(names, why.output);
  };
  std::pair<std::vector<std::string>, std::string> unlimited;
  {
    const Mount m(lib, "-s");
    ASSERT_TRUE(m.mounted()) << m.output();
    unlimited = served(m);
  }
  ASSERT_NE(std::find(unlimited.first.begin(), unlimited.first.end(), "gguf.json"),
            unlimited.first.end());
  const Mount m(lib, "-s", limits);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(served(m), unlimited) << read_text(m / "good/error");
  EXPECT_EQ(read_text(m / "good/metadata/general.architecture"), "llama\n");
}

}  // namespace
}  // namespace ggufs::test
