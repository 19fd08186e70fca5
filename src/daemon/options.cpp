#include "options.h"

#include <cstddef>
#include <cstring>
#include <string_view>

namespace ggufs {
namespace {

constexpr const char* kUsage =
    "usage: ggufs [options] FILE|URL|DIR|ollama:[NAME[:TAG]] MOUNTPOINT\n"
    "       ggufs --info FILE | --json FILE\n"
    "\n"
    "Mounts the GGUF model FILE read-only at MOUNTPOINT (created if missing, and then removed\n"
    "at unmount):\n"
    "  gguf.json  tensors.tsv  metadata/<key>  raw/<tensor>  f32/<tensor>  npy/<tensor>.npy\n"
    "  f16/<tensor>  model.gguf (the whole model, split models merged)  model.safetensors\n"
    "  hf/ (a Hugging Face model folder that transformers loads, for the architectures it\n"
    "  imports from GGUF)\n"
    "A folder DIR mounts a library: a folder per model found in it and below (NAME.gguf, or\n"
    "one split model; the Hugging Face cache too), each parsed on first use; a model that\n"
    "cannot be read holds only an \"error\" file. ollama: mounts Ollama's store\n"
    "($OLLAMA_MODELS, ~/.ollama/models or the service's /usr/share/ollama/.ollama/models),\n"
    "a folder per tag; ollama:NAME[:TAG] one model.\n"
    "Unmount with: fusermount3 -u MOUNTPOINT\n"
    "\n"
    "options:\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print the version and exit\n"
    "  --info FILE         print the header, metadata, tensors and bits per weight of FILE\n"
    "                      (as gguf-dump does) and exit, without mounting; for a library\n"
    "                      (DIR, ollama:) its folders and the files they come from\n"
    "  --json FILE         print what gguf.json would hold for FILE and exit\n"
    "  -f                  stay in the foreground (SIGINT/SIGTERM unmount); log to stderr\n"
    "                      (in the background the daemon logs to syslog)\n"
    "  -d                  debug: log every FUSE request (implies -f)\n"
    "  -s                  serve requests on a single thread\n"
    "  --mmproj PROJ       pair FILE with its vision projector PROJ (llama.cpp's mmproj\n"
    "                      GGUF, or -o mmproj=PROJ): hf/ is then the vision-language model\n"
    "  -q                  log errors only\n"
    "  -v                  also log the mount, the unmount and each tensor file opened\n"
    "  -o opt[,opt...]     mount options passed to FUSE (e.g. allow_other, allow_root), and:\n"
    "     max_read=N       largest read request in bytes (4096-67108864, default 1032192);\n"
    "                      above 1 MiB with libfuse 3.17 where fs.fuse.max_pages_limit allows\n"
    "     read_ahead_kb=N  kernel read-ahead of the mount in KiB (default four requests of\n"
    "                      max_read: 4032; 0 keeps the kernel's default; needs root)\n"
    "     direct_io        decoded and whole-model files (f32/, npy/, f16/, model.safetensors,\n"
    "                      hf/, mlx/) skip the page cache: each read decodes into the reader's\n"
    "                      buffer, faster for read() clients, repeat reads decode again; a shared\n"
    "                      mmap of them needs Linux 6.6 and libfuse 3.16 (else ENODEV)\n"
    "     force            clear a stale mount at MOUNTPOINT first (one whose daemon was\n"
    "                      killed: \"Transport endpoint is not connected\") with\n"
    "                      fusermount3 -uz; without it ggufs prints that command and exits 4\n"
    "     uid=N, gid=N     owner and group of every file (default: the mounting user's)\n"
    "     notify_pipe=PATH when the mount is ready write \"READY=1\\n\" to PATH (a FIFO or\n"
    "                      file), or \"ERROR=<exit code>\\n\" if it failed\n"
    "     redact           no metadata key or tensor names in the daemon's log\n"
    "     safetensors_dtype=f32|f16|bf16\n"
    "                      every floating tensor of model.safetensors in that dtype (default:\n"
    "                      F32, F16, BF16, F64 as stored, quantized types as F32)\n"
    "     hf_dtype=f32|f16|bf16\n"
    "                      dtype of hf/'s weights (default f32, as transformers' GGUF import)\n"
    "     hf_max_shard_size=N[KB|MB|GB|TB]\n"
    "                      bytes per hf/ and mlx/ weight file, as save_pretrained (default 5GB)\n"
    "     mlx_dtype=f32|f16|bf16\n"
    "                      dtype of mlx/'s float tensors (default f32, exact; the quantized\n"
    "                      ones keep ggml's blocks whatever it is)\n"
    "     mlx_requantize=8|6|4\n"
    "                      quantize mlx/'s matrices whose ggml blocks MLX cannot hold (Q6_K,\n"
    "                      Q2_K, Q3_K, IQ*) as mlx_lm.convert does: MLX's affine form, group 32\n"
    "                      (not exact; config.json's ggufs_not_exact lists them)\n"
    "  Remote models (FILE an http(s)://, s3://BUCKET/KEY or hf://OWNER/REPO[@REV]/PATH\n"
    "  name, read with range requests):\n"
    "     cache_dir=PATH   chunk cache (default $XDG_CACHE_HOME/ggufs or ~/.cache/ggufs);\n"
    "                      an empty or new folder, or one ggufs made, your own\n"
    "                      and not writable by group or others\n"
    "     cache_size_mib=N size limit of the chunk cache (default 4096)\n"
    "     read_timeout=S   a remote read not answered within S seconds (1-60, retries\n"
    "                      and queueing included; default 45) fails with EIO\n"
    "     ca_file=PATH     CA certificates (PEM) for https servers (default: the system's)\n"
    "     token_file=PATH  bearer token for http(s) URLs, read from PATH (or set\n"
    "                      GGUFS_HTTP_TOKEN); never taken from the command line\n"
    "     s3_path_style    s3://: ENDPOINT/BUCKET/KEY requests, also on AWS\n"
    "     s3_virtual_host  s3://: BUCKET.HOST/KEY requests, also on custom endpoints\n"
    "     s3_anonymous     s3://: unsigned requests (public buckets)\n"
    "  s3:// takes credentials, region and endpoint as the AWS CLI does (AWS_* variables,\n"
    "  ~/.aws/credentials and ~/.aws/config); hf:// takes HF_ENDPOINT and HF_TOKEN or\n"
    "  $HF_HOME/token.\n"
    "     auto, noauto, nofail, _netdev, defaults, user, users, nouser, owner, group,\n"
    "     x-systemd.*, x-*, comment=...: fstab options (mount, systemd), accepted and ignored\n"
    "  Under systemd (Type=notify, NOTIFY_SOCKET set) ggufs -f reports READY=1 when mounted.\n"
    "\n"
    "exit codes: 0 ok, 1 usage error, 2 cannot open/read FILE (or DIR), 3 not a valid GGUF file,\n"
    "            4 mount failed\n";

enum { kKeyHelp, kKeyVersion, kKeyInfo, kKeyJson, kKeyQuiet, kKeyVerbose };

const fuse_opt kOptions[] = {
    FUSE_OPT_KEY("-h", kKeyHelp),
    FUSE_OPT_KEY("--help", kKeyHelp),
    FUSE_OPT_KEY("-V", kKeyVersion),
    FUSE_OPT_KEY("--version", kKeyVersion),
    FUSE_OPT_KEY("--info", kKeyInfo),
    FUSE_OPT_KEY("--json", kKeyJson),
    FUSE_OPT_KEY("-q", kKeyQuiet),
    FUSE_OPT_KEY("-v", kKeyVerbose),
    {"max_read=%u", offsetof(Config, max_read), 0},
    {"read_ahead_kb=%u", offsetof(Config, read_ahead_kb), 0},
    {"force", offsetof(Config, force), 1},
    {"redact", offsetof(Config, redact), 1},
    {"uid=%ld", offsetof(Config, uid), 0},
    {"gid=%ld", offsetof(Config, gid), 0},
    {"notify_pipe=%s", offsetof(Config, notify_pipe), 0},
    {"cache_dir=%s", offsetof(Config, cache_dir), 0},
    {"token_file=%s", offsetof(Config, token_file), 0},
    {"ca_file=%s", offsetof(Config, ca_file), 0},
    {"cache_size_mib=%u", offsetof(Config, cache_size_mib), 0},
    {"read_timeout=%u", offsetof(Config, read_timeout), 0},
    {"s3_path_style", offsetof(Config, s3_path_style), 1},
    {"s3_virtual_host", offsetof(Config, s3_virtual_host), 1},
    {"s3_anonymous", offsetof(Config, s3_anonymous), 1},
    {"safetensors_dtype=%s", offsetof(Config, safetensors_dtype), 0},
    {"hf_dtype=%s", offsetof(Config, hf_dtype), 0},
    {"hf_max_shard_size=%s", offsetof(Config, hf_max_shard_size), 0},
    {"mlx_dtype=%s", offsetof(Config, mlx_dtype), 0},
    {"mlx_requantize=%u", offsetof(Config, mlx_requantize), 0},
    {"direct_io", offsetof(Config, direct_io), 1},
    {"--mmproj=%s", offsetof(Config, mmproj), 0},
    {"--mmproj %s", offsetof(Config, mmproj), 0},
    {"mmproj=%s", offsetof(Config, mmproj), 0},
    FUSE_OPT_END,
};

// Options that only mean something to mount(8) and systemd in an fstab line; mount.fuse3 passes
// some of them on to the file system's command.
bool is_fstab_only(std::string_view opt) {
  for (const char* o : {"auto", "noauto", "nofail", "_netdev", "user", "nouser", "users",
                        "defaults", "owner", "group"}) {
    if (opt == o) return true;
  }
  return opt.starts_with("x-") || opt.starts_with("comment=");
}

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
    case kKeyQuiet:
      conf->quiet = 1;
      return 0;
    case kKeyVerbose:
      conf->verbose = 1;
      return 0;
    case FUSE_OPT_KEY_OPT:
      return is_fstab_only(arg) ? 0 : 1;  // 0: dropped; 1: kept for libfuse
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

}  // namespace

bool parse_options(fuse_args& args, Config& conf) {
  return fuse_opt_parse(&args, &conf, kOptions, option_proc) == 0;
}

const char* usage_text() { return kUsage; }

}  // namespace ggufs
