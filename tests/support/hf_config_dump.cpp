// ggufs-test-hf-config: prints the config.json that render_hf_config gives for a GGUF file (or,
// with --generation, its generation_config.json), for tests/python/test_hf_config.py to compare
// with transformers (--dtype: the torch dtype, one line; --weights: hf_weight_map's tensors, one
// JSON object a line: name, shape, source (the GGUF tensor's name), transform ("none",
// "reverse_permute" with n_head, "select" with index, "add" with constant, "transpose",
// "concat_rows" with parts: the names of the GGUF tensors after source, "regroup_qkv" with n_head
// and groups), for
// tests/python/test_hf_weights.py; --tokenizer, --tokenizer-config, --special-tokens-map: the
// file render_hf_tokenizer gives, for tests/python/test_hf_tokenizer.py). Usage:
// ggufs-test-hf-config [--generation|--dtype|--weights] FILE. Exit 0 with the output on stdout; 3
// with the reason on stderr when there is no config (or weight map); 2 when FILE cannot be opened
// or parsed. A split model
// is opened with all its shards (open_model).
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ggufs/hf_config.h"
#include "ggufs/hf_tokenizer.h"
#include "ggufs/hf_weights.h"
#include "ggufs/model.h"

namespace {

// hf_weight_map's tensors as JSON lines; exit code as main's.
int print_weights(const ggufs::GgufFile& file) {
  const ggufs::HfWeightsResult result = ggufs::hf_weight_map(file);
  if (!result.weights) {
    std::fprintf(stderr, "%s\n", result.reason.c_str());
    return 3;
  }
  for (const ggufs::HfWeight& w : *result.weights) {
    nlohmann::json line = {
        {"name", w.hf_name}, {"shape", w.shape}, {"source", file.tensors[w.source].name}};
    switch (w.transform) {
      case ggufs::HfTransform::kNone:
        line["transform"] = "none";
        break;
      case ggufs::HfTransform::kReversePermute:
        line["transform"] = "reverse_permute";
        line["n_head"] = w.n_head;
        break;
      case ggufs::HfTransform::kSelect:
        line["transform"] = "select";
        line["index"] = w.index;
        break;
      case ggufs::HfTransform::kAddConstant:
        line["transform"] = "add";
        line["constant"] = w.constant;
        break;
      case ggufs::HfTransform::kTranspose:
        line["transform"] = "transpose";
        break;
      case ggufs::HfTransform::kLogOfNegated:
        line["transform"] = "log_of_negated";
        break;
      case ggufs::HfTransform::kConcatRows: {
        line["transform"] = "concat_rows";
        nlohmann::json parts = nlohmann::json::array();
        for (const std::size_t p : w.parts) parts.push_back(file.tensors[p].name);
        line["parts"] = parts;
        break;
      }
      case ggufs::HfTransform::kRegroupQkv:
        line["transform"] = "regroup_qkv";
        line["n_head"] = w.n_head;
        line["groups"] = w.groups;
        break;
      case ggufs::HfTransform::kConcatTransposedRows: {
        line["transform"] = "concat_transposed_rows";
        nlohmann::json parts = nlohmann::json::array();
        for (const std::size_t p : w.parts) parts.push_back(file.tensors[p].name);
        line["parts"] = parts;
        break;
      }
      case ggufs::HfTransform::kRegroupQkvz:
        line["transform"] = "regroup_qkvz";
        line["groups"] = w.groups;
        line["parts"] = nlohmann::json::array({file.tensors[w.parts.at(0)].name});
        break;
      case ggufs::HfTransform::kFirstRows:
        line["transform"] = "first_rows";
        break;
      case ggufs::HfTransform::kInterleaveTransposed: {
        line["transform"] = "interleave_transposed";
        nlohmann::json parts = nlohmann::json::array();
        for (const std::size_t p : w.parts) parts.push_back(file.tensors[p].name);
        line["parts"] = parts;
        break;
      }
    }
    const std::string text = line.dump() + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view what = "config";
  int i = 1;
  if (i < argc &&
      (std::string_view(argv[i]) == "--generation" || std::string_view(argv[i]) == "--dtype" ||
       std::string_view(argv[i]) == "--weights" || std::string_view(argv[i]) == "--tokenizer" ||
       std::string_view(argv[i]) == "--tokenizer-config" ||
       std::string_view(argv[i]) == "--special-tokens-map")) {
    what = argv[i++];
  }
  if (i + 1 != argc) {
    std::fprintf(stderr,
                 "usage: ggufs-test-hf-config [--generation|--dtype|--weights|--tokenizer|"
                 "--tokenizer-config|--special-tokens-map] FILE\n");
    return 1;
  }
  const bool tokenizer =
      what == "--tokenizer" || what == "--tokenizer-config" || what == "--special-tokens-map";
  ggufs::HfConfigResult result;
  ggufs::HfTokenizerResult tok;
  try {
    const ggufs::Model model = ggufs::open_model(argv[i]);
    if (what == "--weights") return print_weights(model.file);
    if (tokenizer) {
      tok = ggufs::render_hf_tokenizer(model.file);
    } else {
      result = ggufs::render_hf_config(model.file);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  if (tokenizer) {
    if (!tok.tokenizer) {
      std::fprintf(stderr, "%s\n", tok.reason.c_str());
      return 3;
    }
    const std::string& text = what == "--tokenizer" ? tok.tokenizer->tokenizer_json
                              : what == "--tokenizer-config"
                                  ? tok.tokenizer->tokenizer_config_json
                                  : tok.tokenizer->special_tokens_map_json;
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  if (!result.config) {
    std::fprintf(stderr, "%s\n", result.reason.c_str());
    return 3;
  }
  const std::string text = what == "--generation" ? result.config->generation_config_json
                           : what == "--dtype"    ? result.config->torch_dtype + "\n"
                                                  : result.config->config_json;
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
