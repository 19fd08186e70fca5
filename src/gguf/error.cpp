#include "ggufs/error.h"

#include <fmt/format.h>

namespace ggufs {

ParseError::ParseError(std::string file, std::uint64_t offset, std::string problem)
    : std::runtime_error(fmt::format("{}: at byte {}: {}", file, offset, problem)),
      file_(std::move(file)),
      offset_(offset),
      problem_(std::move(problem)) {}

}  // namespace ggufs
