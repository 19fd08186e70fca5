// Two real GGUF clients for the tests, run from Node.js: llama.cpp through node-llama-cpp (its
// prebuilt CPU binary) and Hugging Face's JavaScript reader @huggingface/gguf. A test can check
// that a file (for example one served through a mount) loads in them exactly as the original.
// scripts/install-deps installs both packages (kNodeModulesDefault); tests skip with a message
// where they are missing. The work is done by tests/support/llama_next_token.mjs and
// tests/support/gguf_js_dump.mjs, each run with a time limit so a hang cannot stall the suite.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mount_util.h"
#include "test_util.h"

namespace ggufs::test {

/// The node_modules folder where scripts/install-deps installs the Node.js packages.
inline constexpr const char* kNodeModulesDefault = "/var/cache/ggufs-tests/node/node_modules";

/// Seconds a Node.js client may run before it is killed (a model load takes a few seconds).
inline constexpr int kNodeClientTimeoutSeconds = 120;

/// The node_modules folder of the clients: $GGUFS_TEST_NODE_MODULES if set, else
/// kNodeModulesDefault.
inline std::filesystem::path node_modules_dir() {
  const char* env = std::getenv("GGUFS_TEST_NODE_MODULES");
  return env && *env ? env : kNodeModulesDefault;
}

/// The node binary: $GGUFS_TEST_NODE if set, else the first `node` on PATH; "" when none.
inline std::string node_binary() {
  if (const char* env = std::getenv("GGUFS_TEST_NODE"); env && *env) return env;
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string node = (end > start ? dirs.substr(start, end - start) : ".") + "/node";
    if (::access(node.c_str(), X_OK) == 0) return node;
    start = end + 1;
  }
  return "";
}

/// Why the Node.js clients cannot run here ("" when they can): no node, a node older than 20
/// (what node-llama-cpp 3.22 and @huggingface/gguf require), or a package missing from
/// node_modules_dir(), including node-llama-cpp's prebuilt binary for this CPU.
inline std::string node_clients_missing() {
  const std::string node = node_binary();
  if (node.empty()) return "node is missing (scripts/install-deps installs it)";
  const RunResult version = run(quote(node) + " --version 2>/dev/null");
  // "v20.20.2": the major version is the number after the "v".
  if (version.exit_code != 0 || version.output.size() < 2 || version.output[0] != 'v' ||
      std::atoi(version.output.c_str() + 1) < 20) {
    return node + " is not Node.js 20 or later (" + version.output + ")";
  }
#if defined(__x86_64__)
  const char* binary_package = "@node-llama-cpp/linux-x64";
#elif defined(__aarch64__)
  const char* binary_package = "@node-llama-cpp/linux-arm64";
#else
  const char* binary_package = nullptr;
#endif
  if (!binary_package) return "node-llama-cpp has no prebuilt binary for this CPU";
  const std::filesystem::path modules = node_modules_dir();
  for (const char* package : {"node-llama-cpp", binary_package, "@huggingface/gguf"}) {
    if (!std::filesystem::exists(modules / package / "package.json")) {
      return std::string("the npm package ") + package + " is missing from " + modules.string() +
             " (scripts/install-deps installs it; GGUFS_TEST_NODE_MODULES names another " +
             "node_modules folder)";
    }
  }
  return "";
}

/// Skips the current test with a message when the Node.js clients cannot run.
#define GGUFS_REQUIRE_NODE_CLIENTS()                                               \
  if (const std::string why = ::ggufs::test::node_clients_missing(); !why.empty()) \
  GTEST_SKIP() << why

/// Runs tests/support/`script` with node and `args`, killed after kNodeClientTimeoutSeconds,
/// and returns its stdout. Throws std::runtime_error with the script's stderr when it fails.
inline std::string run_node_client(const std::string& script,
                                   const std::vector<std::string>& args) {
  TempDir dir;
  const auto err = dir.path() / "stderr";
  // coreutils' timeout: SIGTERM at the limit, SIGKILL 10 s later for a process that ignores it.
  std::string cmd = "GGUFS_TEST_NODE_MODULES=" + quote(node_modules_dir()) + " timeout -k 10 " +
                    std::to_string(kNodeClientTimeoutSeconds) + " " + quote(node_binary()) + " " +
                    quote(std::filesystem::path(GGUFS_SOURCE_DIR) / "tests" / "support" / script);
  for (const auto& a : args) cmd += " " + quote(a);
  const RunResult r = run(cmd + " 2>" + quote(err));
  if (r.exit_code != 0) {
    const std::string why =
        r.exit_code == 124 || r.exit_code == 137
            ? "timed out after " + std::to_string(kNodeClientTimeoutSeconds) + " s"
            : "exit code " + std::to_string(r.exit_code);
    throw std::runtime_error(script + " failed (" + why + "): " + read_text(err));
  }
  return r.output;
}

/// What llama.cpp computes after a prompt: the greedy next token and the five highest raw logits
/// (float32 values, exact in a double), highest first.
struct LlamaNextToken {
  int next = -1;
  std::vector<std::pair<int, double>> top5;
};

/// Loads `model_path` with llama.cpp (node-llama-cpp 3.22, CPU; a split model from its first
/// shard), evaluates "Hello world" without BOS (tokens 15043 3186) in a 128-token context and
/// returns the next token at temperature 0 with the top-5 logits. Throws std::runtime_error with
/// llama.cpp's message when the model does not load.
inline LlamaNextToken llama_next_token(const std::string& model_path) {
  const std::string out = run_node_client("llama_next_token.mjs", {model_path});
  try {
    const auto j = nlohmann::json::parse(out);
    LlamaNextToken r;
    r.next = j.at("next").get<int>();
    for (const auto& e : j.at("top5"))
      r.top5.emplace_back(e.at(0).get<int>(), e.at(1).get<double>());
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("llama_next_token.mjs printed no result (") + e.what() +
                             "): " + out);
  }
}

/// `path` as @huggingface/gguf reads it: {"version", "littleEndian", "tensorDataOffset",
/// "metadata": {key: {"type", "value"[, "subType"]}}, "tensorInfos": [{"name", "n_dims",
/// "shape", "dtype", "offset"}]}, types being GGUF value type numbers and dtypes ggml type
/// numbers. 64-bit integers (counts, shapes, offsets, uint64/int64 values) are decimal strings,
/// and NaN, ±Infinity and -0 the strings "NaN", "Infinity", "-Infinity", "-0" (see
/// tests/support/gguf_js_dump.mjs). Throws std::runtime_error when the reader refuses the file.
inline nlohmann::json gguf_js_dump(const std::string& path) {
  const std::string out = run_node_client("gguf_js_dump.mjs", {path});
  try {
    return nlohmann::json::parse(out);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("gguf_js_dump.mjs printed no JSON (") + e.what() +
                             "): " + out.substr(0, 1000));
  }
}

/// split/README.md of the shared test data: llama.cpp's greedy next token and top-5 logits after
/// "Hello world" (no BOS) for the tiny llama, whole or split.
inline constexpr int kReferenceNext = 19356;
inline const std::vector<std::pair<int, double>> kReferenceTop5 = {
    {19356, 0.2508251368999481},  {25431, 0.23515331745147705}, {24347, 0.22883956134319305},
    {24077, 0.21411029994487762}, {5661, 0.2089448869228363},
};

/// Expects llama.cpp to load `model` and give exactly the reference next token and logits.
inline void expect_llama_reference(const std::filesystem::path& model) {
  const LlamaNextToken r = llama_next_token(model.string());
  EXPECT_EQ(r.next, kReferenceNext) << model;
  ASSERT_EQ(r.top5.size(), kReferenceTop5.size()) << model;
  for (std::size_t i = 0; i < kReferenceTop5.size(); ++i) {
    EXPECT_EQ(r.top5[i].first, kReferenceTop5[i].first) << model << " rank " << i;
    // Exact: the same float32 logit, read back from JS's shortest round-trip text.
    EXPECT_EQ(r.top5[i].second, kReferenceTop5[i].second) << model << " rank " << i;
  }
}

}  // namespace ggufs::test
