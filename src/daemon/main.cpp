// ggufs: mount a GGUF model file as a read-only tree. Parses and validates the whole file first,
// then mounts, goes to the background (unless -f) and serves requests until unmounted.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "background.h"
#include "bdi.h"
#include "fuse_adapter.h"
#include "ggufs/byte_source.h"
#include "ggufs/content.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/http_source.h"
#include "ggufs/info.h"
#include "ggufs/library.h"
#include "ggufs/library_scan.h"
#include "ggufs/model.h"
#include "ggufs/names.h"
#include "ggufs/open.h"
#include "ggufs/platform.h"
#include "ggufs/render.h"
#include "ggufs/tree.h"
#include "ggufs_version.h"
#include "log.h"
#include "mount_point.h"
#include "options.h"
#include "passthrough.h"
#include "progress.h"
#include "readiness.h"
#include "remote_reads.h"
#include "stale_mount.h"

namespace {

using namespace ggufs;

// The fsname shown in /proc/mounts; ',' and '\' must be escaped for libfuse's option parser.
std::string fsname_option(const std::string& path) {
  std::string out = "-ofsname=";
  for (char ch : path) {
    if (ch == ',' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

// Runs `open` (which opens FILE, and the other shards of a split model, through the opener it
// is given); on failure prints why (file, byte offset, problem) and returns the exit code, else
// kExitOk. On a terminal, says which shard it reads.
int open_and_parse(const std::string& what, Model& model,
                   const std::function<Model(const ShardProgress&)>& open) {
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  bool progressed = false;
  const auto progress = [&](std::uint32_t i, std::uint32_t n, const std::string& p) {
    if (!tty || n <= 1) return;
    fmt::print(stderr, "\rggufs: reading shard {} of {}: {}\x1b[K", i, n,
               printable(is_url(p) ? display_url(p) : p));
    progressed = true;
  };
  try {
    const SlowStep step(fmt::format("reading {}", what));
    model = open(progress);
    if (progressed) fmt::print(stderr, "\rggufs: read {} shards\x1b[K\n", model.sources.size());
    return kExitOk;
  } catch (const IoError& e) {
    if (progressed) fmt::print(stderr, "\n");
    fmt::print(stderr, "ggufs: {}\n", printable(e.what()));
    return kExitCannotRead;
  } catch (const ParseError& e) {
    if (progressed) fmt::print(stderr, "\n");
    fmt::print(stderr, "ggufs: {}\n", e.line());
    return kExitInvalidGguf;
  }
}

// Logs Ollama's store `store` (-v) with why it is the one.
void log_ollama_store(const OllamaStore& store) {
  log_message(LogLevel::kInfo,
              fmt::format("Ollama's store {} ({})", printable(store.path), store.why));
}

// Opens FILE: a GGUF file or the URL of one, or "ollama:NAME[:TAG]" (open_named_model;
// `ollama_store`, if given, receives the store it was looked up in); prints why not and returns
// the exit code, else kExitOk.
int open_model_named(const std::string& path, const RemoteOptions& remote, Model& model,
                     OllamaStore* ollama_store = nullptr) {
  OllamaStore store;
  try {
    const int rc =
        open_and_parse(is_ollama(path) || !is_url(path) ? printable(path) : display_url(path),
                       model, [&](const ShardProgress& progress) {
                         return open_named_model(path, remote, progress, &store);
                       });
    if (!store.path.empty()) log_ollama_store(store);
    if (ollama_store) *ollama_store = store;
    return rc;
  } catch (const UsageError& e) {
    fmt::print(stderr, "ggufs: {}\n", e.what());
    return kExitUsage;
  }
}

// Opens the vision projector at `path` (--mmproj) and pairs it with `model`; prints why not and
// returns the exit code (a file that is no projector: kExitInvalidGguf), else kExitOk.
int open_projector(const std::string& path, const RemoteOptions& remote, Model& model) {
  Model projector;
  if (const int rc = open_model_named(path, remote, projector); rc != kExitOk) return rc;
  try {
    attach_projector(model, std::move(projector));
    return kExitOk;
  } catch (const ParseError& e) {
    fmt::print(stderr, "ggufs: {}\n", e.line());
    return kExitInvalidGguf;
  }
}

// How remote models are read, from -o cache_dir, cache_size_mib and token_file (or the
// GGUFS_HTTP_TOKEN variable); nullopt (after saying why) when the token file cannot be read.
std::optional<RemoteOptions> remote_options(const Config& conf) {
  RemoteOptions r;
  if (conf.cache_dir) r.cache_dir = conf.cache_dir;
  if (conf.ca_file) r.ca_file = conf.ca_file;
  r.cache_limit_bytes = std::uint64_t{conf.cache_size_mib} << 20;
  r.read_timeout_s = conf.read_timeout;
  r.s3.path_style = conf.s3_path_style != 0;
  r.s3.virtual_host = conf.s3_virtual_host != 0;
  r.s3.anonymous = conf.s3_anonymous != 0;
  if (conf.token_file) {
    // Its first line; a regular file of at most 64 KiB (a FIFO there must not hang the mount).
    try {
      const std::string text = read_regular_file(conf.token_file, 64 * 1024);
      r.bearer_token = text.substr(0, text.find('\n'));
    } catch (const IoError& e) {
      fmt::print(stderr, "ggufs: cannot read the token file: {}\n", e.what());
      return std::nullopt;
    }
    if (r.bearer_token.empty()) {
      fmt::print(stderr, "ggufs: the token file {} is empty\n", printable(conf.token_file));
      return std::nullopt;
    }
    while (!r.bearer_token.empty() &&
           std::isspace(static_cast<unsigned char>(r.bearer_token.back()))) {
      r.bearer_token.pop_back();
    }
  } else if (const char* token = std::getenv("GGUFS_HTTP_TOKEN")) {
    r.bearer_token = token;
  }
  return r;
}

// Threads that serve reads of remote models (remote_reads.h): as many reads may wait for
// servers at once, beyond them reads queue (within their time bound).
constexpr unsigned kRemoteReadThreads = 16;

// Mounts and serves until unmounted. `remote_read_timeout_s`: the time bound of reads of a
// remote model (0: a local one).
int serve(fuse_args& args, const fuse_cmdline_opts& opts, const Config& conf, MountContext& mctx,
          unsigned remote_read_timeout_s) {
  fuse_session* se = fuse_session_new(&args, &fuse_operations(), sizeof(fuse_lowlevel_ops),
                                      const_cast<MountContext*>(&mctx));
  if (!se) return kExitMountFailed;  // libfuse printed why (e.g. an unknown -o option)
  passthrough_session(se);
  int rc = kExitMountFailed;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, opts.mountpoint) == 0) {
      // Detach, but let the command return only when the mount answers (the kernel has our
      // INIT reply) and its read-ahead is raised: a user may unmount right away, and the
      // read-ahead must be set after INIT, which resets it (best effort, needs root; without it
      // sequential reads arrive as 128 KiB requests). A child process waits for the mount: a
      // thread of ours would hang for ever in its own FUSE request if we were killed meanwhile.
      Background bg = Background::detach(opts.foreground);
      if (!opts.foreground) log_setup(/*to_syslog=*/true, conf.quiet, conf.verbose, conf.redact);
      const pid_t daemon = ::getpid();
      const pid_t tuner = ::fork();  // no threads yet: fork is safe
      if (tuner == 0) {
        // Without /dev/fuse: if the daemon dies, the connection must die with it.
        ::close(fuse_session_fd(se));
        // The work is done by a grandchild, adopted by init: the daemon reaps this child at
        // once and keeps no zombie for the life of the mount.
        if (const pid_t worker = ::fork(); worker != 0) ::_exit(worker < 0 ? 1 : 0);
        struct stat st {};
        if (::stat(opts.mountpoint, &st) != 0) ::_exit(1);
        const unsigned read_ahead_kb = conf.read_ahead_kb == kReadAheadAuto
                                           ? read_ahead_kb_for(conf.max_read)
                                           : conf.read_ahead_kb;
        if (read_ahead_kb) set_read_ahead_kb(opts.mountpoint, read_ahead_kb);
        notify_ready(conf.notify_pipe, daemon);  // first: the command returns after it is said
        bg.ready();
        ::_exit(0);
      }
      if (tuner > 0) ::waitpid(tuner, nullptr, 0);  // exits at once (see above)
      if (tuner < 0) {  // cannot wait for the mount: report it usable now
        notify_ready(conf.notify_pipe, daemon);
        bg.ready();
      }
      bg.drop();
      // Threads only now: the daemon forked above.
      std::optional<RemoteReadPool> remote_reads;
      std::string no_pool;  // why the remote-read pool could not start
      if (remote_read_timeout_s > 0) {
        try {
          remote_reads.emplace(kRemoteReadThreads, std::chrono::seconds(remote_read_timeout_s));
          mctx.remote_reads = &*remote_reads;
          if (remote_reads->size() < kRemoteReadThreads) {
            log_message(LogLevel::kWarning,
                        fmt::format("warning: {} of {} remote-read threads could start",
                                    remote_reads->size(), kRemoteReadThreads));
          }
        } catch (const std::exception& e) {
          no_pool = not_enough_memory(e, "start the remote-read threads").value_or(e.what());
        }
      }
      // A URL without its query string: it may hold a signature.
      const std::string file = is_url(conf.file) ? display_url(conf.file) : printable(conf.file);
      int loop = -1;
      if (!no_pool.empty()) {
        // Reads of a remote model are bounded in time only through the pool: none is served
        // without it.
        log_message(LogLevel::kError, fmt::format("cannot serve {}: {}", file, no_pool));
      } else {
        log_message(LogLevel::kInfo, fmt::format("mounted {} at {}", file, opts.mountpoint));
        if (opts.singlethread) {
          loop = fuse_session_loop(se);
        } else {
          fuse_loop_config* cfg = fuse_loop_cfg_create();
          fuse_loop_cfg_set_clone_fd(cfg, opts.clone_fd);
          fuse_loop_cfg_set_max_threads(cfg, opts.max_threads);
          loop = fuse_session_loop_mt(se, cfg);
          fuse_loop_cfg_destroy(cfg);
        }
      }
      // libfuse returns the signal number after SIGINT/SIGTERM/SIGHUP: a clean unmount too.
      rc = loop >= 0 ? kExitOk : kExitMountFailed;
      remote_reads.reset();  // its last replies go out while /dev/fuse is still open
      fuse_session_unmount(se);
      log_message(LogLevel::kInfo, fmt::format("unmounted {}", opts.mountpoint));
    } else {
      notify_failed(conf.notify_pipe, kExitMountFailed);
    }
    fuse_remove_signal_handlers(se);
  }
  passthrough_session(nullptr);
  fuse_session_destroy(se);
  return rc;
}

// libfuse's own messages (its -d request log, mount errors) go through printable() too, so no
// text that reaches the terminal can carry control sequences. Keeps errno: libfuse logs an
// error before it returns, and its caller reads errno then (fuse_passthrough_open, in
// passthrough.cpp).
void log_escaped(enum fuse_log_level level, const char* fmt, va_list ap) {
  struct KeepErrno {
    int value = errno;
    ~KeepErrno() { errno = value; }
  } keep_errno;
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n < 0) return;
  std::string msg(static_cast<std::size_t>(n) + 1, '\0');
  std::vsnprintf(msg.data(), msg.size(), fmt, ap);
  msg.resize(static_cast<std::size_t>(n));
  const bool newline = !msg.empty() && msg.back() == '\n';
  if (newline) msg.pop_back();
  if (level >= FUSE_LOG_DEBUG) {  // the -d request log: foreground only, as libfuse writes it
    std::fputs((printable(msg) + (newline ? "\n" : "")).c_str(), stderr);
  } else {
    log_message(level <= FUSE_LOG_ERR      ? LogLevel::kError
                : level <= FUSE_LOG_NOTICE ? LogLevel::kWarning
                                           : LogLevel::kInfo,
                msg);
  }
}

// -o OPTION=f32|f16|bf16 (safetensors_dtype, hf_dtype, mlx_dtype): `name` (nullptr: not given) into
// `out`; false after printing why not.
bool float_dtype(std::string_view option, const char* name, ViewData& out) {
  if (!name) return true;
  try {
    out = parse_float_dtype(option, name);
    return true;
  } catch (const UsageError& e) {
    fmt::print(stderr, "ggufs: -o {}\n", e.what());
    return false;
  }
}

// -o hf_max_shard_size (parse_shard_size) into `out`; false after printing why not.
bool shard_size(const char* text, std::uint64_t& out) {
  if (!text) return true;
  try {
    out = parse_shard_size(text);
    return true;
  } catch (const UsageError& e) {
    fmt::print(stderr, "ggufs: -o {}\n", e.what());
    return false;
  }
}

// The folder whose models FILE mounts as a library (library_folder; for "ollama:", `why` says why
// that store, and it is logged); nullopt for a model.
std::optional<std::string> mounted_folder(const std::string& path, std::string& why) {
  OllamaStore store;
  std::optional<std::string> folder = library_folder(path, &store);
  if (!store.path.empty()) {
    log_ollama_store(store);
    why = std::move(store.why);
  }
  return folder;
}

// Finds the models of a library (folder `folder`, or Ollama's store when FILE is "ollama:")
// without opening any; prints why not and returns the exit code, else kExitOk.
int open_library(const std::string& folder, const std::string& path, const TreeOptions& options,
                 std::unique_ptr<Library>& out) {
  std::vector<std::string> warnings;
  std::vector<LibraryEntry> entries;
  try {
    entries = find_library_models(folder, path, warnings);
  } catch (const IoError& e) {
    fmt::print(stderr, "ggufs: {}\n", printable(e.what()));
    return kExitCannotRead;
  }
  for (const std::string& w : warnings)
    log_message(LogLevel::kWarning, fmt::format("warning: {}", w));
  log_message(LogLevel::kInfo, fmt::format("{}: {} models", printable(folder), entries.size()));
  // Each opened model keeps its files open: allow as many as the system lets us.
  struct rlimit files {};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  struct stat st {};
  ::stat(folder.c_str(), &st);
  out = std::make_unique<Library>(
      std::move(entries), options,
      [](const std::string& line) { log_message(LogLevel::kWarning, line); },
      modification_time(st));
  return kExitOk;
}

// Parses FILE, mounts it and serves it until unmounted; returns the exit code.
int mount_file(fuse_args& args, const Config& conf) {
  if (!conf.file || !conf.mountpoint) {
    fmt::print(stderr, "ggufs: {} is missing\n{}", conf.file ? "MOUNTPOINT" : "FILE", usage_text());
    return kExitUsage;
  }
  const MountPoint mountpoint(conf.mountpoint);  // created if missing, removed after if so
  // Before libfuse resolves MOUNTPOINT: a stale mount would only give "bad mount point".
  if (!clear_stale_mount(conf.mountpoint, conf.force)) return kExitMountFailed;
  fuse_cmdline_opts opts{};
  if (fuse_parse_cmdline(&args, &opts) != 0) {
    fmt::print(stderr, "{}", usage_text());
    return kExitUsage;
  }
  std::unique_ptr<char, void (*)(void*)> mountpoint_guard(opts.mountpoint, std::free);
  if (!opts.mountpoint) {
    fmt::print(stderr, "ggufs: MOUNTPOINT is missing\n{}", usage_text());
    return kExitUsage;
  }

  if (conf.max_read < kMinMaxRead || conf.max_read > kMaxMaxRead) {
    fmt::print(stderr, "ggufs: -o max_read={}: not from {} to {} bytes\n", conf.max_read,
               kMinMaxRead, kMaxMaxRead);
    return kExitUsage;
  }
  const std::string path = conf.file;
  const std::optional<RemoteOptions> remote = remote_options(conf);
  if (!remote) return kExitUsage;
  TreeOptions tree_options;
  if (!float_dtype("safetensors_dtype", conf.safetensors_dtype, tree_options.safetensors_dtype) ||
      !float_dtype("hf_dtype", conf.hf_dtype, tree_options.hf_dtype) ||
      !float_dtype("mlx_dtype", conf.mlx_dtype, tree_options.mlx_dtype) ||
      !shard_size(conf.hf_max_shard_size, tree_options.hf_max_shard_size)) {
    return kExitUsage;
  }
  try {
    tree_options.mlx_requantize = parse_mlx_requantize(conf.mlx_requantize);
  } catch (const UsageError& e) {
    fmt::print(stderr, "ggufs: -o {}\n", e.what());
    return kExitUsage;
  }
  std::unique_ptr<Library> library;
  bool remote_model = false;
  std::string why;
  if (const std::optional<std::string> folder = mounted_folder(path, why)) {
    if (conf.mmproj) {
      fmt::print(stderr, "ggufs: --mmproj pairs one model file; a library pairs its own\n");
      return kExitUsage;
    }
    if (const int rc = open_library(*folder, path, tree_options, library); rc != kExitOk) {
      return rc;
    }
  } else {
    Model model;
    if (const int rc = open_model_named(path, *remote, model); rc != kExitOk) return rc;
    if (conf.mmproj) {
      if (const int rc = open_projector(conf.mmproj, *remote, model); rc != kExitOk) return rc;
    }
    remote_model = model.sources.front()->remote();
    std::unique_ptr<ServedModel> served;
    try {
      const SlowStep step("rendering the metadata files");
      served = std::make_unique<ServedModel>(std::move(model), tree_options);
    } catch (const std::exception& e) {
      // A parsed model fails to lay out only for lack of memory (ServedModel): its reason line,
      // as a library's model gives it in its error file.
      fmt::print(stderr, "ggufs: {}\n",
                 not_enough_memory(e, "lay out this model").value_or(printable(e.what())));
      return kExitMountFailed;
    }
    for (const std::string& w : served->warnings) {
      log_message(LogLevel::kWarning, fmt::format("warning: {}", w));
    }
    library = std::make_unique<Library>(std::move(served));
  }
  const uid_t uid = conf.uid >= 0 ? static_cast<uid_t>(conf.uid) : ::getuid();
  const gid_t gid = conf.gid >= 0 ? static_cast<gid_t>(conf.gid) : ::getgid();
  MountContext mctx{*library, uid, gid, nullptr, conf.max_read, conf.direct_io != 0};

  fuse_opt_add_arg(&args, "-oro,default_permissions,subtype=ggufs");
  fuse_opt_add_arg(&args, fmt::format("-omax_read={}", conf.max_read).c_str());
  fuse_opt_add_arg(&args, fsname_option(is_url(path) ? display_url(path) : path).c_str());
  return serve(args, opts, conf, mctx, remote_model ? remote->read_timeout_s : 0);
}

int run(int argc, char** argv) {
  fuse_set_log_func(log_escaped);
  fuse_args args = FUSE_ARGS_INIT(argc, argv);
  std::unique_ptr<fuse_args, void (*)(fuse_args*)> args_guard(&args, fuse_opt_free_args);
  Config conf;
  if (!parse_options(args, conf)) {
    fmt::print(stderr, "{}", usage_text());
    return kExitUsage;
  }
  // fuse_opt_parse copies %s option values with malloc.
  std::unique_ptr<char, void (*)(void*)> notify_pipe_guard(conf.notify_pipe, std::free);
  std::unique_ptr<char, void (*)(void*)> cache_dir_guard(conf.cache_dir, std::free);
  std::unique_ptr<char, void (*)(void*)> token_file_guard(conf.token_file, std::free);
  std::unique_ptr<char, void (*)(void*)> ca_file_guard(conf.ca_file, std::free);
  std::unique_ptr<char, void (*)(void*)> dtype_guard(conf.safetensors_dtype, std::free);
  std::unique_ptr<char, void (*)(void*)> hf_dtype_guard(conf.hf_dtype, std::free);
  std::unique_ptr<char, void (*)(void*)> mlx_dtype_guard(conf.mlx_dtype, std::free);
  std::unique_ptr<char, void (*)(void*)> shard_guard(conf.hf_max_shard_size, std::free);
  std::unique_ptr<char, void (*)(void*)> mmproj_guard(conf.mmproj, std::free);
  if (conf.read_timeout < 1 || conf.read_timeout > 60) {
    fmt::print(stderr, "ggufs: -o read_timeout={}: must be 1 to 60 seconds\n", conf.read_timeout);
    return kExitUsage;
  }
  log_setup(/*to_syslog=*/false, conf.quiet, conf.verbose, conf.redact);
  if (conf.help) {
    fmt::print("{}\nFUSE options:\n", usage_text());
    std::fflush(stdout);
    fuse_lowlevel_help();
    return kExitOk;
  }
  if (conf.version) {
    fmt::print("ggufs {}\n", GGUFS_VERSION);
    return kExitOk;
  }
  if (conf.info || conf.json) {
    if (!conf.file || conf.mountpoint || (conf.info && conf.json)) {
      fmt::print(stderr, "ggufs: --info and --json take one FILE and nothing else\n{}",
                 usage_text());
      return kExitUsage;
    }
    std::string why;
    if (const std::optional<std::string> folder = mounted_folder(conf.file, why);
        folder && conf.info) {
      // A library: what its mount would show, a folder per model, without opening any.
      std::unique_ptr<Library> library;
      if (const int rc = open_library(*folder, conf.file, {}, library); rc != kExitOk) return rc;
      const std::vector<std::string> names = library->folder_names();
      fmt::print("{}: a library of {} models\n", printable(*folder), names.size());
      if (!why.empty()) fmt::print("  Ollama's store: {}\n", why);
      for (std::size_t k = 0; k < names.size(); ++k) {
        const LibraryEntry& e = library->entry(k);
        fmt::print("  {}\t{}\n", printable(names[k]), printable(e.path));
        if (!e.projector.empty()) fmt::print("    with its projector {}\n", printable(e.projector));
        if (!e.unpaired.empty()) fmt::print("    without a projector: {}\n", e.unpaired);
      }
      return std::fflush(stdout) == 0 ? kExitOk : kExitCannotRead;
    }
    Model model;
    const std::optional<RemoteOptions> remote = remote_options(conf);
    if (!remote) return kExitUsage;
    OllamaStore store;
    if (const int rc = open_model_named(conf.file, *remote, model, &store); rc != kExitOk) {
      return rc;
    }
    std::string text = conf.info ? render_info(model.file) : render_gguf_json(model.file) + "\n";
    if (conf.info && !store.path.empty()) {
      // Which store an ollama:NAME came from (the user's, $OLLAMA_MODELS or the system's).
      text = fmt::format("{}: Ollama's store {} ({})\n", printable(conf.file),
                         printable(store.path), store.why) +
             text;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitCannotRead;
  }
  const int rc = mount_file(args, conf);
  if (rc != kExitOk) notify_failed(conf.notify_pipe, rc);
  return rc;
}
}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
