// Which Ollama store `ggufs ollama:` mounts: $OLLAMA_MODELS, the user's ~/.ollama/models, or the
// store of Ollama's Linux service (its installer runs it as the system user ollama, home
// /usr/share/ollama). The service's store is a parameter, so a temporary folder stands for it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "ggufs/library_scan.h"
#include "test_util.h"

namespace ggufs::test {
namespace {

namespace fs = std::filesystem;

TEST(OllamaStorePath, TheLinuxServicesStoreIsUnderUsrShareOllama) {
  // Ollama's docs (docs/linux.md, docs/faq.md "Where are models stored?"): Linux,
  // /usr/share/ollama/.ollama/models.
  EXPECT_STREQ(kOllamaSystemStore, "/usr/share/ollama/.ollama/models");
}

// A temporary HOME and a folder standing for the service's store; `user_store`: whether
// HOME/.ollama/models exists, `service_store`: whether the service's does.
struct Stores {
  TempDir tmp;
  std::string home = (tmp.path() / "home").string();
  std::string service = (tmp.path() / "service").string();
  Stores(bool user_store, bool service_store) {
    fs::create_directories(user_store ? home + "/.ollama/models" : home);
    if (service_store) fs::create_directories(service);
  }
};

TEST(OllamaStorePath, OllamaModelsComesFirst) {
  const Stores s(true, true);
  const ScopedEnv env{{"OLLAMA_MODELS", "/elsewhere/models"}, {"HOME", s.home.c_str()}};
  const OllamaStore got = find_ollama_store(s.service);
  EXPECT_EQ(got.path, "/elsewhere/models");
  EXPECT_EQ(got.why, "$OLLAMA_MODELS");
}

TEST(OllamaStorePath, TheUsersStoreWhenItExists) {
  const Stores s(true, true);
  // An empty $OLLAMA_MODELS counts as unset, as in Ollama's envconfig.
  const ScopedEnv env{{"OLLAMA_MODELS", ""}, {"HOME", s.home.c_str()}};
  const OllamaStore got = find_ollama_store(s.service);
  EXPECT_EQ(got.path, s.home + "/.ollama/models");
  EXPECT_NE(got.why.find("~/.ollama/models"), std::string::npos) << got.why;
}

TEST(OllamaStorePath, TheServicesStoreWhenTheUsersIsMissing) {
  const Stores s(false, true);
  const ScopedEnv env{{"OLLAMA_MODELS", nullptr}, {"HOME", s.home.c_str()}};
  const OllamaStore got = find_ollama_store(s.service);
  EXPECT_EQ(got.path, s.service);
  EXPECT_NE(got.why.find("user ollama"), std::string::npos) << got.why;
}

TEST(OllamaStorePath, TheUsersStoreWhenNeitherExists) {
  // Then the mount's error names the store a user would look for first.
  const Stores s(false, false);
  const ScopedEnv env{{"OLLAMA_MODELS", nullptr}, {"HOME", s.home.c_str()}};
  EXPECT_EQ(find_ollama_store(s.service).path, s.home + "/.ollama/models");
}

TEST(OllamaStorePath, TheServicesStoreWhenItsHomeIsClosedToTheUser) {
  // A 0700 /usr/share/ollama: the store cannot be examined, but it is the one meant (the mount
  // then says "Permission denied" of it). Root passes every permission check: a child process
  // drops to user nobody (65534) to look.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to look as another user";
  TempDir tmp;
  const fs::path closed = tmp.path() / "ollama";
  fs::create_directories(closed / ".ollama/models");
  ASSERT_EQ(::chmod(closed.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
  const std::string service = (closed / ".ollama/models").string();
  const std::string home = (tmp.path() / "nobody-home").string();
  const ScopedEnv env{{"OLLAMA_MODELS", nullptr}, {"HOME", home.c_str()}};
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child reports by its exit code only: 0 when the closed store was chosen.
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    ::_exit(find_ollama_store(service).path == service ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: not the closed store; 2: could not become nobody";
}

}  // namespace
}  // namespace ggufs::test
