// ggufs-test-hf-config: prints the config.json that render_hf_config gives for a GGUF file (or,
// with --generation, its generation_config.json), for tests/python/test_hf_config.py to compare
// with transformers (--dtype: the torch dtype, one line). Usage:
// ggufs-test-hf-config [--generation|--dtype] FILE. Exit 0 with the JSON on stdout; 3 with the
// reason on stderr when there is no config; 2 when FILE cannot be opened or parsed. A split model
// is opened with all its shards (open_model).
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "ggufs/hf_config.h"
#include "ggufs/model.h"

int main(int argc, char** argv) {
  std::string_view what = "config";
  int i = 1;
  if (i < argc &&
      (std::string_view(argv[i]) == "--generation" || std::string_view(argv[i]) == "--dtype")) {
    what = argv[i++];
  }
  if (i + 1 != argc) {
    std::fprintf(stderr, "usage: ggufs-test-hf-config [--generation|--dtype] FILE\n");
    return 1;
  }
  ggufs::HfConfigResult result;
  try {
    const ggufs::Model model = ggufs::open_model(argv[i]);
    result = ggufs::render_hf_config(model.file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
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
