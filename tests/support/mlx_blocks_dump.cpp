// ggufs-test-mlx-blocks: encodes rows of ggml blocks in MLX's quantized form (encode_mlx_row,
// ggufs/mlx_blocks.h) and writes them as a safetensors file for tests/python/test_mlx_blocks.py,
// which loads it with MLX (mx.load) and dequantizes it with mx.dequantize. Usage:
// ggufs-test-mlx-blocks TYPE NE0 IN OUT: TYPE a ggml type name ("Q4_K"), NE0 the row length in
// elements, IN a file of whole rows of that type's blocks as stored, OUT the safetensors file:
// "weight" U32 [rows, NE0·bits/32], "scales" F32 (affine) or U8 (mxfp4, nvfp4)
// [rows, NE0/group_size], "biases" F32 (affine only), and __metadata__ mode, bits, group_size.
// Exit 0 on success; 3 when a row has no exact MLX form (the reason on stderr); 2 on bad usage,
// an unreadable or misshapen input, or a type without an MLX form.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ggufs/ggml_type.h"
#include "ggufs/mlx_blocks.h"

namespace {

// A tensor's entry in the header and its bytes (the host's, little-endian here as in the file).
template <typename T>
void add_tensor(nlohmann::json& header, std::string& data, const char* name, const char* dtype,
                std::size_t rows, const std::vector<T>& values) {
  const std::size_t begin = data.size();
  data.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  header[name] = {{"dtype", dtype},
                  {"shape", {rows, rows ? values.size() / rows : 0}},
                  {"data_offsets", {begin, data.size()}}};
}

int run(const std::string& type_name, std::size_t ne0, const char* in_path, const char* out_path) {
  const ggufs::TypeTraits* traits = nullptr;
  for (const ggufs::TypeTraits& t : ggufs::all_types()) {
    if (t.name == type_name) traits = &t;
  }
  const ggufs::MlxBlockForm* form = traits ? ggufs::mlx_block_form(traits->id) : nullptr;
  if (form == nullptr || ne0 == 0 || ne0 % traits->block_size != 0) {
    std::fprintf(stderr, "no MLX form for %s rows of %zu\n", type_name.c_str(), ne0);
    return 2;
  }
  std::ifstream in(in_path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot open\n", in_path);
    return 2;
  }
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  const std::size_t row_bytes = ne0 / traits->block_size * traits->type_size;
  if (bytes.size() % row_bytes != 0) {
    std::fprintf(stderr, "%s: not whole rows of %zu bytes\n", in_path, row_bytes);
    return 2;
  }
  const std::size_t rows = bytes.size() / row_bytes;
  const std::size_t words = ggufs::mlx_weight_words(*form, ne0);
  const std::size_t groups = ggufs::mlx_groups(*form, ne0);
  const bool affine = form->mode == ggufs::MlxMode::kAffine;
  std::vector<std::uint32_t> weight(rows * words);
  std::vector<float> scales(affine ? rows * groups : 0), biases(scales.size());
  std::vector<std::uint8_t> scale_bytes(affine ? 0 : rows * groups);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t g = affine ? groups : 0, gb = affine ? 0 : groups;
    const ggufs::MlxRow out{{weight.data() + r * words, words},
                            {scales.data() + r * g, g},
                            {biases.data() + r * g, g},
                            {scale_bytes.data() + r * gb, gb}};
    if (ggufs::encode_mlx_row(traits->id, {bytes.data() + r * row_bytes, row_bytes}, out) !=
        ggufs::MlxRowStatus::kOk) {
      std::fprintf(stderr, "row %zu has no exact MLX form\n", r);
      return 3;
    }
  }
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  add_tensor(header, data, "weight", "U32", rows, weight);
  if (affine) {
    add_tensor(header, data, "scales", "F32", rows, scales);
    add_tensor(header, data, "biases", "F32", rows, biases);
  } else {
    add_tensor(header, data, "scales", "U8", rows, scale_bytes);
  }
  header["__metadata__"] = {{"mode", std::string(ggufs::mlx_mode_name(form->mode))},
                            {"bits", std::to_string(form->bits)},
                            {"group_size", std::to_string(form->group_size)}};
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  std::ofstream out(out_path, std::ios::binary);
  const std::uint64_t n = text.size();
  for (int k = 0; k < 8; ++k) out.put(static_cast<char>(n >> (8 * k)));
  out << text << data;
  out.close();
  if (!out) {
    std::fprintf(stderr, "%s: cannot write\n", out_path);
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: ggufs-test-mlx-blocks TYPE NE0 IN OUT\n");
    return 2;
  }
  try {
    return run(argv[1], std::stoul(argv[2]), argv[3], argv[4]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
