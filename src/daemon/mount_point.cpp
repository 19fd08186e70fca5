#include "mount_point.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace ggufs {

MountPoint::MountPoint(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) != 0 && errno == ENOENT) {
    created_ = ::mkdir(path_.c_str(), 0755) == 0;
  }
}

MountPoint::~MountPoint() {
  if (created_) ::rmdir(path_.c_str());  // fails harmlessly if something was put there
}

}  // namespace ggufs
