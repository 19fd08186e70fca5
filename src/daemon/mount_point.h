// The mount point directory: created when missing (as mount-zip and rclone do) and removed again
// at unmount if ggufs created it.
#pragma once

#include <string>

namespace ggufs {

/// Creates `path` (mode 0755, one level) if it does not exist; removes it on destruction if it
/// was created here and is empty. Any other state of `path` is left to the mount to judge.
class MountPoint {
 public:
  explicit MountPoint(std::string path);
  ~MountPoint();
  MountPoint(const MountPoint&) = delete;
  MountPoint& operator=(const MountPoint&) = delete;

 private:
  std::string path_;
  bool created_ = false;
};

}  // namespace ggufs
