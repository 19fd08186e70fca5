// What lies in a model folder or a store is hostile: FIFOs planted under a model's name, shards
// of different byte orders, names that are not UTF-8, tensor sizes that would misalign the
// whole-model view. Real mounts, read with ls and cat, and with safetensors and torch.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "mount_util.h"
#include "python_clients.h"
#include "split_fixture.h"

namespace ggufs::test {
namespace {

namespace fs = std::filesystem;

void make_fifo(const fs::path& p) {
  fs::create_directories(p.parent_path());
  ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0) << p;
}

// Runs `command` (a shell command line) and returns what it printed. Should it still run after
// a minute, its open of FIFO `fifo` is taken to block: the FIFO is opened for writing, which
// lets that open return, so a test of a hang fails instead of hanging the suite.
struct Bounded {
  RunResult result;
  bool blocked = false;
};
Bounded run_bounded(const std::string& command, const fs::path& fifo) {
  auto done =
      std::async(std::launch::async, [command] { return run("{ " + command + "; } 2>&1"); });
  Bounded out;
  while (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    out.blocked = true;
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
  }
  out.result = done.get();
  return out;
}

TEST(HostileStores, FifoAsTheModelFileIsRefusedWithoutBlocking) {
  GGUFS_REQUIRE_FUSE();
  TempDir tmp;
  const fs::path fifo = tmp.path() / "model.gguf";
  make_fifo(fifo);
  const fs::path mnt = tmp.path() / "mnt";
  fs::create_directory(mnt);
  UnmountGuard guard{mnt};
  const Bounded b = run_bounded(
      fmt::format("{} {} {}; echo \"exit $?\"", GGUFS_BINARY, quote(fifo), quote(mnt)), fifo);
  EXPECT_FALSE(b.blocked) << "ggufs blocked opening a FIFO";
  EXPECT_EQ(b.result.output, "ggufs: " + fifo.string() + ": not a regular file (a FIFO)\nexit " +
                                 "2\n");  // exit status 2: cannot read (man ggufs)
}

TEST(HostileStores, FifoAsAnOllamaManifestIsRefusedWithoutBlocking) {
  GGUFS_REQUIRE_FUSE();
  TempDir tmp;
  const fs::path store = tmp.path() / "models";
  const fs::path fifo = store / "manifests/registry.ollama.ai/library/m/pipe";
  make_fifo(fifo);
  const fs::path mnt = tmp.path() / "mnt";
  fs::create_directory(mnt);
  UnmountGuard guard{mnt};
  const Bounded b =
      run_bounded(fmt::format("env OLLAMA_MODELS={} {} ollama:m:pipe {}; echo \"exit $?\"",
                              quote(store), GGUFS_BINARY, quote(mnt)),
                  fifo);
  EXPECT_FALSE(b.blocked) << "ggufs blocked opening a FIFO manifest";
  EXPECT_EQ(b.result.output, "ggufs: " + fifo.string() + ": not a regular file (a FIFO)\nexit 2\n");
}

TEST(HostileStores, FifoBlobInOllamaStoreIsAnErrorFolder) {
  GGUFS_REQUIRE_FUSE();
  TempDir tmp;
  const fs::path store = tmp.path() / "models";
  GgufWriter g;
  g.add_string("general.architecture", "good-arch");
  const std::vector<std::uint8_t> good = g.finish();
  const std::string good_hex = sha256_hex(good.data(), good.size());
  fs::create_directories(store / "blobs");
  write_file(store / "blobs" / ("sha256-" + good_hex), good);
  const std::string fifo_hex(64, 'f');
  const fs::path fifo = store / "blobs" / ("sha256-" + fifo_hex);
  make_fifo(fifo);
  // A FIFO's size is 0, so a manifest saying 0 passes the size check and the blob is opened.
  const auto manifest = [](const std::string& hex, std::size_t size) {
    return fmt::format(R"({{"layers":[{{"mediaType":"application/vnd.ollama.image.model",)"
                       R"("digest":"sha256:{}","size":{}}}]}})",
                       hex, size);
  };
  for (const auto& [tag, text] : {std::pair{"good", manifest(good_hex, good.size())},
                                  std::pair{"fifo", manifest(fifo_hex, 0)}}) {
    const fs::path p = store / "manifests/registry.ollama.ai/library/m" / tag;
    fs::create_directories(p.parent_path());
    write_file(p, std::vector<std::uint8_t>(text.begin(), text.end()));
  }
  Mount m(fs::path("ollama:"), "", "env OLLAMA_MODELS=" + quote(store));
  ASSERT_TRUE(m.mounted()) << m.output();
  const Bounded b = run_bounded("cat " + quote(m / "m:fifo/error"), fifo);
  EXPECT_FALSE(b.blocked) << "the daemon blocked opening a FIFO blob";
  EXPECT_EQ(b.result.output, fifo.string() + ": not a regular file (a FIFO)\n");
  // Every other model is still served.
  EXPECT_EQ(read_text(m / "m:good/metadata/general.architecture"), "good-arch\n");
}

TEST(HostileStores, FifoShardInAFolderIsAnErrorFolder) {
  GGUFS_REQUIRE_FUSE();
  TempDir tmp;
  const fs::path lib = tmp.path() / "lib";
  fs::create_directory(lib);
  const std::string prefix = write_split(lib, 2);
  fs::remove(shard_path(prefix, 2, 2));
  const fs::path fifo = shard_path(prefix, 2, 2);
  make_fifo(fifo);
  write_arch_model(lib / "other.gguf", "other-arch");
  Mount m(lib);
  ASSERT_TRUE(m.mounted()) << m.output();
  const Bounded b = run_bounded("cat " + quote(m / "m/error"), fifo);
  EXPECT_FALSE(b.blocked) << "the daemon blocked opening a FIFO shard";
  EXPECT_EQ(b.result.output,
            fifo.string() + ": not a regular file (a FIFO) (shard 2 of 2 of a split model)\n");
  EXPECT_EQ(read_text(m / "other/metadata/general.architecture"), "other-arch\n");
}

TEST(HostileStores, SplitModelOfMixedByteOrdersIsRefused) {
  GGUFS_REQUIRE_FUSE();
  TempDir tmp;
  const std::string prefix = write_split(tmp.path(), 2, {2, "", std::nullopt, true});
  Mount m(shard_path(prefix, 1, 2));
  EXPECT_FALSE(m.mounted());
  EXPECT_EQ(m.exit_code(), 3);  // not a valid GGUF model (man ggufs)
  EXPECT_EQ(m.output(), "ggufs: " + shard_path(prefix, 2, 2) +
                            ": at byte 4: this shard is big-endian, but shard 1 is "
                            "little-endian: the shards of one split model must share one byte "
                            "order\n");
}

// model.safetensors read by safetensors itself (safe_open, framework "pt") and its header by
// Python's json with duplicate keys refused: every tensor is there under the name expected, with
// the bytes written, at an offset aligned to its element size.
// `expect`: {name: [torch dtype, hex of the tensor's bytes]}; `meta`: {key: value}.
constexpr const char* kCheckSafetensors = R"(
import sys, json, struct, torch
from safetensors import safe_open
path, expect, meta = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
def unique(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), ('duplicate keys', keys)
    return dict(pairs)
with open(path, 'rb') as f:
    n = struct.unpack('<Q', f.read(8))[0]
    header = json.loads(f.read(n), object_pairs_hook=unique)
size = {'F64': 8, 'I64': 8, 'F32': 4, 'I32': 4, 'F16': 2, 'BF16': 2, 'I16': 2, 'I8': 1}
for name, info in header.items():
    if name != '__metadata__':
        at = 8 + n + info['data_offsets'][0]
        assert at % size[info['dtype']] == 0, ('unaligned', name, info['dtype'], at)
with safe_open(path, framework='pt') as f:
    assert sorted(f.keys()) == sorted(expect), sorted(f.keys())
    got = f.metadata()
    for k, v in meta.items():
        assert got.get(k) == v, (k, got.get(k), v)
    for name, (dtype, data) in expect.items():
        t = f.get_tensor(name)
        assert str(t.dtype) == dtype, (name, t.dtype)
        assert t.reshape(-1).view(torch.uint8).numpy().tobytes().hex() == data, name
print('ok')
)";

std::string hex_of(const std::vector<std::uint8_t>& b) {
  std::string out;
  for (std::uint8_t c : b) out += fmt::format("{:02x}", c);
  return out;
}

TEST(HostileStores, SafetensorsKeysStayDistinctWhenNamesAreNotUtf8) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_PYTHON_CLIENTS();
  TempDir tmp;
  // Three names that are one text once ill-formed bytes become U+FFFD, in the file's order:
  // the valid name keeps its text; the others get ~2 and ~3 in file order (README).
  const std::string fffd = "\xEF\xBF\xBD";
  const std::vector<std::pair<std::string, std::string>> tensors = {
      {"w\xff", "w" + fffd + "~2"}, {"w" + fffd, "w" + fffd}, {"w\xfe", "w" + fffd + "~3"}};
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_string("k\xff", "first");
  g.add_string("k\xfe", "second");
  nlohmann::json expect = nlohmann::json::object();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto bytes = tensor_bytes(static_cast<int>(i));
    g.add_tensor(tensors[i].first, GGML_TYPE_F32, {4}, bytes);
    expect[tensors[i].second] = {"torch.float32", hex_of(bytes)};
  }
  const fs::path file = tmp.path() / "names.gguf";
  g.write_file(file.string());
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  const nlohmann::json meta = {{"k" + fffd, "first"}, {"k" + fffd + "~2", "second"}};
  const RunResult r =
      venv_python(kCheckSafetensors, quote(m / "model.safetensors") + " " + quote(expect.dump()) +
                                         " " + quote(meta.dump()));
  EXPECT_EQ(r.output, "ok\n");
}

TEST(HostileStores, SafetensorsTensorsAreAlignedToTheirElementSize) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_PYTHON_CLIENTS();
  TempDir tmp;
  // Odd-sized narrow tensors first, as a GGUF file may order them: in file order every wider
  // tensor after them would start at an odd offset.
  struct T {
    const char* name;
    std::uint32_t type;
    std::uint64_t n;
    std::uint32_t bytes_each;
    const char* torch_dtype;
  };
  const T list[] = {
      {"a.f16", GGML_TYPE_F16, 3, 2, "torch.float16"},
      {"b.i8", GGML_TYPE_I8, 5, 1, "torch.int8"},
      {"c.f32", GGML_TYPE_F32, 3, 4, "torch.float32"},
      {"d.f64", GGML_TYPE_F64, 2, 8, "torch.float64"},
      {"e.i16", GGML_TYPE_I16, 1, 2, "torch.int16"},
      {"f.i32", GGML_TYPE_I32, 3, 4, "torch.int32"},
      {"g.bf16", GGML_TYPE_BF16, 3, 2, "torch.bfloat16"},
      {"h.i64", GGML_TYPE_I64, 1, 8, "torch.int64"},
  };
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  nlohmann::json expect = nlohmann::json::object();
  std::uint8_t seed = 1;
  for (const T& t : list) {
    const auto bytes = pattern_bytes(t.n * t.bytes_each, seed++);
    g.add_tensor(t.name, t.type, {t.n}, bytes);
    expect[t.name] = {t.torch_dtype, hex_of(bytes)};
  }
  const fs::path file = tmp.path() / "odd.gguf";
  g.write_file(file.string());
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  const RunResult r =
      venv_python(kCheckSafetensors, quote(m / "model.safetensors") + " " + quote(expect.dump()) +
                                         " " + quote(nlohmann::json::object().dump()));
  EXPECT_EQ(r.output, "ok\n");
}

}  // namespace
}  // namespace ggufs::test
