// ggufs-bench: the measuring helpers behind scripts/bench. Kernel throughput in-process (every
// decodable type, against memcpy), a GGUF file with one tensor of every decodable type, the
// tensor list of a file with byte offsets, and sequential 1 MiB reads of files or byte ranges
// (the backing file natively, or files through a mount). Mounting is left to the script.
// Benchmarks only: nothing here runs in the test suite and nothing asserts on timings.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/error.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"

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
    "      warm-up. The first row is single-thread memcpy of the same N MiB, the baseline.\n"
    "      Columns: type, id, out_MB, MB_per_s (float32 output), x_memcpy.\n"
    "  write-all-types OUT.gguf [--mib-per-type N]\n"
    "      Writes one tensor per decodable type, named bench.<type in lower case>\n"
    "      (bench.q4_k), each of N MiB (default 32) of float32 output, ne = {4096, rows}, holding\n"
    "      deterministic pseudo-random bytes; streamed, so memory stays small.\n"
    "  tensors FILE.gguf\n"
    "      Columns: name, type, id, file_offset, n_bytes, f32_bytes (0 when not decodable).\n"
    "  read [--passes N] [--range OFFSET:LENGTH] [--flush-mib N] FILE...\n"
    "      Reads each FILE (or its LENGTH bytes from OFFSET) sequentially with 1 MiB read()\n"
    "      calls, N passes (default 2), each pass from a fresh open(). Before each pass the CPU\n"
    "      caches are flushed by writing a scratch buffer of N MiB (default 64, twice the L3 of\n"
    "      the development machines; 0: no flush), so a small file is not read back from L3.\n"
    "      Columns: file, bytes, then MB/s of each pass.\n"
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

  // Output buffers are value-initialised, so every page is touched before any timing.
  std::vector<float> out(n_floats);
  std::printf("# type\tid\tout_MB\tMB_per_s\tx_memcpy\n");

  std::vector<float> copy_src(n_floats, 1.0f);
  const double memcpy_s = best_seconds([&] {
    std::memcpy(out.data(), copy_src.data(), out_bytes);
    clobber(out.data());
  });
  copy_src = {};
  const double memcpy_mbps = mb_per_s(out_bytes, memcpy_s);
  std::printf("memcpy\t-\t%.1f\t%.0f\t1.00\n", static_cast<double>(out_bytes) / 1e6, memcpy_mbps);
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
    const std::uint64_t bytes = n_blocks * t->block_size * sizeof(float);
    const double mbps = mb_per_s(bytes, s);
    std::printf("%.*s\t%u\t%.1f\t%.0f\t%.2f\n", static_cast<int>(t->name.size()), t->name.data(),
                t->id, static_cast<double>(bytes) / 1e6, mbps, mbps / memcpy_mbps);
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

int cmd_read(Args& args) {
  std::uint64_t passes = 2;
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
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError{"read: unknown option '" + std::string(arg) + "'"};
    } else {
      files.emplace_back(arg);
    }
  }
  if (files.empty()) throw UsageError{"read: no file given"};

  std::vector<std::uint8_t> buf(kReadSize, 0);             // touched before any timing
  std::vector<std::uint8_t> scratch(flush_mib * kMiB, 0);  // written before each pass
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
      const auto [n, s] = read_pass(path, range, buf);
      bytes = n;
      mbps.push_back(mb_per_s(n, s));
    }
    std::printf("%s\t%llu", path.c_str(), static_cast<unsigned long long>(bytes));
    for (double v : mbps) std::printf("\t%.0f", v);
    std::printf("\n");
    std::fflush(stdout);
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
    throw UsageError{"unknown command '" + std::string(command) + "'"};
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ggufs-bench: %s (see --help)\n", e.message.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufs-bench: %s\n", e.what());
    return 2;
  }
}
