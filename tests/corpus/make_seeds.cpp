// ggufs-fuzz-seeds DIR: writes the seed corpus of the fuzz targets into DIR (created if
// needed): the valid fixtures and the hostile files of corpus.h, one file each.
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
  std::filesystem::create_directories(dir);
  int n = 0;
  auto write = [&](const std::string& name, const ggufs::corpus::Bytes& bytes) {
    std::ofstream out(dir / (name + ".gguf"), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "ggufs-fuzz-seeds: cannot write %s\n", (dir / name).c_str());
      std::exit(2);
    }
    ++n;
  };
  for (const auto& f : ggufs::corpus::valid_fixtures()) write(f.name, f.bytes);
  for (const auto& h : ggufs::corpus::hostile_files()) write(h.name, h.bytes);
  std::printf("%d seeds in %s\n", n, dir.c_str());
  return 0;
}
