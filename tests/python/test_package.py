"""The Python package, ggufs, in-process: the expected values come from ggml (the conformance
files' references and manifest), gguf-py, the shared metadata list, and the mount's own files
(the daemon read through FUSE, a separate process); the tests marked "mount" need /dev/fuse, the
others none."""

import hashlib
import json
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

from conftest import shared_gguf_files, file_id

import ggufs
import ggufs.torch
import ggufs.transformers

CONFORMANCE_TYPES = sorted(p.stem for p in shared_gguf_files() if p.parent.name == "conformance")


def test_the_package_is_the_one_asked_for():
    where = os.environ.get("GGUFS_PYTHONPATH") or str(pathlib.Path(__file__).parents[2] / "build" / "python")
    assert pathlib.Path(ggufs.__file__).resolve().parent.parent == pathlib.Path(where).resolve() or \
        pathlib.Path(ggufs.__file__).parent.parent == pathlib.Path(where)


def manifest(testdata):
    return {f["file"]: f for f in json.loads((testdata / "conformance" / "manifest.json").read_text())["files"]}


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


# -- tensors: ggml's own references ----------------------------------------------------------
@pytest.mark.parametrize("type_name", CONFORMANCE_TYPES)
def test_tensors_equal_ggmls_dequantizer_in_every_dtype(testdata, type_name):
    path = testdata / "conformance" / f"{type_name}.gguf"
    files = manifest(testdata)
    with ggufs.open(path) as m:
        for t in files[path.name]["tensors"]:
            info = m.tensors[t["name"]]
            # The tensor info as ggml wrote it.
            assert (info.type, info.ne, info.offset, info.nbytes) == (
                t["type"], tuple(t["ne"]), t["file_offset"], t["nbytes"])
            assert info.shape == tuple(reversed(t["ne"]))
            stored = m.tensor(t["name"], "stored")
            assert hashlib.sha256(stored.tobytes()).hexdigest() == t["sha256_raw"]
            ref = np.fromfile(testdata / "conformance" / t["ref"], dtype="<f4").reshape(info.shape)
            f32 = m.tensor(t["name"])
            assert f32.dtype == np.float32 and f32.shape == info.shape
            assert np.array_equal(bits(f32), bits(ref))
            assert f32.ctypes.data % 64 == 0
            # f16/ is numpy's astype(float16) of the float32 values (tree.h, ViewData::kFloat16).
            with np.errstate(over="ignore"):
                assert np.array_equal(bits(m.tensor(t["name"], "float16")), bits(ref.astype(np.float16)))
            torch = pytest.importorskip("torch")
            bf16 = torch.from_numpy(ref.copy()).to(torch.bfloat16).view(torch.int16).numpy()
            assert np.array_equal(m.tensor(t["name"], "bfloat16").view(np.int16), bf16)


def test_metadata_is_the_shared_typed_list(testdata):
    want = json.loads((testdata / "metadata" / "all-value-types.json").read_text())["kv"]
    with ggufs.open(testdata / "metadata" / "all-value-types.gguf") as m:
        got = m.metadata
        assert list(got) == [kv["key"] for kv in want]
        for kv in want:
            v = got[kv["key"]]
            if kv["type"] == "array":
                if kv["element_type"] == "string":
                    assert v == kv["value"], kv["key"]
                elif kv["element_type"] in ("float32", "float64"):
                    width = {"float32": np.uint32, "float64": np.uint64}[kv["element_type"]]
                    assert v.view(width).tolist() == [int(b, 16) for b in kv["bits"]], kv["key"]
                    assert not v.flags.writeable
                elif kv["element_type"] != "array":
                    assert v.tolist() == kv["value"], kv["key"]
            elif kv["type"] in ("float32", "float64"):
                raw = np.array(v, dtype=np.float32 if kv["type"] == "float32" else np.float64)
                assert int(raw.view(np.uint32 if kv["type"] == "float32" else np.uint64)) == int(kv["bits"], 16)
            elif kv["type"] == "bool":
                assert v is kv["value"]
            else:
                assert v == kv["value"], kv["key"]
        with pytest.raises(TypeError):
            got["general.name"] = "x"


def test_metadata_and_stored_bytes_equal_gguf_py(testdata):
    from gguf import GGUFReader

    path = testdata / "real" / "llama-2-tiny-random.gguf"
    reader = GGUFReader(path)
    with ggufs.open(path) as m:
        assert m.metadata["llama.block_count"] == reader.fields["llama.block_count"].contents()
        assert m.metadata["tokenizer.ggml.tokens"] == reader.fields["tokenizer.ggml.tokens"].contents()
        scores = reader.fields["tokenizer.ggml.scores"].contents()
        assert np.array_equal(m.metadata["tokenizer.ggml.scores"], np.array(scores, np.float32))
        assert list(m.tensors) == [t.name for t in reader.tensors]
        for t in reader.tensors:
            assert np.array_equal(m.tensor(t.name, "stored"), np.asarray(t.data).reshape(-1).view(np.uint8))


# -- out= ---------------------------------------------------------------------------------------
def test_out_takes_numpy_and_torch_buffers_and_refuses_wrong_ones(testdata):
    torch = pytest.importorskip("torch")
    path = testdata / "conformance" / "Q4_K.gguf"
    with ggufs.open(path) as m:
        want = m.tensor("test.mat")
        out = np.empty(want.shape, np.float32)
        assert m.tensor("test.mat", out=out) is out and np.array_equal(bits(out), bits(want))
        t = torch.empty(want.shape, dtype=torch.float32)
        m.tensor("test.mat", out=t)
        assert np.array_equal(bits(t.numpy()), bits(want))
        tb = torch.empty(want.shape, dtype=torch.bfloat16)
        m.tensor("test.mat", "bfloat16", out=tb)
        assert torch.equal(tb, torch.from_numpy(want).to(torch.bfloat16))
        with pytest.raises(TypeError):
            m.tensor("test.mat", out=np.empty(want.shape, np.float64))
        with pytest.raises(ValueError):
            m.tensor("test.mat", out=np.empty(want.size, np.float32))
        ro = np.empty(want.shape, np.float32)
        ro.flags.writeable = False
        with pytest.raises(TypeError):
            m.tensor("test.mat", out=ro)
        with pytest.raises(TypeError):
            m.tensor("test.mat", out=np.empty(want.shape[::-1], np.float32).T)  # not C-contiguous


def test_threads_decoding_one_model_at_once_agree(testdata):
    path = testdata / "conformance" / "Q6_K.gguf"
    with ggufs.open(path) as m:
        want = {n: m.tensor(n) for n in m.tensors}
        errors = []

        def worker():
            for _ in range(50):
                for n, w in want.items():
                    if not np.array_equal(bits(m.tensor(n)), bits(w)):
                        errors.append(n)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []


# -- errors ---------------------------------------------------------------------------------------
def test_errors_are_the_documented_exceptions(testdata, tmp_path):
    with pytest.raises(ggufs.GGUFError) as e:
        ggufs.open(testdata / "real" / "corrupt" / "ggml-vocab-gpt-2.text-mangled.gguf")
    assert isinstance(e.value, ValueError)
    assert e.value.file.endswith("text-mangled.gguf") and e.value.offset > 0 and e.value.problem
    assert str(e.value) == f"{e.value.file}: at byte {e.value.offset}: {e.value.problem}"
    short = tmp_path / "short.gguf"
    short.write_bytes((testdata / "conformance" / "F32.gguf").read_bytes()[:100])
    with pytest.raises(ggufs.GGUFError, match="short.gguf"):
        ggufs.open(short)
    with pytest.raises(FileNotFoundError) as missing:
        ggufs.open(tmp_path / "missing.gguf")
    assert missing.value.strerror == f"{tmp_path}/missing.gguf: cannot open: No such file or directory"
    with pytest.raises(TypeError):
        ggufs.open(short, no_such_option=1)
    with pytest.raises(ValueError, match="hf_dtype=f8: must be f32, f16 or bf16"):
        ggufs.open(testdata / "conformance" / "F32.gguf", hf_dtype="f8")
    with ggufs.open(testdata / "conformance" / "F32.gguf") as m:
        with pytest.raises(KeyError):
            m.tensor("no.such.tensor")
        with pytest.raises(FileNotFoundError):
            m.read("f32/no.such.tensor")
        with pytest.raises(ggufs.ViewUnavailable) as v:
            m.listdir("hf")
        assert str(v.value) == "hf: " + m.getxattrs("")["user.ggufs.hf"].decode()
        with pytest.raises(NotADirectoryError):
            m.listdir("gguf.json")


# -- the tree: byte-equal to the mount's ------------------------------------------------------------
def walk(m, path=""):
    for name in m.listdir(path):
        p = f"{path}/{name}" if path else name
        yield p
        if m.stat(p).st_mode & 0o040000:
            yield from walk(m, p)


@pytest.mark.parametrize("path", shared_gguf_files(), ids=file_id)
def test_every_file_of_the_tree_equals_the_mounts(mount, path):
    """Every shared GGUF file (each conformance type, the metadata cases, the real vocabularies
    and llama, the split model): the same names, sizes, modes, extended attributes and bytes."""
    mnt = mount(path)
    with ggufs.open(path) as m:
        paths = list(walk(m))
        want = sorted(str(p.relative_to(mnt.path)) for p in mnt.path.rglob("*"))
        assert sorted(paths) == want
        for p in paths:
            st = m.stat(p)
            mst = os.stat(mnt / p)
            assert (st.st_mode, st.st_size) == (mst.st_mode & 0o170777, mst.st_size), p
            assert m.getxattrs(p) == {k: os.getxattr(mnt / p, k) for k in os.listxattr(mnt / p)}, p
            if not os.path.isdir(mnt / p):
                assert m.read(p) == (mnt / p).read_bytes(), p
                with m.open(p) as f:
                    f.seek(st.st_size // 3)
                    assert f.read(4096) == (mnt / p).read_bytes()[st.st_size // 3:][:4096], p


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_hf_in_each_dtype_equals_the_mounts_through_safe_open(testdata, mount, dtype):
    from safetensors import safe_open

    path = testdata / "real" / "llama-2-tiny-random.gguf"
    mnt = mount(path, "-o", f"hf_dtype={dtype}")
    with ggufs.safe_open(path, framework="pt", hf_dtype=dtype) as ours:
        files = sorted((mnt / "hf").glob("*.safetensors"))
        keys = []
        for f in files:
            with safe_open(f, framework="pt") as theirs:
                keys += theirs.keys()
                for k in theirs.keys():
                    a, b = ours.get_tensor(k), theirs.get_tensor(k)
                    assert a.dtype == b.dtype and a.shape == b.shape and a.view(-1).view(
                        __import__("torch").uint8).equal(b.view(-1).view(__import__("torch").uint8)), k
                if theirs.metadata():
                    assert ours.metadata() == theirs.metadata()
        assert sorted(ours.keys()) == sorted(keys)


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "ggufs", *map(str, args)], capture_output=True, env=env)


def test_the_command_copies_and_prints_what_the_mount_shows(testdata, mount, tmp_path):
    path = testdata / "real" / "llama-2-tiny-random.gguf"
    mnt = mount(path)
    r = run_cli("cp", path, "hf", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    want = {p.relative_to(mnt / "hf"): p.read_bytes() for p in (mnt / "hf").rglob("*") if p.is_file()}
    got = {p.relative_to(tmp_path / "out"): p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert got == want
    r = run_cli("cat", path, "metadata/general.architecture")
    assert r.returncode == 0 and r.stdout == (mnt / "metadata" / "general.architecture").read_bytes()
    r = run_cli("ls", path, "")
    assert r.stdout.decode().split("\n")[:-1] == os.listdir(mnt.path)


def test_the_command_exits_as_the_daemon_does(testdata, tmp_path, ggufs_binary):
    bad = testdata / "real" / "corrupt" / "ggml-vocab-gpt-2.text-mangled.gguf"
    r = run_cli("ls", bad)
    d = subprocess.run([str(ggufs_binary), "--info", str(bad)], capture_output=True)
    assert (r.returncode, r.stderr) == (d.returncode, d.stderr) == (3, d.stderr)
    r = run_cli("ls", tmp_path / "missing.gguf")
    d = subprocess.run([str(ggufs_binary), "--info", str(tmp_path / "missing.gguf")], capture_output=True)
    assert (r.returncode, r.stderr) == (d.returncode, d.stderr)
    assert run_cli("cat", testdata / "conformance" / "F32.gguf", "no/such").returncode == 2
    assert run_cli("ls", testdata / "conformance" / "F32.gguf", "", "-o", "hf_dtype=f8").returncode == 1


# -- loaders ----------------------------------------------------------------------------------------
def test_from_pretrained_is_the_mounts_model_and_tokenizer(testdata, mount):
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = testdata / "real" / "llama-2-tiny-random.gguf"
    mnt = mount(path)
    want_model = AutoModelForCausalLM.from_pretrained(mnt / "hf")
    want_tok = AutoTokenizer.from_pretrained(mnt / "hf")
    model, tok = ggufs.transformers.from_pretrained(path)
    assert type(model) is type(want_model)
    config, want_config = model.config.to_dict(), want_model.config.to_dict()
    assert config.pop("_name_or_path") == str(path)
    want_config.pop("_name_or_path")
    assert config == want_config
    sd, want_sd = model.state_dict(), want_model.state_dict()
    assert list(sd) == list(want_sd)
    for k in sd:
        assert sd[k].dtype == want_sd[k].dtype and torch.equal(sd[k], want_sd[k]), k
    text = "Hello world, ça va? 東京 123"
    assert tok(text)["input_ids"] == want_tok(text)["input_ids"]
    ids = torch.tensor([want_tok(text)["input_ids"]])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, want_model(ids).logits)
        a = model.generate(ids, max_new_tokens=20, do_sample=False)
        b = want_model.generate(ids, max_new_tokens=20, do_sample=False)
    assert torch.equal(a, b)


def test_load_state_dict_equals_the_mounts_files(testdata, mount):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    path = testdata / "split" / "tiny-llama-00001-of-00003.gguf"
    mnt = mount(path)
    want = {}
    for f in sorted((mnt / "hf").glob("*.safetensors")):
        want.update(load_file(f))
    got = ggufs.torch.load_state_dict(path, dtype=torch.float32)
    assert list(sorted(got)) == list(sorted(want))
    for k in want:
        assert torch.equal(got[k], want[k]), k


# -- reads in chunks: a tensor larger than one read chunk (4 MiB; 32 MiB, streamed, from 64 MiB) --
@pytest.fixture(scope="module")
def big_model(tmp_path_factory):
    """A GGUF (gguf-py's writer) with Q8_0 tensors of 64 MiB and 16 MiB as float32, and what
    gguf-py's own dequantizer gives for them (d·q, as ggml's dequantize_row_q8_0)."""
    import gguf
    from gguf import GGMLQuantizationType as T

    rng = np.random.default_rng(61)
    path = tmp_path_factory.mktemp("big") / "big.gguf"
    w = gguf.GGUFWriter(path, "test")
    want = {}
    for name, shape in (("big.q8", (2048, 8192)), ("mid.q8", (1024, 4096)), ("odd.f32", (3, 1000003))):
        values = rng.standard_normal(shape, dtype=np.float32)
        if name.endswith("f32"):
            w.add_tensor(name, values)
            want[name] = values
        else:
            q = gguf.quants.quantize(values, T.Q8_0)
            w.add_tensor(name, q, raw_dtype=T.Q8_0)
            want[name] = gguf.quants.dequantize(q, T.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path, want


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_a_tensor_read_in_chunks_equals_gguf_pys_dequantizer(big_model, threads):
    path, want = big_model
    with ggufs.open(path, threads=threads) as m:
        for name, values in want.items():
            got = m.tensor(name)
            assert got.ctypes.data % 64 == 0
            assert np.array_equal(bits(got), bits(values)), name
            with np.errstate(over="ignore"):
                assert np.array_equal(bits(m.tensor(name, "float16")), bits(values.astype(np.float16)))
            # A read from the middle of f32/, across chunk boundaries.
            start = values.nbytes // 3 + 5
            buf = np.empty(9 << 20, np.uint8)
            n = m.readinto(f"f32/{name}", start, buf)
            assert n == min(buf.size, values.nbytes - start)
            assert buf[:n].tobytes() == values.tobytes()[start:start + n]


def test_big_tensors_equal_the_mounts_files(big_model, mount):
    path, want = big_model
    mnt = mount(path)
    with ggufs.open(path) as m:
        for name in want:
            for view, dtype in (("f32", "float32"), ("f16", "float16"), ("raw", "stored")):
                assert m.tensor(name, dtype).tobytes() == (mnt / view / name).read_bytes(), (view, name)


# -- hostile input: the fuzz corpus and its regressions -----------------------------------------------
def corpus_inputs(tmp_path, ggufs_binary):
    """The GGUF seeds of the fuzz targets (tests/corpus: valid fixtures, hostile files, hf/ rows and
    refusals, cost shapes; ggufs-fuzz-seeds writes them), the kept fuzz findings and the shared
    corrupt files."""
    seeds = ggufs_binary.parent / "tests" / "corpus" / "ggufs-fuzz-seeds"
    subprocess.run([str(seeds), str(tmp_path / "seeds")], check=True, capture_output=True)
    repo = pathlib.Path(__file__).resolve().parents[2]
    files = sorted((tmp_path / "seeds" / "parse").iterdir()) + sorted((tmp_path / "seeds" / "hf").iterdir())
    files += sorted((repo / "tests" / "corpus" / "regressions").rglob("*.gguf"))
    return files


def test_hostile_files_raise_the_documented_exceptions_and_nothing_else(tmp_path, ggufs_binary, testdata):
    """Every input opens or raises GGUFError / ReadError exactly as `ggufs --info` exits 3 / 2
    (the daemon's verdict, a separate process); an opened one's whole tree, hf/ and mlx/ included,
    reads, or a read raises ReadError (the mount's EIO: mlx/'s refused rows)."""
    inputs = corpus_inputs(tmp_path, ggufs_binary) + sorted((testdata / "real" / "corrupt").glob("*.gguf"))
    assert len(inputs) > 200
    opened = failed_reads = 0
    for path in inputs:
        info = subprocess.run([str(ggufs_binary), "--info", str(path)], capture_output=True)
        try:
            m = ggufs.open(path)
        except ggufs.GGUFError as e:
            assert info.returncode == 3 and info.stderr.decode().rstrip("\n") == f"ggufs: {e}", path
            continue
        except ggufs.ReadError as e:
            assert info.returncode == 2 and info.stderr.decode().rstrip("\n") == f"ggufs: {e.strerror}", path
            continue
        assert info.returncode == 0, (path, info.stderr)
        opened += 1
        with m:
            assert len(m.metadata) == len(json.loads(m.read("gguf.json"))["metadata"]), path
            for p in walk(m):
                if m.stat(p).st_mode & 0o040000:
                    continue
                try:
                    m.read(p)
                except ggufs.ReadError:
                    failed_reads += 1
                    assert p.startswith("mlx/"), (path, p)
            for name in m.tensors:
                for dtype in ("stored", "float32", "bfloat16"):
                    try:
                        m.tensor(name, dtype)
                    except ValueError as e:  # a type ggufs does not decode, no known size, a
                        # shape NumPy cannot hold (an empty tensor of ne [2^40, 2^40, 2^40, 0])
                        assert any(why in str(e) for why in (
                            "does not decode", "size is unknown", "NumPy cannot hold")), (path, name, e)
    assert opened > 100
    assert failed_reads > 0  # mlx-infinite-d-in-tree.gguf: mlx/ refuses a row (EIO)


# -- the GIL and signals: a server in this very process --------------------------------------------
class RangeServer:
    """A file served with byte ranges (206, Content-Range, ETag, Last-Modified) on 127.0.0.1 by a
    thread of this process: it answers only while the calling thread does not hold the GIL.
    `first_data_request`, if set, runs (in the server's thread) before the first answer for a
    range past the file's first 1 MiB (the tensors' bytes)."""

    def __init__(self, data):
        import http.server

        server = self
        self.data, self.requests, self.first_data_request = data, [], None

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_HEAD(self):
                self.answer(body=False)

            def do_GET(self):
                self.answer(body=True)

            def answer(self, body):
                size = len(server.data)
                rng = self.headers.get("Range")
                start, end = 0, size - 1
                if rng:
                    a, _, b = rng.removeprefix("bytes=").partition("-")
                    start, end = int(a), min(int(b) if b else size - 1, size - 1)
                    server.requests.append(start)
                    if start >= 1 << 20 and server.first_data_request:
                        hook, server.first_data_request = server.first_data_request, None
                        hook()
                self.send_response(206 if rng else 200)
                if rng:
                    self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
                self.send_header("Content-Length", str(end - start + 1))
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("ETag", '"ggufs-test"')
                self.send_header("Last-Modified", "Mon, 07 Dec 2026 00:00:00 GMT")
                self.end_headers()
                if body:
                    self.wfile.write(server.data[start:end + 1])

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/model.gguf"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_reads_release_the_gil(big_model, tmp_path):
    """Opening and decoding a remote model whose server is a thread of this process: were the GIL
    held while ggufs waits for it, the server could not answer and every read would fail at its
    time bound (ReadError), not return the bytes."""
    path, want = big_model
    server = RangeServer(path.read_bytes())
    try:
        with ggufs.open(server.url, cache_dir=tmp_path / "cache", read_timeout=10, threads=2) as m:
            assert np.array_equal(bits(m.tensor("mid.q8")), bits(want["mid.q8"]))
    finally:
        server.close()


@pytest.fixture(scope="module")
def huge_model(tmp_path_factory):
    """One Q8_0 tensor of 8192 × 8192 (68 MB stored, 256 MiB as float32: eight chunks)."""
    import gguf
    from gguf import GGMLQuantizationType as T

    path = tmp_path_factory.mktemp("huge") / "huge.gguf"
    w = gguf.GGUFWriter(path, "test")
    values = np.random.default_rng(8).standard_normal((8192, 8192), dtype=np.float32)
    w.add_tensor("huge.q8", gguf.quants.quantize(values, T.Q8_0), raw_dtype=T.Q8_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_ctrl_c_stops_a_long_decode(huge_model, tmp_path):
    """SIGINT, sent as the first of the tensor's bytes are asked for and answered 0.2 s later,
    raises KeyboardInterrupt out of the decode (the calling thread checks for signals between its
    chunks, 50 ms apart at least), before the rest of the tensor's bytes are fetched."""
    import signal
    import time

    server = RangeServer(huge_model.read_bytes())

    def interrupt():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)

    # Python's own SIGINT handler, whatever this process inherited: a shell runs its background
    # jobs with SIGINT ignored, and Python then leaves it ignored (CI's pytest stages).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with ggufs.open(server.url, cache_dir=tmp_path / "cache", threads=1) as m:
            info = m.tensors["huge.q8"]
            server.first_data_request = interrupt
            with pytest.raises(KeyboardInterrupt):
                m.tensor("huge.q8")
            fetched = [s for s in server.requests if info.offset <= s < info.offset + info.nbytes]
            assert len(fetched) < info.nbytes // (1 << 20) // 2, fetched
    finally:
        signal.signal(signal.SIGINT, previous)
        server.close()


def test_a_folder_is_the_library_the_mount_shows(testdata, mount, tmp_path):
    """A folder: one folder per model, each opened on first use, a broken one holding `error`;
    the same names and bytes as the mount's, every file of each model's tree."""
    lib = tmp_path / "models"
    lib.mkdir()
    (lib / "tiny.gguf").symlink_to(testdata / "real" / "llama-2-tiny-random.gguf")
    (lib / "q4.gguf").symlink_to(testdata / "conformance" / "Q4_K.gguf")
    (lib / "broken.gguf").write_bytes(b"not a GGUF file at all")
    mnt = mount(lib)
    with ggufs.open(lib) as m:
        assert m.listdir("") == os.listdir(mnt.path)
        assert dict(m.tensors) == {} and dict(m.metadata) == {}
        for model in m.listdir(""):
            for p in walk(m, model):
                if not os.path.isdir(mnt / p):
                    assert m.read(p) == (mnt / p).read_bytes(), p
        assert m.read("broken/error") == (mnt / "broken" / "error").read_bytes()
        assert b"not a GGUF file" in m.read("broken/error")
