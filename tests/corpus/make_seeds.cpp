// ggufs-fuzz-seeds DIR: writes the seed corpus of each fuzz target into DIR/<target> (created if
// needed), one file per seed: the valid fixtures, hostile files, hf/ models and hf/ refusals of
// corpus.h for the GGUF targets, the manifests and name lists of corpus.h for the others.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "corpus.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ggufs-fuzz-seeds DIR\n");
    return 1;
  }
  const std::filesystem::path dir = argv[1];
  int n = 0;
  auto write = [&](const char* target, const ggufs::corpus::Fixture& f) {
    const std::filesystem::path to = dir / target;
    std::filesystem::create_directories(to);
    std::ofstream out(to / f.name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(f.bytes.data()),
              static_cast<std::streamsize>(f.bytes.size()));
    if (!out) {
      std::fprintf(stderr, "ggufs-fuzz-seeds: cannot write %s\n", (to / f.name).c_str());
      std::exit(2);
    }
    ++n;
  };
  for (const char* target : {"parse", "tree"}) {
    for (const auto& f : ggufs::corpus::valid_fixtures()) write(target, f);
    for (const auto& h : ggufs::corpus::hostile_files()) write(target, {h.name, h.bytes});
    for (const auto& f : ggufs::corpus::hf_models()) write(target, f);
    for (const auto& r : ggufs::corpus::hf_refusals()) write(target, {r.name, r.bytes});
  }
  for (const auto& f : ggufs::corpus::manifest_seeds()) write("ollama_manifest", f);
  for (const auto& f : ggufs::corpus::library_name_seeds()) write("library_names", f);
  std::printf("%d seeds in %s\n", n, dir.c_str());
  return 0;
}
