#include "ggufs/error.h"

#include <fmt/format.h>

#include <new>
#include <system_error>

#include "ggufs/names.h"

namespace ggufs {

ParseError::ParseError(std::string file, std::uint64_t offset, std::string problem)
    : std::runtime_error(fmt::format("{}: at byte {}: {}", file, offset, problem)),
      file_(std::move(file)),
      offset_(offset),
      problem_(std::move(problem)) {}

std::string ParseError::line() const {
  return fmt::format("{}: at byte {}: {}", printable(file_), offset_, problem_);
}

std::optional<std::string> not_enough_memory(const std::exception& e, std::string_view to) {
  std::string cause;
  if (dynamic_cast<const std::bad_alloc*>(&e)) {
    cause = e.what();
  } else if (const auto* s = dynamic_cast<const std::system_error*>(&e);
             s && (s->code() == std::errc::resource_unavailable_try_again ||
                   s->code() == std::errc::not_enough_memory)) {
    cause = s->code().message();  // without what()'s prefix, if the thrower added one
  } else {
    return std::nullopt;
  }
  return fmt::format("not enough memory to {} ({})", to, cause);
}

}  // namespace ggufs
