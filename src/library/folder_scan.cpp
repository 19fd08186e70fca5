// find_gguf_models: a folder of GGUF files, searched recursively.
#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <system_error>
#include <utility>

#include "ggufs/error.h"
#include "ggufs/library_scan.h"
#include "ggufs/names.h"
#include "ggufs/platform.h"

namespace ggufs {
namespace {

// Deeper folders are not searched: a bound on the work a hostile tree of links can cause.
constexpr int kMaxDepth = 32;

struct Found {
  std::string path;
  struct stat st {};
  bool examined = false;  // stat succeeded
};

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

class Walker {
 public:
  explicit Walker(std::vector<std::string>& warnings) : warnings_(warnings) {}

  // Adds the *.gguf files under `dir`; false when `dir` cannot be opened.
  bool walk(const std::string& dir, int depth) {
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
    if (!d) return false;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d.get())) {
      // A plain file not named *.gguf needs no stat (a Hugging Face cache's blobs/, a folder of
      // other files): only folders, links and *.gguf names are examined.
      if (e->d_name[0] == '.' ||
          (e->d_type == DT_REG && !std::string_view(e->d_name).ends_with(".gguf")))
        continue;
      names.emplace_back(e->d_name);
    }
    for (const std::string& name : names) {
      const std::string path = dir + "/" + name;
      struct stat st {};
      const bool ok = ::stat(path.c_str(), &st) == 0;  // follows links
      if (ok && S_ISDIR(st.st_mode)) {
        if (depth >= kMaxDepth || !visited_.insert({st.st_dev, st.st_ino}).second) continue;
        if (!walk(path, depth + 1)) {
          warnings_.push_back(fmt::format("{}: cannot read the folder: {} (skipped)",
                                          printable(path), std::strerror(errno)));
        }
      } else if (name.ends_with(".gguf") && (!ok || S_ISREG(st.st_mode))) {
        files_.push_back({path, st, ok});
      }
    }
    return true;
  }

  std::vector<Found>& files() { return files_; }
  void mark_visited(const struct stat& st) { visited_.insert({st.st_dev, st.st_ino}); }

 private:
  std::vector<std::string>& warnings_;
  std::set<std::pair<dev_t, ino_t>> visited_;
  std::vector<Found> files_;
};

// The projectors of each folder (is_projector_name), and every entry's pairing from them.
void pair_projectors(std::vector<LibraryEntry>& entries) {
  const auto folder_of = [](const std::string& path) {
    return std::filesystem::path(path).parent_path().string();
  };
  std::map<std::string, std::vector<std::string>> projectors;  // folder -> paths, sorted
  // One per library: each projector parsed once, whichever of its models opens first.
  const auto cache = std::make_shared<ProjectorCache>();
  for (const LibraryEntry& e : entries) {
    if (is_projector_name(e.path)) projectors[folder_of(e.path)].push_back(e.path);
  }
  for (LibraryEntry& e : entries) {
    const auto it = projectors.find(folder_of(e.path));
    if (it == projectors.end() || is_projector_name(e.path)) continue;
    const std::vector<std::string>& beside = it->second;
    if (beside.size() == 1) {
      e.projector = beside.front();
    } else {
      std::string names;
      for (std::size_t i = 0; i < beside.size() && i < 4; ++i) {
        names += fmt::format("{}{}", i ? ", " : "", printable(base_name(beside[i])));
      }
      e.unpaired = fmt::format("{} projectors beside it ({}{}): which one is meant is not known",
                               beside.size(), names, beside.size() > 4 ? ", ..." : "");
    }
    e.open = [p = e.path, proj = e.projector, why = e.unpaired, cache] {
      return open_paired(p, proj, why, cache.get());
    };
  }
}

}  // namespace

bool is_projector_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  std::string name(path.substr(slash == std::string_view::npos ? 0 : slash + 1));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.find("mmproj") != std::string::npos;
}

std::shared_ptr<const Model> ProjectorCache::open(const std::string& path) {
  std::shared_ptr<Slot> slot;
  {
    const std::lock_guard lock(mu_);
    std::shared_ptr<Slot>& s = slots_[path];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  // Only the slot is locked while the projector is parsed: models of other projectors open
  // meanwhile.
  const std::lock_guard lock(slot->mu);
  if (!slot->model && !slot->error) {
    try {
      slot->model = std::make_shared<const Model>(open_model(path));
    } catch (const ParseError&) {
      slot->error = std::current_exception();
    } catch (const IoError&) {
      slot->error = std::current_exception();
    }
  }
  if (slot->error) std::rethrow_exception(slot->error);
  return slot->model;
}

std::size_t ProjectorCache::size() const {
  const std::lock_guard lock(mu_);
  return slots_.size();
}

Model open_paired(const std::string& path, const std::string& projector,
                  const std::string& unpaired, ProjectorCache* projectors) {
  Model model = open_model(path);
  model.unpaired = unpaired;
  if (projector.empty()) return model;
  try {
    if (projectors) {
      attach_projector(model, projectors->open(projector));
    } else {
      attach_projector(model, open_model(projector));
    }
  } catch (const ParseError& e) {
    model.unpaired = e.line();
  } catch (const IoError& e) {
    model.unpaired = printable(e.what());
  }
  return model;
}

std::vector<LibraryEntry> find_gguf_models(const std::string& dir,
                                           std::vector<std::string>& warnings) {
  // Absolute: the models are opened later, after the daemon has changed to "/".
  std::error_code ignored;  // then empty, and the folder cannot be read
  std::string root = std::filesystem::absolute(dir, ignored).lexically_normal().string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  Walker walker(warnings);
  struct stat st {};
  if (::stat(root.c_str(), &st) == 0) walker.mark_visited(st);
  if (!walker.walk(root, 0)) {
    throw IoError(fmt::format("{}: cannot read the folder: {}", root, std::strerror(errno)));
  }
  std::vector<Found>& files = walker.files();
  std::sort(files.begin(), files.end(),
            [](const Found& a, const Found& b) { return a.path < b.path; });

  std::vector<LibraryEntry> entries;
  std::set<std::pair<dev_t, ino_t>> seen_files;
  std::set<std::pair<std::string, std::uint32_t>> split_models;  // prefix, shard count
  for (const Found& f : files) {
    if (f.examined && !seen_files.insert({f.st.st_dev, f.st.st_ino}).second) continue;
    LibraryEntry e;
    e.path = f.path;
    e.mtime = modification_time(f.st);
    if (const std::optional<SplitName> split = parse_split_name(f.path)) {
      const auto key = std::make_pair(split->prefix, split->count);
      // Sorted by path, a model's shards come in shard order: the first one found is listed,
      // and opens the model (open_model finds the others next to it).
      if (!split_models.insert(key).second) continue;
      e.name = base_name(split->prefix);
    } else {
      e.name = base_name(f.path);
      e.name.resize(e.name.size() - 5);  // ".gguf"
    }
    e.open = [p = f.path] { return open_model(p); };
    entries.push_back(std::move(e));
  }
  pair_projectors(entries);
  return entries;
}

}  // namespace ggufs
