// ggufs-fuzz-seeds DIR: writes the seed corpus of each fuzz target into DIR/<target> (created if
// needed), one file per seed: the valid fixtures, hostile files, hf/ models, hf/ refusals and
// cost shapes (at scale 1) of corpus.h for the GGUF targets, the manifests and name lists of
// corpus.h for the others.
// ggufs-fuzz-seeds --cost SCALE DIR: writes corpus.h's cost shapes at SCALE into DIR as
// NAME.gguf (scripts/bench's cost table).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "corpus.h"

namespace {

void write_file(const std::filesystem::path& path, const ggufs::corpus::Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "ggufs-fuzz-seeds: cannot write %s\n", path.c_str());
    std::exit(2);
  }
}

int usage() {
  std::fprintf(stderr, "usage: ggufs-fuzz-seeds DIR\n       ggufs-fuzz-seeds --cost SCALE DIR\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--cost") {
    const std::string text = argv[2];
    char* end = nullptr;
    const unsigned long long scale = std::strtoull(text.c_str(), &end, 10);
    // Scale 10 000 makes files of hundreds of MB: past it, a typo rather than a bench.
    if (text.empty() || text[0] < '1' || text[0] > '9' || *end != '\0' || scale > 10'000) {
      std::fprintf(stderr, "ggufs-fuzz-seeds: --cost: SCALE must be from 1 to 10000\n");
      return 1;
    }
    const std::filesystem::path dir = argv[3];
    std::filesystem::create_directories(dir);
    for (const auto& f : ggufs::corpus::cost_shapes(scale))
      write_file(dir / (f.name + ".gguf"), f.bytes);
    return 0;
  }
  // A lone "--cost" (or any option) is a mistyped command, not a folder to fill.
  if (argc != 2 || argv[1][0] == '-') return usage();
  const std::filesystem::path dir = argv[1];
  int n = 0;
  auto write = [&](const char* target, const ggufs::corpus::Fixture& f) {
    const std::filesystem::path to = dir / target;
    std::filesystem::create_directories(to);
    write_file(to / f.name, f.bytes);
    ++n;
  };
  for (const char* target : {"parse", "tree"}) {
    for (const auto& f : ggufs::corpus::valid_fixtures()) write(target, f);
    for (const auto& h : ggufs::corpus::hostile_files()) write(target, {h.name, h.bytes});
    for (const auto& f : ggufs::corpus::hf_models()) write(target, f);
    for (const auto& r : ggufs::corpus::hf_refusals()) write(target, {r.name, r.bytes});
    for (const auto& f : ggufs::corpus::cost_shapes(1)) write(target, f);
  }
  // hf: a tiny model of every row of hf/'s architecture table (those without hf/ too: their
  // refusal is a path to fuzz), the hf/ models and refusals; and its dictionary, DIR/hf.dict
  // (scripts/fuzz passes DIR/<target>.dict to libFuzzer's -dict=).
  int rows = 0, covered = 0;
  for (const auto& s : ggufs::corpus::hf_row_seeds()) {
    write("hf", {s.name, s.bytes});
    ++rows;
    covered += !s.missing.starts_with("no ");
    if (!s.missing.empty())
      std::printf("hf seed %s (%s): %s\n", s.name.c_str(), s.row.c_str(), s.missing.c_str());
  }
  std::printf("hf seeds: %d of %d rows get hf/\n", covered, rows);
  for (const auto& f : ggufs::corpus::hf_models()) write("hf", f);
  for (const auto& f : ggufs::corpus::mlx_models()) write("hf", f);
  // the vision table's projectors: check_hf pairs each with the vision pairs' text models
  for (const auto& p : ggufs::corpus::vision_pairs()) write("hf", {p.name, p.projector});
  for (const auto& p : ggufs::corpus::vision_refusals()) write("hf", {p.name, p.projector});
  for (const auto& r : ggufs::corpus::hf_refusals()) write("hf", {r.name, r.bytes});
  {
    const std::string dict = ggufs::corpus::hf_dictionary();
    write_file(dir / "hf.dict", ggufs::corpus::Bytes(dict.begin(), dict.end()));
  }
  for (const auto& f : ggufs::corpus::manifest_seeds()) write("ollama_manifest", f);
  for (const auto& f : ggufs::corpus::library_name_seeds()) write("library_names", f);
  std::printf("%d seeds in %s\n", n, dir.c_str());
  return 0;
}
