#include "ggufs/open.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <utility>

#include "ggufs/error.h"
#include "ggufs/names.h"
#include "ggufs/platform.h"
#include "ggufs/xattrs.h"

namespace ggufs {

ViewData parse_float_dtype(std::string_view option, std::string_view value) {
  if (value == "f32") return ViewData::kFloat32;
  if (value == "f16") return ViewData::kFloat16;
  if (value == "bf16") return ViewData::kBFloat16;
  throw UsageError(fmt::format("{}={}: must be f32, f16 or bf16", option, printable(value)));
}

std::uint64_t parse_shard_size(std::string_view t) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  const std::string_view unit(end, t.data() + t.size());
  std::uint64_t scale = 0;
  for (const auto& [name, s] : {std::pair{"", 1ull},
                                {"KB", 1'000ull},
                                {"MB", 1'000'000ull},
                                {"GB", 1'000'000'000ull},
                                {"TB", 1'000'000'000'000ull}}) {
    if (unit == name) scale = s;
  }
  constexpr std::uint64_t kMax = std::uint64_t{1} << 50;
  if (ec != std::errc() || end == t.data() || scale == 0 || n == 0 || n > kMax / scale) {
    throw UsageError(fmt::format(
        "hf_max_shard_size={}: must be a positive number of bytes, KB, MB, GB or TB (as 5GB)",
        printable(t)));
  }
  return n * scale;
}

std::uint32_t parse_mlx_requantize(std::uint64_t bits) {
  if (bits != 0 && bits != 4 && bits != 6 && bits != 8) {
    throw UsageError(fmt::format("mlx_requantize={}: must be 8, 6 or 4 (bits)", bits));
  }
  return static_cast<std::uint32_t>(bits);
}

std::optional<std::string> library_folder(const std::string& source, OllamaStore* store) {
  if (source == kOllamaScheme) {
    OllamaStore chosen = find_ollama_store();
    std::string path = chosen.path;
    if (store) *store = std::move(chosen);
    return path;
  }
  struct stat st {};
  if (!is_url(source) && !is_ollama(source) && ::stat(source.c_str(), &st) == 0 &&
      S_ISDIR(st.st_mode)) {
    return source;
  }
  return std::nullopt;
}

std::vector<LibraryEntry> find_library_models(const std::string& folder, const std::string& source,
                                              std::vector<std::string>& warnings) {
  return source == kOllamaScheme ? find_ollama_models(folder, warnings)
                                 : find_gguf_models(folder, warnings);
}

Model open_named_model(const std::string& source, const RemoteOptions& remote,
                       const ShardProgress& progress, OllamaStore* store) {
  if (is_ollama(source)) {
    OllamaStore chosen = find_ollama_store();
    if (store) *store = chosen;
    std::string manifest;
    try {
      manifest = ollama_manifest_path(chosen.path, source.substr(kOllamaScheme.size()));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (::access(manifest.c_str(), F_OK) != 0) {
      throw IoError(fmt::format("{}: no such model in the Ollama store {} (no manifest {})",
                                printable(source), printable(chosen.path), printable(manifest)));
    }
    return open_ollama_manifest(chosen.path, manifest);
  }
  return open_model(source, progress,
                    [&remote](const std::string& p) { return open_source(p, remote); });
}

std::unique_ptr<Library> open_served(const std::string& source, const OpenOptions& options,
                                     std::vector<std::string>& warnings, LibraryLog log,
                                     std::vector<KeyValue>* metadata) {
  if (const std::optional<std::string> folder = library_folder(source)) {
    if (!options.mmproj.empty()) {
      throw UsageError("--mmproj pairs one model file; a library pairs its own");
    }
    std::vector<LibraryEntry> entries = find_library_models(*folder, source, warnings);
    // Each opened model keeps its files open: allow as many as the system lets us.
    struct rlimit files {};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &files);
    }
    struct stat st {};
    ::stat(folder->c_str(), &st);
    return std::make_unique<Library>(std::move(entries), options.tree, std::move(log),
                                     modification_time(st));
  }
  Model model = open_named_model(source, options.remote);
  if (!options.mmproj.empty()) {
    attach_projector(model, open_named_model(options.mmproj, options.remote));
  }
  if (metadata) *metadata = model.file.kv;
  auto served = std::make_unique<ServedModel>(std::move(model), options.tree);
  warnings.insert(warnings.end(), served->warnings.begin(), served->warnings.end());
  return std::make_unique<Library>(std::move(served));
}

std::vector<XAttr> node_xattrs(const Library::Found& f) {
  const Node& n = *f.node;
  std::vector<XAttr> out(n.xattrs.begin(), n.xattrs.end());
  if (!n.what.empty()) out.emplace_back("user.ggufs.view", n.what);
  if (n.kind != NodeKind::kRaw && n.kind != NodeKind::kDecoded) return out;
  const TensorInfo& t = f.model->model.file.tensors[n.tensor];
  return tensor_xattrs(t, f.model->file_paths.at(t.shard));
}

}  // namespace ggufs
