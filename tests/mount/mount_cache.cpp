// The chunk cache's default folder through the real daemon, without HOME or XDG_CACHE_HOME: a
// folder of the user's own that ggufs makes 0700, and one that another user made first refused
// at mount with one line and exit 2 (a cache folder ggufs will not use, as for any other).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "http_server.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

namespace fs = std::filesystem;

// The command prefix that leaves ggufs no HOME nor XDG_CACHE_HOME, and `tmp` as TMPDIR.
std::string without_home(const fs::path& tmp) {
  return "env -u HOME -u XDG_CACHE_HOME TMPDIR=" + quote(tmp);
}

TEST(MountCache, WithoutHomeTheCacheIsAFolderOfTheUsersOwn) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, tmp;
  write_arch_model(served.path() / "m.gguf", "llama");
  Nginx server(served.path());
  Mount m(server.url("m.gguf"), "", without_home(tmp.path()));
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(read_text(m / "raw/t.weight"), std::string(16, '\x07'));
  const fs::path made = tmp.path() / ("ggufs-cache-" + std::to_string(::geteuid()));
  struct stat st {};
  ASSERT_EQ(::lstat(made.c_str(), &st), 0) << made;
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_TRUE(fs::exists(made / "CACHEDIR.TAG"));
}

TEST(MountCache, ADefaultCacheFolderOfAnotherUserIsRefusedWithOneLine) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a folder to another user";
  TempDir served, tmp;
  write_arch_model(served.path() / "m.gguf", "llama");
  Nginx server(served.path());
  const fs::path planted = tmp.path() / ("ggufs-cache-" + std::to_string(::geteuid()));
  fs::create_directory(planted);
  ASSERT_EQ(::chown(planted.c_str(), 65534, 65534), 0);
  Mount m(server.url("m.gguf"), "", without_home(tmp.path()));
  EXPECT_FALSE(m.mounted());
  EXPECT_EQ(m.exit_code(), 2) << m.output();
  EXPECT_EQ(std::count(m.output().begin(), m.output().end(), '\n'), 1) << m.output();
  EXPECT_NE(m.output().find(planted.string()), std::string::npos) << m.output();
  EXPECT_NE(m.output().find("owned by user 65534"), std::string::npos) << m.output();
  EXPECT_TRUE(fs::is_empty(planted));
}

}  // namespace
}  // namespace ggufs::test
