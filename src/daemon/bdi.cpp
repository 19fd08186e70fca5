#include "bdi.h"

#include <fstream>
#include <sstream>

namespace ggufs {

std::optional<std::string> mount_device(const std::string& mountpoint) {
  // mountinfo fields: id, parent id, MAJOR:MINOR, root, mount point, ... ("\040" escapes spaces).
  std::string escaped;
  for (char c : mountpoint) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
      const char oct[] = {'\\', static_cast<char>('0' + ((c >> 6) & 7)),
                          static_cast<char>('0' + ((c >> 3) & 7)), static_cast<char>('0' + (c & 7)),
                          0};
      escaped += oct;
    } else {
      escaped += c;
    }
  }
  std::ifstream in("/proc/self/mountinfo");
  std::optional<std::string> found;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    if (fields >> id >> parent >> dev >> root >> point && point == escaped)
      found = dev;  // last wins
  }
  return found;
}

bool set_read_ahead_kb(const std::string& mountpoint, unsigned kb) {
  const auto dev = mount_device(mountpoint);
  if (!dev) return false;
  std::ofstream out("/sys/class/bdi/" + *dev + "/read_ahead_kb");
  out << kb << '\n';
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace ggufs
