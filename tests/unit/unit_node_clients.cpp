// The Node.js clients of the tests (tests/support/node_clients.h) against the reference figures
// of the shared test data (split/README.md), not against ggufs: before a mount test trusts
// "llama.cpp loads the served file to these numbers", the harness itself must give those numbers
// on the original files. Skipped where node or the npm packages are missing.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "node_clients.h"
#include "test_util.h"

namespace ggufs::test {
namespace {

void expect_reference(const std::filesystem::path& model) { expect_llama_reference(model); }

TEST(NodeClients, LlamaNextTokenOfOriginalMatchesReference) {
  GGUFS_REQUIRE_TESTDATA(data);
  GGUFS_REQUIRE_NODE_CLIENTS();
  expect_reference(data / "real" / "llama-2-tiny-random.gguf");
}

TEST(NodeClients, LlamaNextTokenOfMergedModelMatchesReference) {
  GGUFS_REQUIRE_TESTDATA(data);
  GGUFS_REQUIRE_NODE_CLIENTS();
  expect_reference(data / "split" / "tiny-llama-merged.gguf");
}

// llama.cpp finds shards 2 and 3 beside the first itself.
TEST(NodeClients, LlamaNextTokenOfFirstShardMatchesReference) {
  GGUFS_REQUIRE_TESTDATA(data);
  GGUFS_REQUIRE_NODE_CLIENTS();
  expect_reference(data / "split" / "tiny-llama-00001-of-00003.gguf");
}

TEST(NodeClients, LlamaNextTokenReportsLoadErrors) {
  GGUFS_REQUIRE_TESTDATA(data);
  GGUFS_REQUIRE_NODE_CLIENTS();
  // A vocabulary-only file: llama.cpp refuses it, and the message says why.
  try {
    llama_next_token((data / "real" / "ggml-vocab-gpt-2.gguf").string());
    ADD_FAILURE() << "a model without tensors loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("token_embd.weight"), std::string::npos) << e.what();
  }
}

// What llama-gguf-split --merge writes for the split keys (split/README.md), as
// @huggingface/gguf reads them: GGUF value types 2 = uint16, 5 = int32.
TEST(NodeClients, GgufJsDumpOfMergedModel) {
  GGUFS_REQUIRE_TESTDATA(data);
  GGUFS_REQUIRE_NODE_CLIENTS();
  const auto j = gguf_js_dump((data / "split" / "tiny-llama-merged.gguf").string());
  const auto& md = j.at("metadata");
  EXPECT_EQ(j.at("version"), 3);
  EXPECT_EQ(md.at("split.count"), (nlohmann::json{{"type", 2}, {"value", 0}}));
  EXPECT_EQ(md.at("split.no"), (nlohmann::json{{"type", 2}, {"value", 0}}));
  EXPECT_EQ(md.at("split.tensors.count"), (nlohmann::json{{"type", 5}, {"value", 12}}));
  EXPECT_EQ(md.at("general.architecture").at("value"), "llama");
  // 64-bit counts come as decimal strings.
  EXPECT_EQ(md.at("tensor_count").at("value"), "12");
  EXPECT_EQ(j.at("tensorInfos").size(), 12u);
}

// Merging keeps every tensor's name, shape and type, in the original's order.
TEST(NodeClients, GgufJsDumpOfOriginalHasTheMergedTensors) {
  GGUFS_REQUIRE_TESTDATA(data);
  GGUFS_REQUIRE_NODE_CLIENTS();
  const auto original = gguf_js_dump((data / "real" / "llama-2-tiny-random.gguf").string());
  const auto merged = gguf_js_dump((data / "split" / "tiny-llama-merged.gguf").string());
  const auto& a = original.at("tensorInfos");
  const auto& b = merged.at("tensorInfos");
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (const char* field : {"name", "n_dims", "shape", "dtype"}) {
      EXPECT_EQ(a[i].at(field), b[i].at(field)) << "tensor " << i << " " << field;
    }
  }
  EXPECT_EQ(a[0].at("name"), "token_embd.weight");
  EXPECT_EQ(a[0].at("shape"), (nlohmann::json{"8", "32000"}));
}

}  // namespace
}  // namespace ggufs::test
