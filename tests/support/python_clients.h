// The real Python clients of the tests (safetensors, torch, NumPy), from the virtual environment
// scripts/install-deps makes from tests/python/requirements.txt.
#pragma once

#include <unistd.h>

#include <string>

#include "mount_util.h"

namespace ggufs::test {

/// The virtual environment's interpreter.
inline constexpr const char* kVenvPython = "/var/cache/ggufs-tests/venv/bin/python";

/// Whether the virtual environment is there with safetensors and torch importable.
inline bool have_python_clients() {
  static const bool ok =
      ::access(kVenvPython, X_OK) == 0 &&
      run(std::string(kVenvPython) + " -c 'import safetensors, torch, numpy' >/dev/null 2>&1")
              .exit_code == 0;
  return ok;
}

#define GGUFS_REQUIRE_PYTHON_CLIENTS()                                                        \
  if (!::ggufs::test::have_python_clients())                                                  \
  GTEST_SKIP() << ::ggufs::test::kVenvPython                                                  \
               << " cannot import safetensors and torch: run scripts/install-deps (it makes " \
                  "the tests' virtual environment from tests/python/requirements.txt)"

/// Runs `script` with the virtual environment's Python and `args` (already quoted), in
/// tests/support (so its modules import); stdout and stderr together.
inline RunResult venv_python(const std::string& script, const std::string& args) {
  return run("cd " GGUFS_SOURCE_DIR "/tests/support && " + std::string(kVenvPython) + " -c " +
             quote(script) + " " + args + " 2>&1");
}

}  // namespace ggufs::test
