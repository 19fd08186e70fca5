// ggufs: mount a GGUF model file as a read-only tree. Parses and validates the whole file first,
// then mounts, goes to the background (unless -f) and serves requests until unmounted.
#include <fmt/format.h>
#include <malloc.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "background.h"
#include "bdi.h"
#include "fuse_adapter.h"
#include "ggufs/byte_source.h"
#include "ggufs/content.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/info.h"
#include "ggufs/names.h"
#include "ggufs/render.h"
#include "ggufs/tree.h"
#include "stale_mount.h"

namespace {

using namespace ggufs;

constexpr const char* kUsage =
    "usage: ggufs [options] FILE MOUNTPOINT\n"
    "       ggufs --info FILE | --json FILE\n"
    "\n"
    "Mounts the GGUF model FILE read-only at MOUNTPOINT:\n"
    "  gguf.json  tensors.tsv  metadata/<key>  raw/<tensor>  f32/<tensor>  npy/<tensor>.npy\n"
    "Unmount with: fusermount3 -u MOUNTPOINT\n"
    "\n"
    "options:\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "  --info FILE         print the header, metadata, tensors and bits per weight of FILE\n"
    "                      (as gguf-dump does) and exit, without mounting\n"
    "  --json FILE         print what gguf.json would hold for FILE and exit\n"
    "  -f                  stay in the foreground (SIGINT/SIGTERM unmount)\n"
    "  -d                  debug: log every FUSE request (implies -f)\n"
    "  -s                  serve requests on a single thread\n"
    "  -o opt[,opt...]     mount options passed to FUSE (e.g. allow_other), and:\n"
    "     read_ahead_kb=N  kernel read-ahead of the mount in KiB (default 1008; 0 keeps the\n"
    "                      kernel's default; needs root)\n"
    "     force            clear a stale mount at MOUNTPOINT first (one whose daemon was\n"
    "                      killed: \"Transport endpoint is not connected\") with\n"
    "                      fusermount3 -uz; without it ggufs prints that command and exits 4\n"
    "\n"
    "exit codes: 0 ok, 1 usage error, 2 cannot open/read FILE, 3 not a valid GGUF file,\n"
    "            4 mount failed\n";

struct Config {
  const char* file = nullptr;
  const char* mountpoint = nullptr;  // as given; libfuse resolves it (which fails if stale)
  int force = 0;                     // -o force: clear a stale mount first
  int help = 0;
  int version = 0;
  int info = 0;  // --info: print the report of FILE, no mount
  int json = 0;  // --json: print gguf.json of FILE, no mount
  // The largest request libfuse 3.14 can splice here (a 1 MiB pipe holds 1008 KiB + header);
  // larger ones take its slow copy path.
  unsigned read_ahead_kb = 1008;
};

enum { kKeyHelp, kKeyVersion, kKeyInfo, kKeyJson };

const fuse_opt kOptions[] = {
    FUSE_OPT_KEY("-h", kKeyHelp),
    FUSE_OPT_KEY("--help", kKeyHelp),
    FUSE_OPT_KEY("-V", kKeyVersion),
    FUSE_OPT_KEY("--version", kKeyVersion),
    FUSE_OPT_KEY("--info", kKeyInfo),
    FUSE_OPT_KEY("--json", kKeyJson),
    {"read_ahead_kb=%u", offsetof(Config, read_ahead_kb), 0},
    {"force", offsetof(Config, force), 1},
    FUSE_OPT_END,
};

int option_proc(void* data, const char* arg, int key, fuse_args*) {
  auto* conf = static_cast<Config*>(data);
  switch (key) {
    case kKeyHelp:
      conf->help = 1;
      return 0;
    case kKeyVersion:
      conf->version = 1;
      return 0;
    case kKeyInfo:
      conf->info = 1;
      return 0;
    case kKeyJson:
      conf->json = 1;
      return 0;
    case FUSE_OPT_KEY_NONOPT:
      if (!conf->file) {
        conf->file = arg;
        return 0;  // consumed: FILE is ours, MOUNTPOINT goes on to libfuse
      }
      if (!conf->mountpoint) conf->mountpoint = arg;
      return 1;
    default:
      return 1;
  }
}

// The fsname shown in /proc/mounts; ',' and '\' must be escaped for libfuse's option parser.
std::string fsname_option(const std::string& path) {
  std::string out = "-ofsname=";
  for (char ch : path) {
    if (ch == ',' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

// Opens and parses FILE; on failure prints why (file, byte offset, problem) and returns the exit
// code, else kExitOk.
int open_and_parse(const std::string& path, std::unique_ptr<FileSource>& backing, GgufFile& file) {
  try {
    backing = std::make_unique<FileSource>(path);
    file = parse_gguf(*backing, path);
    return kExitOk;
  } catch (const IoError& e) {
    fmt::print(stderr, "ggufs: {}\n", printable(e.what()));
    return kExitCannotRead;
  } catch (const ParseError& e) {
    // The problem text already escapes what it quotes from the file: escape only the path.
    fmt::print(stderr, "ggufs: {}: at byte {}: {}\n", printable(e.file()), e.offset(), e.problem());
    return kExitInvalidGguf;
  }
}

// `path` made absolute (user.gguf.file), as given when it cannot be resolved.
std::string absolute_path(const std::string& path) {
  std::unique_ptr<char, void (*)(void*)> real(::realpath(path.c_str(), nullptr), std::free);
  return real ? std::string(real.get()) : path;
}

// One line naming the types that have raw/ files only, and the ids that have no files.
void warn_undecoded(const GgufFile& f) {
  std::map<std::uint32_t, std::size_t> raw_only, unknown;
  for (const TensorInfo& t : f.tensors) {
    const TypeTraits* tr = type_traits(t.type);
    if (!tr)
      ++unknown[t.type];
    else if (!tr->to_float)
      ++raw_only[t.type];
  }
  if (!raw_only.empty()) {
    std::string names;
    for (auto [id, n] : raw_only)
      names +=
          fmt::format("{}{} ({} tensors)", names.empty() ? "" : ", ", type_display_name(id), n);
    fmt::print(stderr, "ggufs: warning: {}: no float32 decoding yet for {}: raw/ only\n",
               printable(f.path), names);
  }
  if (!unknown.empty()) {
    std::string ids;
    for (auto [id, n] : unknown)
      ids += fmt::format("{}{} ({} tensors)", ids.empty() ? "" : ", ", id, n);
    fmt::print(stderr,
               "ggufs: warning: {}: removed or unknown type ids {}: listed in gguf.json and "
               "tensors.tsv only\n",
               printable(f.path), ids);
  }
}

int serve(fuse_args& args, const fuse_cmdline_opts& opts, const Config& conf,
          const MountContext& mctx) {
  fuse_session* se = fuse_session_new(&args, &fuse_operations(), sizeof(fuse_lowlevel_ops),
                                      const_cast<MountContext*>(&mctx));
  if (!se) return kExitMountFailed;  // libfuse printed why (e.g. an unknown -o option)
  int rc = kExitMountFailed;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, opts.mountpoint) == 0) {
      // Detach, but let the command return only when the mount answers (the kernel has our
      // INIT reply) and its read-ahead is raised: a user may unmount right away, and the
      // read-ahead must be set after INIT, which resets it (best effort, needs root; without it
      // sequential reads arrive as 128 KiB requests). A child process waits for the mount: a
      // thread of ours would hang for ever in its own FUSE request if we were killed meanwhile.
      Background bg = Background::detach(opts.foreground);
      const pid_t tuner = ::fork();  // no threads yet: fork is safe
      if (tuner == 0) {
        // Without /dev/fuse: if the daemon dies, the connection must die with it.
        ::close(fuse_session_fd(se));
        struct stat st {};
        if (::stat(opts.mountpoint, &st) != 0) ::_exit(1);
        if (conf.read_ahead_kb) set_read_ahead_kb(opts.mountpoint, conf.read_ahead_kb);
        bg.ready();
        ::_exit(0);
      }
      if (tuner < 0) bg.ready();  // cannot wait for the mount: report it usable now
      bg.drop();
      int loop;
      if (opts.singlethread) {
        loop = fuse_session_loop(se);
      } else {
        fuse_loop_config* cfg = fuse_loop_cfg_create();
        fuse_loop_cfg_set_clone_fd(cfg, opts.clone_fd);
        fuse_loop_cfg_set_max_threads(cfg, opts.max_threads);
        loop = fuse_session_loop_mt(se, cfg);
        fuse_loop_cfg_destroy(cfg);
      }
      // libfuse returns the signal number after SIGINT/SIGTERM/SIGHUP: a clean unmount too.
      rc = loop >= 0 ? kExitOk : kExitMountFailed;
      if (tuner > 0) ::waitpid(tuner, nullptr, WNOHANG);  // reaped if done; else init will
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  return rc;
}

// libfuse's own messages (its -d request log, mount errors) go through printable() too, so no
// text that reaches the terminal can carry control sequences.
void log_escaped(enum fuse_log_level, const char* fmt, va_list ap) {
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
  std::fputs((printable(msg) + (newline ? "\n" : "")).c_str(), stderr);
}

int run(int argc, char** argv) {
  fuse_set_log_func(log_escaped);
  fuse_args args = FUSE_ARGS_INIT(argc, argv);
  std::unique_ptr<fuse_args, void (*)(fuse_args*)> args_guard(&args, fuse_opt_free_args);
  Config conf;
  if (fuse_opt_parse(&args, &conf, kOptions, option_proc) != 0) {
    fmt::print(stderr, "{}", kUsage);
    return kExitUsage;
  }
  if (conf.help) {
    fmt::print("{}\nFUSE options:\n", kUsage);
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
      fmt::print(stderr, "ggufs: --info and --json take one FILE and nothing else\n{}", kUsage);
      return kExitUsage;
    }
    std::unique_ptr<FileSource> backing;
    GgufFile file;
    if (const int rc = open_and_parse(conf.file, backing, file); rc != kExitOk) return rc;
    const std::string text = conf.info ? render_info(file) : render_gguf_json(file) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitCannotRead;
  }
  // Before libfuse resolves MOUNTPOINT: a stale mount would only give "bad mount point".
  if (conf.mountpoint && !clear_stale_mount(conf.mountpoint, conf.force)) return kExitMountFailed;
  fuse_cmdline_opts opts{};
  if (fuse_parse_cmdline(&args, &opts) != 0) {
    fmt::print(stderr, "{}", kUsage);
    return kExitUsage;
  }
  std::unique_ptr<char, void (*)(void*)> mountpoint_guard(opts.mountpoint, std::free);
  if (!conf.file || !opts.mountpoint) {
    fmt::print(stderr, "ggufs: {} is missing\n{}", conf.file ? "MOUNTPOINT" : "FILE", kUsage);
    return kExitUsage;
  }

  const std::string path = conf.file;
  std::unique_ptr<FileSource> backing;
  GgufFile file;
  if (const int rc = open_and_parse(path, backing, file); rc != kExitOk) return rc;
  warn_undecoded(file);
  const Tree tree(file);
  // The tree holds every metadata file rendered; the parsed values are not needed any more, and
  // a large vocabulary takes several times its size in the file as parsed values.
  std::vector<KeyValue>().swap(file.kv);
  ::malloc_trim(0);
  const ContentReader reader(file, *backing);
  struct stat st {};
  ::fstat(backing->fd(), &st);
  const MountContext mctx{tree,       reader,     file,      absolute_path(path),
                          ::getuid(), ::getgid(), st.st_mtim};

  fuse_opt_add_arg(&args, "-oro,default_permissions,subtype=ggufs");
  fuse_opt_add_arg(&args, fmt::format("-omax_read={}", kMaxReadBytes).c_str());
  fuse_opt_add_arg(&args, fsname_option(path).c_str());
  return serve(args, opts, conf, mctx);
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
