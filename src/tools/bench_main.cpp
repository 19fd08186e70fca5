// ggufs-bench: the measuring helpers behind scripts/bench. Kernel throughput in-process (every
// decodable type, against memcpy), a GGUF file with one tensor of every decodable type, the
// tensor list of a file with byte offsets, sequential 1 MiB reads of files or byte ranges (the
// backing file natively, or files through a mount; with read() or through mmap), random 4 KiB
// pread latencies, and the files of the mount and memory targets: a large vocabulary with many
// small tensors, a sparse model whose tensor data is a hole, and a Q4_K_M llama model that
// llama.cpp loads. Mounting is left to the script.
// Benchmarks only: nothing here runs in the test suite and nothing asserts on timings.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/decode.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/half.h"
#include "ggufs/model.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kUsage =
    "usage: ggufs-bench COMMAND [options]\n"
    "\n"
    "Measuring helpers for scripts/bench (which mounts and prints the table). MB = 10^6 bytes.\n"
    "kernels, tensors and read print tab-separated lines after one '#' header line.\n"
    "\n"
    "commands:\n"
    "  kernels [--mib N]\n"
    "      Decodes N MiB (default 64) of float32 output from random input bytes with every\n"
    "      decodable type's kernel, in this thread; best of several timed repetitions after a\n"
    "      warm-up. The first row is single-thread memcpy of the same N MiB, the baseline; the\n"
    "      second memset of the output (stores only: about the most a decoder can write).\n"
    "      Each type twice: its decoder writing through the cache (as for reads through the\n"
    "      mount), and decode_streaming (non-temporal stores, as for in-process decodes of at\n"
    "      least 32 MiB). Columns: type, id, out_MB, MB_per_s (float32 output), x_memcpy,\n"
    "      streamed_MB_per_s, streamed_x_memcpy.\n"
    "  write-all-types OUT.gguf [--mib-per-type N]\n"
    "      Writes one tensor per decodable type, named bench.<type in lower case>\n"
    "      (bench.q4_k), each of N MiB (default 32) of float32 output, ne = {4096, rows}, holding\n"
    "      deterministic pseudo-random bytes; streamed, so memory stays small.\n"
    "  tensors FILE.gguf\n"
    "      Columns: name, type, id, file_offset, n_bytes, f32_bytes (0 when not decodable).\n"
    "  read [--mmap] [--passes N] [--range OFFSET:LENGTH] [--flush-mib N] FILE...\n"
    "      Reads each FILE (or its LENGTH bytes from OFFSET) sequentially with 1 MiB read()\n"
    "      calls, N passes (default 2), each pass from a fresh open(). Before each pass the CPU\n"
    "      caches are flushed by writing a scratch buffer of N MiB (default 64, twice the L3 of\n"
    "      the development machines; 0: no flush), so a small file is not read back from L3.\n"
    "      Columns: file, bytes, then MB/s of each pass.\n"
    "      --mmap: each pass instead maps the file (or the range, its start rounded down to a\n"
    "      page) with mmap(PROT_READ, MAP_PRIVATE) from a fresh open(), reads every byte\n"
    "      through memory (summing 64-bit words) and unmaps it; no MAP_POPULATE and no madvise,\n"
    "      so the kernel's own fault-around and read-ahead are measured. Timed from mmap to the\n"
    "      end of munmap; the same columns.\n"
    "  random [--reads N] [--block BYTES] [--seed SEED] FILE...\n"
    "      N (default 10000) pread() calls of BYTES (default 4096) at BYTES-aligned offsets drawn\n"
    "      from SEED (default 1) over the smallest FILE, each timed alone; every offset is read\n"
    "      from each FILE in turn, so load on the machine hits all files alike. No warm-up: the\n"
    "      first read of a page is timed as it comes.\n"
    "      Columns: file, bytes, reads, median_us, mean_us, p99_us.\n"
    "  info FILE.gguf\n"
    "      Columns: data_offset (bytes before the tensor data: the header size), file_size,\n"
    "      tensor_count, kv_count.\n"
    "  write-vocab OUT.gguf [--tokens N] [--tensors N]\n"
    "      Writes the mount-time file: tokenizer.ggml.tokens with N (default 256000) distinct\n"
    "      token strings of 1 to 16 bytes (byte tokens <0xXX>, words with and without a leading\n"
    "      U+2581, some multi-byte UTF-8), then N (default 2000) F32 tensors of 32 elements named\n"
    "      blk.<i>.<attn_q|ffn_up|...>.weight.\n"
    "  write-sparse OUT.gguf [--data-mib N] [--tensors N] [--tokens N]\n"
    "      Writes a model of N MiB (default 8192) of tensor data that is a hole in the file (its\n"
    "      header is written, then the file is extended with ftruncate), so it takes no disk "
    "space\n"
    "      and reads as zeros: N (default 320) tensors blk.<i>.<...>.weight of ne = {4096, rows},\n"
    "      cycling F32, F16, Q8_0, Q4_K, Q6_K, all of one shape; a vocabulary of N (default\n"
    "      32000) tokens as in write-vocab.\n"
    "  write-llama OUT.gguf [--mib N] [--tokens N]\n"
    "      Writes a llama model that llama.cpp loads (its weights are pseudo-random bytes, so\n"
    "      its output is nonsense): TinyLlama-1.1B's shape (n_embd 2048, n_ff 5632, 32 heads,\n"
    "      4 KV heads, context 2048) with as many layers as fit in N MiB (default 1024; at\n"
    "      least 1 layer, so a small N gives a larger file) and the types of llama-quantize's\n"
    "      Q4_K_M (Q4_K; Q6_K for output.weight and for attn_v and ffn_down of about half of\n"
    "      the layers; F32 norms); a vocabulary of N (default 32000, at least 259) tokens:\n"
    "      <unk>, <s>, </s>, then as in write-vocab. Streamed, so memory stays small.\n"
    "  write-split IN.gguf PREFIX [--shards N]\n"
    "      Splits IN into N (default 3) shards PREFIX-0000i-of-0000N.gguf as llama-gguf-split\n"
    "      --split does: consecutive runs of tensors of about equal count, the first shard with\n"
    "      every key/value, each with split.no (uint16), split.count (uint16) and\n"
    "      split.tensors.count (int32). Streamed from IN, so memory stays small.\n"
    "\n"
    "exit status: 0 on success, 1 on a usage error, 2 when a file cannot be read or written\n";

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kReadSize = kMiB;  // bytes per read() call
constexpr std::uint64_t kRow = 4096;     // ne[0] of write-all-types tensors: every block divides it

struct UsageError {
  std::string message;
};

// --- small helpers -----------------------------------------------------------------------------

std::uint64_t parse_u64(std::string_view s, std::string_view what) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    throw UsageError{std::string(what) + ": '" + std::string(s) + "' is not a number"};
  }
  return v;
}

/// A size in MiB from 1 to 65536.
std::uint64_t parse_mib(std::string_view s, std::string_view what) {
  const std::uint64_t v = parse_u64(s, what);
  if (v == 0 || v > 65536) {
    throw UsageError{std::string(what) + ": '" + std::string(s) + "' is not from 1 to 65536 MiB"};
  }
  return v;
}

/// Command-line arguments after the command name, consumed front to back.
class Args {
 public:
  Args(int argc, char** argv, int first) : args_(argv + first, argv + argc) {}
  bool empty() const { return pos_ == args_.size(); }
  std::string_view next() { return args_[pos_++]; }
  /// The value of option `opt`: from "--opt=value" in `arg`, else the next argument.
  std::string_view value(std::string_view opt, std::string_view arg) {
    if (arg.size() > opt.size() && arg[opt.size()] == '=') return arg.substr(opt.size() + 1);
    if (empty()) throw UsageError{std::string(opt) + " needs a value"};
    return next();
  }
  static bool is(std::string_view arg, std::string_view opt) {
    return arg == opt ||
           (arg.starts_with(opt) && arg.size() > opt.size() && arg[opt.size()] == '=');
  }

 private:
  std::vector<std::string_view> args_;
  std::size_t pos_ = 0;
};

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<const ggufs::TypeTraits*> decodable_types() {
  std::vector<const ggufs::TypeTraits*> types;
  for (const ggufs::TypeTraits& t : ggufs::all_types()) {
    if (t.to_float != nullptr) types.push_back(&t);
  }
  return types;
}

/// splitmix64: fast, deterministic pseudo-random bytes.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  void fill(std::span<std::uint8_t> out) {
    std::size_t i = 0;
    for (; i + 8 <= out.size(); i += 8) {
      const std::uint64_t v = next();
      std::memcpy(out.data() + i, &v, 8);
    }
    const std::uint64_t v = next();
    std::memcpy(out.data() + i, &v, out.size() - i);
  }

 private:
  std::uint64_t state_;
};

/// Keeps the compiler from dropping stores to `p` that are never read back.
void clobber(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// One untimed warm-up call of `fn`, then timed calls (at least 3, at most 20, until 0.5 s have
/// been spent): the best time in seconds.
double best_seconds(const std::function<void()>& fn) {
  fn();
  double best = 1e300;
  double total = 0;
  for (int rep = 0; rep < 20 && (rep < 3 || total < 0.5); ++rep) {
    const Clock::time_point start = Clock::now();
    fn();
    const double s = seconds_since(start);
    best = std::min(best, s);
    total += s;
  }
  return best;
}

double mb_per_s(std::uint64_t bytes, double seconds) {
  return static_cast<double>(bytes) / 1e6 / seconds;
}

// --- kernels -----------------------------------------------------------------------------------

int cmd_kernels(Args& args) {
  std::uint64_t mib = 64;
  while (!args.empty()) {
    const std::string_view arg = args.next();
    if (Args::is(arg, "--mib")) {
      mib = parse_mib(args.value("--mib", arg), "--mib");
    } else {
      throw UsageError{"kernels: unexpected argument '" + std::string(arg) + "'"};
    }
  }
  const std::uint64_t out_bytes = mib * kMiB;
  const std::uint64_t n_floats = out_bytes / sizeof(float);

  // The output is 64-byte aligned (decode_streaming streams only to aligned output) and touched
  // before any timing.
  const std::unique_ptr<float[], decltype(&std::free)> out_buffer(
      static_cast<float*>(std::aligned_alloc(64, out_bytes)), &std::free);
  if (!out_buffer) throw std::bad_alloc();
  const std::span<float> out(out_buffer.get(), n_floats);
  std::fill(out.begin(), out.end(), 0.0f);
  std::printf("# type\tid\tout_MB\tMB_per_s\tx_memcpy\tstreamed_MB_per_s\tstreamed_x_memcpy\n");

  std::vector<float> copy_src(n_floats, 1.0f);
  const double memcpy_s = best_seconds([&] {
    std::memcpy(out.data(), copy_src.data(), out_bytes);
    clobber(out.data());
  });
  copy_src = {};
  const double memcpy_mbps = mb_per_s(out_bytes, memcpy_s);
  std::printf("memcpy\t-\t%.1f\t%.0f\t1.00\t%.0f\t1.00\n", static_cast<double>(out_bytes) / 1e6,
              memcpy_mbps, memcpy_mbps);
  // memset of the same output: stores only, nothing read; about the most a decoder, which
  // also reads its input, can write.
  int fill = 0;
  const double memset_s = best_seconds([&] {
    std::memset(out.data(), ++fill, out_bytes);
    clobber(out.data());
  });
  const double memset_mbps = mb_per_s(out_bytes, memset_s);
  std::printf("memset\t-\t%.1f\t%.0f\t%.2f\t%.0f\t%.2f\n", static_cast<double>(out_bytes) / 1e6,
              memset_mbps, memset_mbps / memcpy_mbps, memset_mbps, memset_mbps / memcpy_mbps);
  std::fflush(stdout);

  std::vector<std::uint8_t> in;
  for (const ggufs::TypeTraits* t : decodable_types()) {
    const std::uint64_t n_blocks = n_floats / t->block_size;
    in.resize(n_blocks * t->type_size);
    Random(t->id + 1).fill(in);
    const double s = best_seconds([&] {
      t->to_float(in.data(), out.data(), n_blocks);
      clobber(out.data());
    });
    // The same decoder through decode_streaming: the path of in-process decodes this large.
    const double streamed_s = best_seconds([&] {
      ggufs::decode_streaming(*t, in.data(), out.data(), n_blocks);
      clobber(out.data());
    });
    const std::uint64_t bytes = n_blocks * t->block_size * sizeof(float);
    const double mbps = mb_per_s(bytes, s), streamed_mbps = mb_per_s(bytes, streamed_s);
    std::printf("%.*s\t%u\t%.1f\t%.0f\t%.2f\t%.0f\t%.2f\n", static_cast<int>(t->name.size()),
                t->name.data(), t->id, static_cast<double>(bytes) / 1e6, mbps, mbps / memcpy_mbps,
                streamed_mbps, streamed_mbps / memcpy_mbps);
    std::fflush(stdout);
  }
  return 0;
}

// --- write-all-types ---------------------------------------------------------------------------

int cmd_write_all_types(Args& args) {
  std::string out;
  std::uint64_t mib = 32;
  while (!args.empty()) {
    const std::string_view arg = args.next();
    if (Args::is(arg, "--mib-per-type")) {
      mib = parse_mib(args.value("--mib-per-type", arg), "--mib-per-type");
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError{"write-all-types: unknown option '" + std::string(arg) + "'"};
    } else if (out.empty()) {
      out = arg;
    } else {
      throw UsageError{"write-all-types: only one output file may be given"};
    }
  }
  if (out.empty()) throw UsageError{"write-all-types: no output file given"};

  ggufs::GgufWriter w;
  w.add_string("general.architecture", "bench");
  w.add_string("general.name", "ggufs all-types benchmark");
  w.add_string("general.description",
               "Written by ggufs-bench write-all-types: one tensor per decodable type, " +
                   std::to_string(mib) + " MiB of float32 output each, pseudo-random bytes.");
  const std::uint64_t rows = mib * kMiB / sizeof(float) / kRow;
  for (const ggufs::TypeTraits* t : decodable_types()) {
    const std::uint64_t n_bytes = rows * (kRow / t->block_size) * t->type_size;
    const std::uint32_t id = t->id;
    w.add_tensor_stream("bench." + lower(t->name), id, {kRow, rows}, n_bytes,
                        [id, n_bytes](const ggufs::GgufWriter::ByteSink& sink) {
                          Random random(0x5eed0000u + id);
                          std::vector<std::uint8_t> chunk;
                          for (std::uint64_t done = 0; done < n_bytes; done += chunk.size()) {
                            chunk.resize(std::min<std::uint64_t>(kMiB, n_bytes - done));
                            random.fill(chunk);
                            sink(chunk);
                          }
                        });
  }
  w.write_file(out);
  return 0;
}

// --- tensors -----------------------------------------------------------------------------------

int cmd_tensors(Args& args) {
  if (args.empty()) throw UsageError{"tensors: no file given"};
  const std::string path(args.next());
  if (!args.empty()) throw UsageError{"tensors: only one file may be given"};

  const ggufs::FileSource src(path);
  const ggufs::GgufFile file = ggufs::parse_gguf(src, path);
  std::printf("# name\ttype\tid\tfile_offset\tn_bytes\tf32_bytes\n");
  for (const ggufs::TensorInfo& t : file.tensors) {
    if (!t.n_bytes) continue;  // removed or unknown type: no file in the mount
    const ggufs::TypeTraits* traits = ggufs::type_traits(t.type);
    const bool decodable = traits->to_float != nullptr;
    std::printf("%s\t%.*s\t%u\t%llu\t%llu\t%llu\n", t.name.c_str(),
                static_cast<int>(traits->name.size()), traits->name.data(), t.type,
                static_cast<unsigned long long>(t.file_offset),
                static_cast<unsigned long long>(*t.n_bytes),
                static_cast<unsigned long long>(decodable ? t.n_elements * 4 : 0));
  }
  return 0;
}

// --- read --------------------------------------------------------------------------------------

/// An open file descriptor, closed by the destructor.
class Fd {
 public:
  explicit Fd(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw ggufs::IoError(path + ": " + std::strerror(errno));
  }
  ~Fd() { ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct Range {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

/// One pass over `path` (its `range`, or all of it) with kReadSize read() calls into `buf`;
/// returns the bytes read and the seconds taken (open and close not timed).
std::pair<std::uint64_t, double> read_pass(const std::string& path,
                                           const std::optional<Range>& range,
                                           std::vector<std::uint8_t>& buf) {
  const Fd fd(path);
  std::uint64_t want = 0;
  if (range) {
    if (::lseek(fd.get(), static_cast<off_t>(range->offset), SEEK_SET) < 0) {
      throw ggufs::IoError(path + ": lseek: " + std::strerror(errno));
    }
    want = range->length;
  } else {
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) throw ggufs::IoError(path + ": " + std::strerror(errno));
    want = static_cast<std::uint64_t>(st.st_size);
  }

  std::uint64_t done = 0;
  const Clock::time_point start = Clock::now();
  while (done < want) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), want - done));
    const ssize_t got = ::read(fd.get(), buf.data(), n);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw ggufs::IoError(path + ": read: " + std::strerror(errno));
    }
    if (got == 0) break;
    done += static_cast<std::uint64_t>(got);
  }
  const double s = seconds_since(start);
  clobber(buf.data());
  if (done != want) {
    throw ggufs::IoError(path + ": read " + std::to_string(done) + " of " + std::to_string(want) +
                         " bytes");
  }
  return {done, s};
}

/// The sum of the bytes at `p` taken as 64-bit words (a short tail byte by byte): a read of
/// every byte that the compiler cannot drop once its result is clobbered.
std::uint64_t sum_words(const std::uint8_t* p, std::uint64_t n) {
  std::uint64_t sum = 0;
  std::uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);  // the range may start at any byte
    sum += w;
  }
  for (; i < n; ++i) sum += p[i];
  return sum;
}

/// One pass over `path` (its `range`, or all of it) through memory: a fresh open(), then
/// mmap(PROT_READ, MAP_PRIVATE) of the range (its start rounded down to a page, as mmap needs),
/// every byte of the range summed, munmap. Neither MAP_POPULATE nor madvise: what is measured is
/// the page faults with the kernel's own fault-around and read-ahead, as a program that maps a
/// model (llama.cpp's default) meets them. Returns the range's bytes and the seconds from mmap to
/// the end of munmap (open and close not timed). Throws IoError when the range does not lie
/// within the file (touching a mapped page past the end of the file would raise SIGBUS).
std::pair<std::uint64_t, double> mmap_pass(const std::string& path,
                                           const std::optional<Range>& range) {
  const Fd fd(path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw ggufs::IoError(path + ": " + std::strerror(errno));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t offset = range ? range->offset : 0;
  const std::uint64_t want = range ? range->length : size;
  if (offset > size || want > size - offset) {
    throw ggufs::IoError(path + ": the range ends after the file's " + std::to_string(size) +
                         " bytes");
  }
  const Clock::time_point start = Clock::now();
  if (want == 0) return {0, seconds_since(start)};  // mmap refuses a length of 0
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t map_offset = offset / page * page;
  const auto map_length = static_cast<std::size_t>(offset + want - map_offset);
  void* map =
      ::mmap(nullptr, map_length, PROT_READ, MAP_PRIVATE, fd.get(), static_cast<off_t>(map_offset));
  if (map == MAP_FAILED) throw ggufs::IoError(path + ": mmap: " + std::strerror(errno));
  std::uint64_t sum =
      sum_words(static_cast<const std::uint8_t*>(map) + (offset - map_offset), want);
  clobber(&sum);
  ::munmap(map, map_length);
  return {want, seconds_since(start)};
}

int cmd_read(Args& args) {
  std::uint64_t passes = 2;
  bool use_mmap = false;
  std::optional<Range> range;
  std::uint64_t flush_mib = 64;  // not sysconf(_SC_LEVEL3_CACHE_SIZE): a VM may report 508 MiB
  std::vector<std::string> files;
  while (!args.empty()) {
    const std::string_view arg = args.next();
    if (Args::is(arg, "--passes")) {
      passes = parse_u64(args.value("--passes", arg), "--passes");
      if (passes == 0 || passes > 100) throw UsageError{"--passes: not from 1 to 100"};
    } else if (Args::is(arg, "--range")) {
      const std::string_view v = args.value("--range", arg);
      const std::size_t colon = v.find(':');
      if (colon == std::string_view::npos) throw UsageError{"--range needs OFFSET:LENGTH"};
      range = Range{parse_u64(v.substr(0, colon), "--range offset"),
                    parse_u64(v.substr(colon + 1), "--range length")};
    } else if (Args::is(arg, "--flush-mib")) {
      flush_mib = parse_u64(args.value("--flush-mib", arg), "--flush-mib");
      if (flush_mib > 65536) throw UsageError{"--flush-mib: not from 0 to 65536"};
    } else if (arg == "--mmap") {
      use_mmap = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError{"read: unknown option '" + std::string(arg) + "'"};
    } else {
      files.emplace_back(arg);
    }
  }
  if (files.empty()) throw UsageError{"read: no file given"};

  std::vector<std::uint8_t> buf(use_mmap ? 0 : kReadSize, 0);  // touched before any timing
  std::vector<std::uint8_t> scratch(flush_mib * kMiB, 0);      // written before each pass
  std::printf("# file\tbytes");
  for (std::uint64_t p = 1; p <= passes; ++p)
    std::printf("\tpass%llu_MB_per_s", (unsigned long long)p);
  std::printf("\n");
  for (const std::string& path : files) {
    std::uint64_t bytes = 0;
    std::vector<double> mbps;
    for (std::uint64_t p = 0; p < passes; ++p) {
      if (!scratch.empty()) {
        std::memset(scratch.data(), static_cast<int>(p + 1), scratch.size());
        clobber(scratch.data());
      }
      const auto [n, s] = use_mmap ? mmap_pass(path, range) : read_pass(path, range, buf);
      bytes = n;
      mbps.push_back(mb_per_s(n, s));
    }
    std::printf("%s\t%llu", path.c_str(), static_cast<unsigned long long>(bytes));
    // Whole MB/s, with a decimal below 100 (slow servers).
    for (double v : mbps) std::printf(v < 100 ? "\t%.1f" : "\t%.0f", v);
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}

// --- random ------------------------------------------------------------------------------------

/// Latency statistics of one file's reads, in microseconds.
struct Latency {
  double median_us = 0;
  double mean_us = 0;
  double p99_us = 0;
};

/// The statistics of `ns` (nanoseconds per read, not empty); sorts `ns`.
Latency latency_of(std::vector<std::uint64_t>& ns) {
  std::sort(ns.begin(), ns.end());
  const std::size_t n = ns.size();
  const double median =
      n % 2 ? static_cast<double>(ns[n / 2])
            : (static_cast<double>(ns[n / 2 - 1]) + static_cast<double>(ns[n / 2])) / 2;
  double sum = 0;
  for (std::uint64_t v : ns) sum += static_cast<double>(v);
  const std::size_t p99 = std::min(n - 1, n * 99 / 100);
  return {median / 1e3, sum / static_cast<double>(n) / 1e3, static_cast<double>(ns[p99]) / 1e3};
}

/// pread() of exactly `buf.size()` bytes at `offset`; throws IoError on an error or end of file.
void pread_exact(int fd, const std::string& path, std::span<std::uint8_t> buf,
                 std::uint64_t offset) {
  std::size_t done = 0;
  while (done < buf.size()) {
    const ssize_t got =
        ::pread(fd, buf.data() + done, buf.size() - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw ggufs::IoError(path + ": pread: " + std::strerror(errno));
    }
    if (got == 0) throw ggufs::IoError(path + ": unexpected end of file");
    done += static_cast<std::size_t>(got);
  }
}

int cmd_random(Args& args) {
  std::uint64_t reads = 10000;
  std::uint64_t block = 4096;
  std::uint64_t seed = 1;
  std::vector<std::string> files;
  while (!args.empty()) {
    const std::string_view arg = args.next();
    if (Args::is(arg, "--reads")) {
      reads = parse_u64(args.value("--reads", arg), "--reads");
      if (reads == 0 || reads > 10'000'000) throw UsageError{"--reads: not from 1 to 10000000"};
    } else if (Args::is(arg, "--block")) {
      block = parse_u64(args.value("--block", arg), "--block");
      if (block == 0 || block > 64 * kMiB) throw UsageError{"--block: not from 1 to 64 MiB"};
    } else if (Args::is(arg, "--seed")) {
      seed = parse_u64(args.value("--seed", arg), "--seed");
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError{"random: unknown option '" + std::string(arg) + "'"};
    } else {
      files.emplace_back(arg);
    }
  }
  if (files.empty()) throw UsageError{"random: no file given"};

  std::deque<Fd> fds;  // a deque: Fd cannot move
  std::uint64_t size = UINT64_MAX;
  for (const std::string& path : files) {
    const Fd& fd = fds.emplace_back(path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) throw ggufs::IoError(path + ": " + std::strerror(errno));
    size = std::min(size, static_cast<std::uint64_t>(st.st_size));
  }
  if (size < block) throw ggufs::IoError("random: a file is smaller than one block");

  // Drawn before any timing, from the seed alone, so every run and every file gets the same ones.
  std::vector<std::uint64_t> offsets(reads);
  Random random(seed);
  for (std::uint64_t& off : offsets) off = random.next() % (size / block) * block;

  std::vector<std::uint8_t> buf(block, 0);  // touched before any timing
  std::vector<std::vector<std::uint64_t>> ns(files.size());
  for (std::vector<std::uint64_t>& v : ns) v.reserve(reads);
  for (std::uint64_t off : offsets) {
    for (std::size_t f = 0; f < files.size(); ++f) {
      const Clock::time_point start = Clock::now();
      pread_exact(fds[f].get(), files[f], buf, off);
      ns[f].push_back(static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count()));
      clobber(buf.data());
    }
  }

  std::printf("# file\tbytes\treads\tmedian_us\tmean_us\tp99_us\n");
  for (std::size_t f = 0; f < files.size(); ++f) {
    const Latency l = latency_of(ns[f]);
    std::printf("%s\t%llu\t%llu\t%.2f\t%.2f\t%.2f\n", files[f].c_str(),
                static_cast<unsigned long long>(size), static_cast<unsigned long long>(reads),
                l.median_us, l.mean_us, l.p99_us);
  }
  return 0;
}

// --- info --------------------------------------------------------------------------------------

int cmd_info(Args& args) {
  if (args.empty()) throw UsageError{"info: no file given"};
  const std::string path(args.next());
  if (!args.empty()) throw UsageError{"info: only one file may be given"};

  const ggufs::FileSource src(path);
  const ggufs::GgufFile file = ggufs::parse_gguf(src, path);
  std::printf("# data_offset\tfile_size\ttensor_count\tkv_count\n%llu\t%llu\t%llu\t%llu\n",
              static_cast<unsigned long long>(file.data_offset),
              static_cast<unsigned long long>(file.file_size),
              static_cast<unsigned long long>(file.tensor_count),
              static_cast<unsigned long long>(file.kv_count));
  return 0;
}

// --- synthetic models: write-vocab, write-sparse -----------------------------------------------

/// `n` distinct token strings of 1 to 16 bytes, always the same for the same `n`: first the 256
/// byte tokens <0x00>…<0xFF> of a SentencePiece vocabulary, then word pieces, short ones the
/// most common, about half starting with U+2581 (SentencePiece's word-start mark), some holding
/// a multi-byte UTF-8 letter. Real vocabularies look like this, so the parser and the metadata
/// renderers see realistic string sizes.
std::vector<std::string> make_tokens(std::uint64_t n) {
  // Letters roughly in proportion to their frequency in English text.
  static constexpr std::string_view kLetters =
      "eeeeeeeeeeeetttttttttaaaaaaaaooooooooiiiiiiinnnnnnnsssssshhhhhhrrrrrrddddllllcccuuummmww"
      "ffggyyppbbvkjxqz";
  static constexpr std::string_view kWide[] = {"\xc3\xa9",    "\xc3\xbc",     "\xc3\xb1",
                                               "\xd0\xb6",    "\xe4\xb8\xad", "\xe3\x81\xae",
                                               "\xed\x95\x9c"};
  static constexpr std::string_view kMark = "\xe2\x96\x81";  // U+2581

  std::vector<std::string> tokens;
  tokens.reserve(n);
  std::unordered_set<std::string> seen;
  for (unsigned b = 0; b < 256 && tokens.size() < n; ++b) {
    char text[8];
    std::snprintf(text, sizeof text, "<0x%02X>", b);
    seen.insert(tokens.emplace_back(text));
  }
  Random random(0x70c3e45);
  while (tokens.size() < n) {
    // The smaller of two uniform draws: short tokens come more often than long ones.
    const std::size_t len = 1 + std::min(random.next() % 16, random.next() % 16);
    std::string t;
    if (len >= 4 && random.next() % 2) t = kMark;
    const std::size_t first = t.size();  // of the word after the mark
    while (t.size() < len) {
      std::string_view piece = kLetters.substr(random.next() % kLetters.size(), 1);
      if (random.next() % 24 == 0) {
        const std::string_view wide = kWide[random.next() % std::size(kWide)];
        if (t.size() + wide.size() <= len) piece = wide;
      }
      t += piece;
    }
    if (random.next() % 8 == 0 && t[first] >= 'a' && t[first] <= 'z') {
      t[first] = static_cast<char>(t[first] - 'a' + 'A');  // a capitalised word
    }
    if (seen.insert(t).second) tokens.push_back(std::move(t));
  }
  return tokens;
}

/// Tensor `i` of a synthetic model: blk.<layer>.<role>.weight, the nine roles of a llama layer.
std::string layer_tensor_name(std::uint64_t i) {
  static constexpr std::string_view kRoles[] = {"attn_norm", "attn_q",      "attn_k",
                                                "attn_v",    "attn_output", "ffn_norm",
                                                "ffn_gate",  "ffn_up",      "ffn_down"};
  return "blk." + std::to_string(i / std::size(kRoles)) + "." +
         std::string(kRoles[i % std::size(kRoles)]) + ".weight";
}

/// The metadata of a synthetic llama-like model named `name` with the vocabulary `vocab`
/// (tokenizer.ggml.tokens, in order).
std::vector<std::pair<std::string, ggufs::Value>> synthetic_metadata(
    const std::string& name, const std::vector<std::string>& vocab) {
  using ggufs::Value;
  using ggufs::ValueType;
  ggufs::Array tokens(ValueType::kString);
  tokens.reserve(vocab.size());
  for (const std::string& t : vocab) tokens.push_string(t);
  std::vector<std::pair<std::string, Value>> kv;
  kv.emplace_back("general.architecture", Value{ValueType::kString, std::string("llama")});
  kv.emplace_back("general.name", Value{ValueType::kString, name});
  kv.emplace_back("tokenizer.ggml.model", Value{ValueType::kString, std::string("llama")});
  kv.emplace_back("tokenizer.ggml.tokens", Value{ValueType::kArray, std::move(tokens)});
  return kv;
}

/// Parses "OUT.gguf" and the count options of write-vocab, write-sparse and write-llama; `counts`
/// maps each option to its variable and its largest accepted value.
std::string parse_writer_args(
    Args& args, std::string_view command,
    std::span<const std::tuple<std::string_view, std::uint64_t*, std::uint64_t>> counts) {
  std::string out;
  while (!args.empty()) {
    const std::string_view arg = args.next();
    bool matched = false;
    for (const auto& [opt, var, max] : counts) {
      if (!Args::is(arg, opt)) continue;
      *var = parse_u64(args.value(opt, arg), opt);
      if (*var == 0 || *var > max) {
        throw UsageError{std::string(opt) + ": not from 1 to " + std::to_string(max)};
      }
      matched = true;
    }
    if (matched) continue;
    if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError{std::string(command) + ": unknown option '" + std::string(arg) + "'"};
    }
    if (!out.empty())
      throw UsageError{std::string(command) + ": only one output file may be given"};
    out = arg;
  }
  if (out.empty()) throw UsageError{std::string(command) + ": no output file given"};
  return out;
}

int cmd_write_vocab(Args& args) {
  std::uint64_t n_tokens = 256000;
  std::uint64_t n_tensors = 2000;
  const std::tuple<std::string_view, std::uint64_t*, std::uint64_t> counts[] = {
      {"--tokens", &n_tokens, 10'000'000}, {"--tensors", &n_tensors, 1'000'000}};
  const std::string out = parse_writer_args(args, "write-vocab", counts);

  ggufs::GgufWriter w;
  for (auto& [key, value] :
       synthetic_metadata("ggufs mount-time benchmark", make_tokens(n_tokens))) {
    w.add(key, std::move(value));
  }
  constexpr std::size_t kElements = 32;
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    std::vector<std::uint8_t> data(kElements * sizeof(float));
    for (std::size_t e = 0; e < kElements; ++e) {
      const float v = static_cast<float>(i % 1000) * 0.001f + static_cast<float>(e);
      std::memcpy(data.data() + e * sizeof(float), &v, sizeof(float));
    }
    w.add_tensor(layer_tensor_name(i), ggufs::GGML_TYPE_F32, {kElements}, std::move(data));
  }
  w.write_file(out);
  return 0;
}

int cmd_write_sparse(Args& args) {
  std::uint64_t data_mib = 8192;
  std::uint64_t n_tensors = 320;
  std::uint64_t n_tokens = 32000;
  const std::tuple<std::string_view, std::uint64_t*, std::uint64_t> counts[] = {
      {"--data-mib", &data_mib, std::uint64_t{1} << 24},
      {"--tensors", &n_tensors, 100'000},
      {"--tokens", &n_tokens, 10'000'000}};
  const std::string out = parse_writer_args(args, "write-sparse", counts);

  // The types of the benchmark model, in turn; every tensor has ne = {kRow, rows}.
  static constexpr ggufs::GgmlType kTypes[] = {ggufs::GGML_TYPE_F32, ggufs::GGML_TYPE_F16,
                                               ggufs::GGML_TYPE_Q8_0, ggufs::GGML_TYPE_Q4_K,
                                               ggufs::GGML_TYPE_Q6_K};
  auto row_bytes = [](std::uint32_t type) {
    const ggufs::TypeTraits& t = *ggufs::type_traits(type);
    return kRow / t.block_size * t.type_size;
  };
  std::uint64_t all_rows_bytes = 0;  // one row of every tensor
  for (std::uint64_t i = 0; i < n_tensors; ++i) all_rows_bytes += row_bytes(kTypes[i % 5]);
  const std::uint64_t rows = std::max<std::uint64_t>(1, data_mib * kMiB / all_rows_bytes);

  // GgufWriter::write_file() writes every byte of the data; here only the header is written
  // (with the writer's ByteWriter, in the same layout: GGUF v3, alignment 32), and ftruncate
  // extends the file over the data, leaving a hole.
  constexpr std::uint64_t kAlignment = 32;
  const auto metadata = synthetic_metadata("ggufs sparse benchmark", make_tokens(n_tokens));
  ggufs::ByteWriter w;
  w.bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>("GGUF"), 4));
  w.u32(3);
  w.u64(n_tensors);
  w.u64(metadata.size());
  for (const auto& [key, value] : metadata) {
    w.str(key);
    w.u32(static_cast<std::uint32_t>(value.type));
    w.value(value);
  }
  std::uint64_t end = 0;  // of the data so far, relative to the data section
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    const std::uint64_t offset = (end + kAlignment - 1) / kAlignment * kAlignment;
    w.str(layer_tensor_name(i));
    w.u32(2);
    w.u64(kRow);
    w.u64(rows);
    w.u32(kTypes[i % 5]);
    w.u64(offset);
    end = offset + rows * row_bytes(kTypes[i % 5]);
  }
  w.pad_to(kAlignment);
  const std::vector<std::uint8_t>& header = w.data();

  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw ggufs::IoError(out + ": cannot create: " + std::strerror(errno));
  std::string error;
  for (std::size_t done = 0; done < header.size() && error.empty();) {
    const ssize_t n = ::write(fd, header.data() + done, header.size() - done);
    if (n < 0 && errno != EINTR) error = std::strerror(errno);
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  if (error.empty() && ::ftruncate(fd, static_cast<off_t>(header.size() + end)) != 0) {
    error = std::strerror(errno);
  }
  if (::close(fd) != 0 && error.empty()) error = std::strerror(errno);
  if (!error.empty()) {
    ::unlink(out.c_str());
    throw ggufs::IoError(out + ": cannot write: " + error);
  }
  return 0;
}

// --- write-llama -------------------------------------------------------------------------------

// The shape of TinyLlama-1.1B (its config.json: hidden_size 2048, intermediate_size 5632,
// num_attention_heads 32, num_key_value_heads 4, max_position_embeddings 2048, rms_norm_eps
// 1e-5, rope_theta 10000); only the layer count and the vocabulary size vary.
constexpr std::uint64_t kLlamaEmbd = 2048;
constexpr std::uint64_t kLlamaFf = 5632;
constexpr std::uint64_t kLlamaHeads = 32;
constexpr std::uint64_t kLlamaKvHeads = 4;
constexpr std::uint64_t kLlamaHeadDim = kLlamaEmbd / kLlamaHeads;  // 64: the rope dimension
constexpr std::uint64_t kLlamaContext = 2048;

/// One tensor of a write-llama model: name, ggml type and ne (ne[0] fastest).
struct LlamaTensor {
  std::string name;
  std::uint32_t type = 0;
  std::vector<std::uint64_t> ne;
};

/// The tensors of a llama of `n_layer` layers and `n_vocab` tokens with the types llama-quantize
/// gives them for Q4_K_M (llama.cpp src/llama-quant.cpp, llama_tensor_get_type): Q4_K by
/// default; Q6_K for output.weight, and for attn_v and ffn_down of the layers where its
/// use_more_bits(i, n) holds (the first and last eighth, and every third layer between:
/// about half); token_embd.weight keeps Q4_K; the 1-D norms stay F32. Names, order and shapes
/// as convert_hf_to_gguf.py writes a llama (gguf-py tensor names; linear weights are
/// ne = {in, out}, the embedding {n_embd, n_vocab}).
std::vector<LlamaTensor> llama_q4_k_m_tensors(std::uint64_t n_layer, std::uint64_t n_vocab) {
  using ggufs::GGML_TYPE_F32, ggufs::GGML_TYPE_Q4_K, ggufs::GGML_TYPE_Q6_K;
  const auto more_bits = [n_layer](std::uint64_t i) {
    return i < n_layer / 8 || i >= 7 * n_layer / 8 || (i - n_layer / 8) % 3 == 2;
  };
  constexpr std::uint64_t kKv = kLlamaKvHeads * kLlamaHeadDim;  // rows of attn_k and attn_v
  // Type and ne of each role, in the order of layer_tensor_name's roles: attn_norm, attn_q,
  // attn_k, attn_v, attn_output, ffn_norm, ffn_gate, ffn_up, ffn_down; kByLayer marks attn_v
  // and ffn_down, whose type depends on the layer.
  constexpr std::uint32_t kByLayer = ~std::uint32_t{0};
  static constexpr std::uint32_t kTypes[] = {GGML_TYPE_F32,  GGML_TYPE_Q4_K, GGML_TYPE_Q4_K,
                                             kByLayer,       GGML_TYPE_Q4_K, GGML_TYPE_F32,
                                             GGML_TYPE_Q4_K, GGML_TYPE_Q4_K, kByLayer};
  const std::vector<std::uint64_t> ne[] = {
      {kLlamaEmbd},           {kLlamaEmbd, kLlamaEmbd}, {kLlamaEmbd, kKv},
      {kLlamaEmbd, kKv},      {kLlamaEmbd, kLlamaEmbd}, {kLlamaEmbd},
      {kLlamaEmbd, kLlamaFf}, {kLlamaEmbd, kLlamaFf},   {kLlamaFf, kLlamaEmbd}};
  std::vector<LlamaTensor> t;
  t.push_back({"token_embd.weight", GGML_TYPE_Q4_K, {kLlamaEmbd, n_vocab}});
  for (std::uint64_t i = 0; i < 9 * n_layer; ++i) {
    const std::uint64_t role = i % 9;
    const std::uint32_t type = kTypes[role] != kByLayer ? kTypes[role]
                               : more_bits(i / 9)       ? GGML_TYPE_Q6_K
                                                        : GGML_TYPE_Q4_K;
    t.push_back({layer_tensor_name(i), type, ne[role]});
  }
  t.push_back({"output_norm.weight", GGML_TYPE_F32, {kLlamaEmbd}});
  t.push_back({"output.weight", GGML_TYPE_Q6_K, {kLlamaEmbd, n_vocab}});
  return t;
}

/// Stored bytes of `t`: ne[0] / block size blocks per row (ne[0] is a multiple of it here).
std::uint64_t stored_bytes(const LlamaTensor& t) {
  const ggufs::TypeTraits& traits = *ggufs::type_traits(t.type);
  std::uint64_t n = t.ne[0] / traits.block_size * traits.type_size;
  for (std::size_t d = 1; d < t.ne.size(); ++d) n *= t.ne[d];
  return n;
}

std::uint64_t llama_data_bytes(std::uint64_t n_layer, std::uint64_t n_vocab) {
  std::uint64_t n = 0;
  for (const LlamaTensor& t : llama_q4_k_m_tensors(n_layer, n_vocab)) n += stored_bytes(t);
  return n;
}

/// A streamed tensor of `n_bytes` of type `type`: F32 tensors (the norms) are all 1.0; quantized
/// ones pseudo-random bytes from `seed`, except that each block's fp16 scales hold 2^-10, so no
/// block holds a NaN or infinite scale (ggml-common.h: block_q4_K begins with its d and dmin,
/// block_q6_K ends with its d).
ggufs::GgufWriter::TensorProducer llama_tensor_bytes(std::uint32_t type, std::uint64_t n_bytes,
                                                     std::uint64_t seed) {
  return [type, n_bytes, seed](const ggufs::GgufWriter::ByteSink& sink) {
    const ggufs::TypeTraits& traits = *ggufs::type_traits(type);
    std::vector<std::size_t> half_offsets;  // of the fp16 scales in a block
    if (type == ggufs::GGML_TYPE_Q4_K) half_offsets = {0, 2};
    if (type == ggufs::GGML_TYPE_Q6_K) half_offsets = {traits.type_size - 2};
    const std::uint16_t scale = ggufs::float_to_half(0x1p-10f);
    const std::size_t chunk_bytes = kMiB / traits.type_size * traits.type_size;  // whole blocks
    Random random(seed);
    std::vector<std::uint8_t> chunk;
    for (std::uint64_t done = 0; done < n_bytes; done += chunk.size()) {
      chunk.resize(std::min<std::uint64_t>(chunk_bytes, n_bytes - done));
      if (type == ggufs::GGML_TYPE_F32) {
        const float one = 1.0f;
        for (std::size_t i = 0; i < chunk.size(); i += sizeof one) {
          std::memcpy(chunk.data() + i, &one, sizeof one);
        }
      } else {
        random.fill(chunk);
        for (std::size_t b = 0; b < chunk.size(); b += traits.type_size) {
          for (std::size_t off : half_offsets) std::memcpy(chunk.data() + b + off, &scale, 2);
        }
      }
      sink(chunk);
    }
  };
}

int cmd_write_llama(Args& args) {
  std::uint64_t mib = 1024;
  std::uint64_t n_tokens = 32000;
  const std::tuple<std::string_view, std::uint64_t*, std::uint64_t> counts[] = {
      {"--mib", &mib, 65536}, {"--tokens", &n_tokens, 10'000'000}};
  const std::string out = parse_writer_args(args, "write-llama", counts);
  // <unk>, <s>, </s>, then make_tokens' 256 byte tokens: llama.cpp's SPM vocabulary looks up
  // '\n' as <0x0A> (llama-vocab.cpp, byte_to_token).
  if (n_tokens < 3 + 256) throw UsageError{"--tokens: write-llama needs at least 259"};

  // The most layers (at least 1) whose tensor data fits in N MiB: binary search, as the data
  // grows with the layer count.
  const std::uint64_t target = mib * kMiB;
  std::uint64_t lo = 1, hi = mib;  // every layer takes more than 1 MiB
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    if (llama_data_bytes(mid, n_tokens) <= target) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const std::uint64_t n_layer = lo;

  // The vocabulary of a llama SentencePiece model: token types as gguf-py's TokenType (1 normal,
  // 2 unknown, 3 control, 6 byte); scores 0 for the special and byte tokens and falling after
  // them, as in llama's tokenizer.model.
  std::vector<std::string> vocab = {"<unk>", "<s>", "</s>"};
  for (std::string& t : make_tokens(n_tokens - 3)) vocab.push_back(std::move(t));
  ggufs::Array scores(ggufs::ValueType::kFloat32), types(ggufs::ValueType::kInt32);
  scores.reserve(n_tokens);
  types.reserve(n_tokens);
  for (std::uint64_t i = 0; i < n_tokens; ++i) {
    const float score = i < 259 ? 0.0f : -static_cast<float>(i - 258);
    scores.push_scalar_bits(std::bit_cast<std::uint32_t>(score));
    types.push_scalar_bits(i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1);
  }

  // The keys convert_hf_to_gguf.py writes for a llama (TextModel and LlamaModel
  // set_gguf_parameters, the special vocabulary), with llama-quantize's general.file_type 15
  // (LLAMA_FTYPE_MOSTLY_Q4_K_M) and general.quantization_version 2.
  using ggufs::Value, ggufs::ValueType;
  ggufs::GgufWriter w;
  for (auto& [key, value] : synthetic_metadata("ggufs llama benchmark", vocab)) {
    w.add(key, std::move(value));
  }
  w.add_string("general.type", "model");
  w.add_u32("llama.block_count", static_cast<std::uint32_t>(n_layer));
  w.add_u32("llama.context_length", kLlamaContext);
  w.add_u32("llama.embedding_length", kLlamaEmbd);
  w.add_u32("llama.feed_forward_length", kLlamaFf);
  w.add_u32("llama.attention.head_count", kLlamaHeads);
  w.add_u32("llama.attention.head_count_kv", kLlamaKvHeads);
  w.add_f32("llama.rope.freq_base", 10000.0f);
  w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_u32("general.file_type", 15);
  w.add_u32("llama.vocab_size", static_cast<std::uint32_t>(n_tokens));
  w.add_u32("llama.rope.dimension_count", kLlamaHeadDim);
  w.add_u32("general.quantization_version", 2);
  w.add("tokenizer.ggml.scores", Value{ValueType::kArray, std::move(scores)});
  w.add("tokenizer.ggml.token_type", Value{ValueType::kArray, std::move(types)});
  w.add_u32("tokenizer.ggml.bos_token_id", 1);
  w.add_u32("tokenizer.ggml.eos_token_id", 2);
  w.add_u32("tokenizer.ggml.unknown_token_id", 0);
  w.add("tokenizer.ggml.add_bos_token", Value{ValueType::kBool, true});
  w.add("tokenizer.ggml.add_eos_token", Value{ValueType::kBool, false});

  std::uint64_t seed = 0x11a3a000u;
  for (LlamaTensor& t : llama_q4_k_m_tensors(n_layer, n_tokens)) {
    const std::uint64_t n_bytes = stored_bytes(t);
    w.add_tensor_stream(std::move(t.name), t.type, std::move(t.ne), n_bytes,
                        llama_tensor_bytes(t.type, n_bytes, ++seed));
  }
  w.write_file(out);
  return 0;
}

int cmd_write_split(Args& args) {
  std::string in, prefix;
  std::uint64_t shards = 3;
  while (!args.empty()) {
    const std::string_view arg = args.next();
    if (Args::is(arg, "--shards")) {
      shards = parse_u64(args.value("--shards", arg), "--shards");
      if (shards == 0 || shards > 99) throw UsageError{"--shards: not from 1 to 99"};
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError{"write-split: unknown option '" + std::string(arg) + "'"};
    } else if (in.empty()) {
      in = arg;
    } else if (prefix.empty()) {
      prefix = arg;
    } else {
      throw UsageError{"write-split: takes IN.gguf and PREFIX only"};
    }
  }
  if (prefix.empty()) throw UsageError{"write-split: IN.gguf and PREFIX are needed"};
  const ggufs::FileSource src(in);
  const ggufs::GgufFile f = ggufs::parse_gguf(src, in);
  const std::uint64_t n = f.tensors.size();
  const auto count = static_cast<std::uint32_t>(shards);
  for (std::uint32_t s = 0; s < count; ++s) {
    ggufs::GgufWriter w;
    if (s == 0) {
      for (const ggufs::KeyValue& kv : f.kv) {
        if (kv.key != "general.alignment") w.add(kv.key, kv.value);
      }
    }
    w.set_alignment(f.alignment);
    w.add("split.no", {ggufs::ValueType::kUint16, std::uint64_t{s}});
    w.add("split.count", {ggufs::ValueType::kUint16, std::uint64_t{count}});
    w.add("split.tensors.count", {ggufs::ValueType::kInt32, static_cast<std::int64_t>(n)});
    for (std::uint64_t i = n * s / count; i < n * (s + 1) / count; ++i) {
      const ggufs::TensorInfo& t = f.tensors[i];
      if (!t.n_bytes) throw ggufs::IoError(in + ": tensor '" + t.name + "' has no known size");
      w.add_tensor_stream(t.name, t.type, {t.ne.begin(), t.ne.begin() + t.n_dims}, *t.n_bytes,
                          [&src, &t](const ggufs::GgufWriter::ByteSink& sink) {
                            std::vector<std::uint8_t> buf(kMiB);
                            for (std::uint64_t done = 0; done < *t.n_bytes;) {
                              const std::size_t k = static_cast<std::size_t>(
                                  std::min<std::uint64_t>(kMiB, *t.n_bytes - done));
                              if (src.read_at(t.file_offset + done, buf.data(), k) != k) {
                                throw ggufs::IoError("short read of tensor '" + t.name + "'");
                              }
                              sink({buf.data(), k});
                              done += k;
                            }
                          });
    }
    w.write_file(ggufs::shard_path(prefix, s + 1, count));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("ggufs-bench: no command given (see --help)\n", stderr);
    return 1;
  }
  const std::string_view command = argv[1];
  if (command == "-h" || command == "--help") {
    std::fwrite(kUsage.data(), 1, kUsage.size(), stdout);
    return 0;
  }
  Args args(argc, argv, 2);
  try {
    if (command == "kernels") return cmd_kernels(args);
    if (command == "write-all-types") return cmd_write_all_types(args);
    if (command == "tensors") return cmd_tensors(args);
    if (command == "read") return cmd_read(args);
    if (command == "random") return cmd_random(args);
    if (command == "info") return cmd_info(args);
    if (command == "write-vocab") return cmd_write_vocab(args);
    if (command == "write-sparse") return cmd_write_sparse(args);
    if (command == "write-llama") return cmd_write_llama(args);
    if (command == "write-split") return cmd_write_split(args);
    throw UsageError{"unknown command '" + std::string(command) + "'"};
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ggufs-bench: %s (see --help)\n", e.message.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufs-bench: %s\n", e.what());
    return 2;
  }
}
