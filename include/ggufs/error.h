// Errors raised by ggufs and the process exit codes they map to.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ggufs {

/// Process exit codes of the `ggufs` command (documented in the README).
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,        ///< bad command line
  kExitCannotRead = 2,   ///< the model file cannot be opened or read
  kExitInvalidGguf = 3,  ///< the file is not a valid GGUF file (or a variant not supported yet)
  kExitMountFailed = 4,  ///< FUSE could not mount or serve
};

/// What went wrong with the backing file while it was mounted (one log line per kind).
enum class Fault {
  kReadError,  ///< the OS failed a read (EIO from the device, a dead network or FUSE mount)
  kTruncated,  ///< the file shrank below a byte that was asked for
  kModified,   ///< its modification time or size changed: its bytes can no longer be trusted
  kReplaced,   ///< its path now names another file (renamed over): ours is no longer the model
};

/// The file cannot be opened or read (an OS error), as opposed to being malformed.
class IoError : public std::runtime_error {
 public:
  explicit IoError(const std::string& what, Fault fault = Fault::kReadError, int os_error = 0)
      : std::runtime_error(what), fault_(fault), os_error_(os_error) {}
  Fault fault() const { return fault_; }
  /// The errno of an open or stat that failed (ENOENT, EACCES, ...), 0 otherwise: the Python
  /// package raises FileNotFoundError or PermissionError where the OS says so.
  int os_error() const { return os_error_; }

 private:
  Fault fault_;
  int os_error_;
};

/// A view cannot hold the values a tensor holds, found only once its blocks are read (mlx/'s MLX
/// forms: an MXFP4 exponent byte 255, an infinite d of a d·(q − k) form, NaN, infinity or a range
/// that overflows float32 in a requantized row): that read fails (EIO, one line), the file and
/// the other reads are fine.
class UnrepresentableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A GGUF file is malformed or unsupported. what() is the full message
/// "FILE: at byte OFFSET: PROBLEM"; the parts are kept for tests and callers. PROBLEM quotes
/// names from the file only through printable(), so it holds no control bytes.
class ParseError : public std::runtime_error {
 public:
  ParseError(std::string file, std::uint64_t offset, std::string problem);
  const std::string& file() const { return file_; }
  std::uint64_t offset() const { return offset_; }
  const std::string& problem() const { return problem_; }
  /// what() with FILE escaped by printable() (PROBLEM already is): the one line a user is shown,
  /// on stderr or as a model's reason.
  std::string line() const;

 private:
  std::string file_;
  std::uint64_t offset_;
  std::string problem_;
};

/// "not enough memory to TO (CAUSE)" when failure `e` says memory ran out, else nullopt: the one
/// place that tells a shortage of memory from other failures, so every way it shows (a model's
/// `error` file, a view's reason, the log) reads alike. CAUSE is "std::bad_alloc" (what() of a
/// std::bad_alloc) or, for a std::system_error of EAGAIN or ENOMEM, its message ("Resource
/// temporarily unavailable"): std::thread and std::async throw EAGAIN when no thread can start,
/// as pthread_create returns it when a new thread's stack cannot be mapped (POSIX,
/// pthread_create: "lacked the necessary resources"; glibc's allocate_stack turns mmap's ENOMEM
/// under RLIMIT_AS into it).
std::optional<std::string> not_enough_memory(const std::exception& e, std::string_view to);

}  // namespace ggufs
