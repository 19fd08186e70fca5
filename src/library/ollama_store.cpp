// Ollama's model store: manifests/<registry>/<namespace>/<model>/<tag> (OCI image manifests)
// naming blobs/sha256-<hex>. Layout and names as Ollama's server/modelpath.go and
// types/model/name.go write them.
#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "ggufs/byte_source.h"
#include "ggufs/error.h"
#include "ggufs/library_scan.h"
#include "ggufs/names.h"
#include "ggufs/platform.h"
#include "untrusted_json.h"

namespace ggufs {
namespace {

constexpr const char* kDefaultRegistry = "registry.ollama.ai";
constexpr const char* kDefaultNamespace = "library";
constexpr const char* kDefaultTag = "latest";
// A manifest is a few hundred bytes; a larger file is not one (and is not read into memory).
constexpr std::uint64_t kMaxManifestBytes = 1 << 20;

// The entries of folder `dir` not beginning with '.', sorted; nullopt when it cannot be read.
std::optional<std::vector<std::string>> list_folder(const std::string& dir) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return std::nullopt;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d.get())) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// `ollama list`'s name of manifests/<registry>/<ns>/<model>/<tag>.
std::string display_name(const std::string& registry, const std::string& ns,
                         const std::string& model, const std::string& tag) {
  std::string name;
  if (registry != kDefaultRegistry)
    name = registry + "/" + ns + "/";
  else if (ns != kDefaultNamespace)
    name = ns + "/";
  return name + model + ":" + tag;
}

// The manifest's text, opened as every file of a store is (a regular file, never blocking).
std::string read_manifest(const std::string& path) {
  const FileSource src(path);
  if (src.size() > kMaxManifestBytes) {
    throw ParseError(
        path, kMaxManifestBytes,
        fmt::format("not an Ollama manifest: larger than {} bytes", kMaxManifestBytes));
  }
  std::string text(static_cast<std::size_t>(src.size()), '\0');
  text.resize(src.read_at(0, text.data(), text.size()));
  return text;
}

}  // namespace

OllamaStore find_ollama_store(const std::string& system_store) {
  if (const char* dir = std::getenv("OLLAMA_MODELS"); dir && *dir) return {dir, "$OLLAMA_MODELS"};
  const char* home = std::getenv("HOME");
  std::string user = std::string(home ? home : "") + "/.ollama/models";
  std::error_code ec;
  if (!std::filesystem::exists(user, ec)) {
    // Not readable to this user (a 0700 home of ollama's): still the store meant, and the
    // mount's error then says "Permission denied" of it.
    ec.clear();
    const bool is_dir = std::filesystem::is_directory(system_store, ec);
    if (is_dir || ec == std::errc::permission_denied) {
      return {system_store,
              "the store of Ollama's Linux service, run as user ollama: $OLLAMA_MODELS is unset "
              "and ~/.ollama/models missing"};
    }
  }
  return {std::move(user), "~/.ollama/models: $OLLAMA_MODELS is unset"};
}

std::vector<LibraryEntry> find_ollama_models(const std::string& given,
                                             std::vector<std::string>& warnings) {
  // Absolute: the models are opened later, after the daemon has changed to "/".
  std::error_code ignored;  // then empty, and the folder cannot be read
  std::string store = std::filesystem::absolute(given, ignored).lexically_normal().string();
  while (store.size() > 1 && store.back() == '/') store.pop_back();
  const std::string root = store + "/manifests";
  const auto registries = list_folder(root);
  if (!registries) {
    throw IoError(fmt::format("{}: cannot read the Ollama store's manifests folder: {}", root,
                              std::strerror(errno)));
  }
  std::vector<LibraryEntry> entries;
  // One per library: manifests that name one projector blob share its parsed copy.
  const auto cache = std::make_shared<ProjectorCache>();
  // Each level is listed in turn; a level that cannot be read is skipped with a warning.
  auto list = [&](const std::string& dir) {
    auto names = list_folder(dir);
    if (!names) {
      warnings.push_back(fmt::format("{}: cannot read the folder: {} (skipped)", printable(dir),
                                     std::strerror(errno)));
    }
    return names.value_or(std::vector<std::string>{});
  };
  for (const std::string& registry : *registries) {
    for (const std::string& ns : list(root + "/" + registry)) {
      for (const std::string& model : list(root + "/" + registry + "/" + ns)) {
        const std::string model_dir = root + "/" + registry + "/" + ns + "/" + model;
        for (const std::string& tag : list(model_dir)) {
          LibraryEntry e;
          e.path = model_dir + "/" + tag;
          struct stat st {};
          if (::stat(e.path.c_str(), &st) == 0) {
            if (!S_ISREG(st.st_mode)) continue;
            e.mtime = modification_time(st);
          }
          e.name = display_name(registry, ns, model, tag);
          e.open = [store, manifest = e.path, cache] {
            return open_ollama_manifest(store, manifest, cache.get());
          };
          entries.push_back(std::move(e));
        }
      }
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const LibraryEntry& a, const LibraryEntry& b) { return a.name < b.name; });
  return entries;
}

std::string ollama_manifest_path(const std::string& store, const std::string& reference) {
  std::string name = reference;
  std::string tag = kDefaultTag;
  const auto colon = name.rfind(':');
  if (colon != std::string::npos && name.find('/', colon) == std::string::npos) {
    tag = name.substr(colon + 1);
    name.resize(colon);
  }
  std::vector<std::string> parts;
  std::stringstream in(name);
  for (std::string part; std::getline(in, part, '/');) parts.push_back(part);
  if (!name.empty() && name.back() == '/') parts.push_back("");
  if (parts.empty() || parts.size() > 3) {
    throw std::invalid_argument(fmt::format(
        "ollama:{}: not a model name (MODEL, NAMESPACE/MODEL or REGISTRY/NAMESPACE/MODEL, then "
        "an optional :TAG)",
        printable(reference)));
  }
  if (parts.size() < 2) parts.insert(parts.begin(), kDefaultNamespace);
  if (parts.size() < 3) parts.insert(parts.begin(), kDefaultRegistry);
  parts.push_back(tag);
  std::string path = store + "/manifests";
  for (const std::string& p : parts) {
    if (p.empty() || p == "." || p == "..") {
      throw std::invalid_argument(fmt::format(
          "ollama:{}: not a model name (an empty part, \".\" or \"..\")", printable(reference)));
    }
    path += "/" + p;
  }
  return path;
}

namespace {

// A layer's digest and size; ParseError naming `manifest` where the digest is not
// sha256:<64 hex digits>.
OllamaModelLayer layer_of(const nlohmann::json& layer, const std::string& manifest,
                          std::string_view what) {
  const nlohmann::json digest = layer.value("digest", nlohmann::json());
  const std::string d = digest.is_string() ? digest.get<std::string>() : "";
  if (d.rfind("sha256:", 0) != 0 || !is_sha256_hex(std::string_view(d).substr(7))) {
    // The parser accepts only valid UTF-8, so dump() cannot throw; `replace` is a second guard.
    throw ParseError(manifest, 0,
                     fmt::format("the {} layer's digest is not sha256:<64 hex digits>: {}", what,
                                 quote_json(digest.dump(
                                     -1, ' ', false, nlohmann::json::error_handler_t::replace))));
  }
  OllamaModelLayer out;
  out.digest_hex = d.substr(7);
  const nlohmann::json size = layer.value("size", nlohmann::json());
  if (size.is_number_unsigned()) out.size = size.get<std::uint64_t>();
  return out;
}

// The blob of `layer`, checked to exist and to have the layer's size; IoError otherwise.
std::string blob_of(const std::string& store, const std::string& manifest,
                    const OllamaModelLayer& layer, std::string_view what) {
  const std::string blob = store + "/blobs/sha256-" + layer.digest_hex;
  struct stat st {};
  if (::stat(blob.c_str(), &st) != 0) {
    throw IoError(fmt::format("{}: cannot open the {} blob that {} names: {}", blob, what, manifest,
                              std::strerror(errno)));
  }
  if (layer.size && *layer.size != std::uint64_t(st.st_size)) {
    throw IoError(
        fmt::format("{}: the {} blob is {} bytes, but {} says {} (an incomplete "
                    "download?)",
                    blob, what, st.st_size, manifest, *layer.size));
  }
  return blob;
}

}  // namespace

OllamaModelLayer parse_ollama_manifest(std::string_view text, const std::string& manifest) {
  const nlohmann::json doc = parse_untrusted_json(text, manifest, "not an Ollama manifest");
  std::optional<OllamaModelLayer> model;
  std::vector<OllamaModelLayer> projectors;
  if (doc.is_object() && doc.contains("layers") && doc["layers"].is_array()) {
    for (const nlohmann::json& l : doc["layers"]) {
      if (!l.is_object()) continue;
      const nlohmann::json type = l.value("mediaType", nlohmann::json());
      if (!model && type == kOllamaModelMediaType) model = layer_of(l, manifest, "model");
      if (type == kOllamaProjectorMediaType) {
        projectors.push_back(layer_of(l, manifest, "projector"));
      }
    }
  }
  if (!model) {
    throw ParseError(
        manifest, 0,
        fmt::format("the manifest has no layer of media type {}", kOllamaModelMediaType));
  }
  model->projectors = std::move(projectors);
  return *model;
}

Model open_ollama_manifest(const std::string& store, const std::string& manifest,
                           ProjectorCache* projectors) {
  const OllamaModelLayer layer = parse_ollama_manifest(read_manifest(manifest), manifest);
  const std::string blob = blob_of(store, manifest, layer, "model");
  std::string projector, unpaired;
  if (layer.projectors.size() > 1) {
    unpaired = fmt::format("{} has {} projector layers: which one is meant is not known", manifest,
                           layer.projectors.size());
  } else if (!layer.projectors.empty()) {
    try {
      projector = blob_of(store, manifest, layer.projectors.front(), "projector");
    } catch (const IoError& e) {
      unpaired = e.what();
    }
  }
  return open_paired(blob, projector, unpaired, projectors);
}

}  // namespace ggufs
