#include "ggufs/library.h"

#include <fmt/format.h>

#include <exception>
#include <unordered_set>

#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

constexpr unsigned kEntryShift = 32;
constexpr Ino kLocalMask = (Ino{1} << kEntryShift) - 1;

// The folder names of `entries`: escaped, cut to NAME_MAX, and made unique with "~N" suffixes.
// Every entry whose name is free keeps it; only the later ones of a clash get suffixes, so
// adding a model never renames another one that did not clash.
std::vector<std::string> unique_folder_names(const std::vector<LibraryEntry>& entries) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    // "~N" needs room: a name longer than NAME_MAX less 12 bytes is cut (to 200 bytes and
    // "%~INDEX"), so that unique_names' suffix still fits.
    names.push_back(key_file_name(entries[i].name, i, kMaxFileNameBytes - 12));
  }
  return unique_names(std::move(names));
}

}  // namespace

Library::Library(std::unique_ptr<ServedModel> model) : single_(std::move(model)) {}

Library::Library(std::vector<LibraryEntry> entries, const TreeOptions& options, LibraryLog log,
                 const struct timespec& mtime)
    : options_(options), log_(std::move(log)), mtime_(mtime) {
  root_.kind = NodeKind::kDirectory;
  std::vector<std::string> names = unique_folder_names(entries);
  for (std::size_t k = 0; k < entries.size(); ++k) {
    auto slot = std::make_unique<Slot>();
    slot->entry = std::move(entries[k]);
    slot->folder.name = std::move(names[k]);
    slot->folder.kind = NodeKind::kDirectory;
    const Ino folder = ((Ino{k} + 1) << kEntryShift) | kRootIno;
    root_.children.push_back(folder);
    by_name_.emplace(slot->folder.name, k);
    slots_.push_back(std::move(slot));
  }
}

const ServedModel& Library::open_slot(Slot& slot) const {
  if (const ServedModel* m = slot.ready.load(std::memory_order_acquire)) return *m;
  const std::lock_guard lock(slot.mu);
  if (const ServedModel* m = slot.ready.load(std::memory_order_acquire)) return *m;
  const LibraryEntry& e = slot.entry;
  try {
    slot.model = std::make_unique<const ServedModel>(e.open(), options_);
    if (log_) {
      for (const std::string& w : slot.model->warnings) log_(fmt::format("warning: {}", w));
    }
  } catch (const std::exception& ex) {
    // Any failure of one model stays in its folder: the mount and the other models go on.
    std::string message =
        not_enough_memory(ex, "lay out this model").value_or(printable(ex.what()));
    if (log_) log_(fmt::format("{}: {}", slot.folder.name, message));
    slot.model = std::make_unique<const ServedModel>(std::move(message), e.mtime);
  }
  slot.ready.store(slot.model.get(), std::memory_order_release);
  return *slot.model;
}

Library::Found Library::find(Ino ino, bool open) const {
  if (single_) return {single_->tree.node(ino), single_.get(), 0, single_->mtime};
  if (ino == kRootIno) return {&root_, nullptr, 0, mtime_};
  const Ino k = (ino >> kEntryShift) - 1;
  const Ino local = ino & kLocalMask;
  if ((ino >> kEntryShift) == 0 || k >= slots_.size()) return {};
  Slot& slot = *slots_[k];
  const Ino base = (k + 1) << kEntryShift;
  if (local == kRootIno && !open) return {&slot.folder, nullptr, base, slot.entry.mtime};
  const ServedModel& m = open_slot(slot);
  return {m.tree.node(local), &m, base, m.mtime};
}

Ino Library::lookup(Ino parent, std::string_view name) const {
  if (!single_ && parent == kRootIno) {
    const auto it = by_name_.find(std::string(name));
    return it == by_name_.end() ? 0 : ((Ino{it->second} + 1) << kEntryShift) | kRootIno;
  }
  const Found f = find(parent);
  if (!f.model) return 0;
  const Ino local = f.model->tree.lookup(parent & kLocalMask, name);
  return local ? f.global(local) : 0;
}

Ino Library::parent(Ino ino) const {
  if (single_) {
    const Node* n = single_->tree.node(ino);
    return n ? n->parent : kRootIno;
  }
  const Ino local = ino & kLocalMask;
  if (ino == kRootIno || local == kRootIno) return kRootIno;
  const Found f = find(ino);
  return f.node ? f.global(f.node->parent) : kRootIno;
}

std::string Library::path_of(Ino ino) const {
  std::vector<std::string_view> names;  // leaf first
  for (Ino i = ino; i != kRootIno;) {
    const Node* n = find(i, /*open=*/false).node;
    if (!n) break;
    names.push_back(n->name);
    i = parent(i);
  }
  std::string path;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (!path.empty()) path += '/';
    path += *it;
  }
  return path;
}

std::size_t Library::node_count() const {
  if (single_) return single_->tree.count();
  std::size_t n = 1 + slots_.size();
  for (const auto& slot : slots_) {
    if (const ServedModel* m = slot->ready.load(std::memory_order_acquire))
      n += m->tree.count() - 1;
  }
  return n;
}

std::vector<std::string> Library::folder_names() const {
  std::vector<std::string> out;
  for (const auto& slot : slots_) out.push_back(slot->folder.name);
  return out;
}

}  // namespace ggufs
