"""Fixtures of the Python suite: the ggufs binary, the shared test data, and real mounts.

GGUFS_BINARY names the binary (scripts/test sets it; default <repo>/build/ggufs); the package
`ggufs` is imported from GGUFS_PYTHONPATH (default <repo>/build/python). The shared GGUF
files come from $GGUFS_TESTDATA, else <repo>/../shared/testdata; tests that need them skip with
a message where they are absent, as mount tests do without /dev/fuse.
"""

import copy
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# The Python package (src/python) as the build lays it out, module and sources side by side:
# $GGUFS_PYTHONPATH, else <repo>/build/python (scripts/build makes it).
sys.path.insert(0, os.environ.get("GGUFS_PYTHONPATH") or str(REPO / "build" / "python"))


def _testdata_dir():
    return pathlib.Path(os.environ.get("GGUFS_TESTDATA") or REPO.parent / "shared" / "testdata")


def shared_gguf_files():
    """Every shared GGUF file the clients are compared on (for parametrize; empty when absent).
    Split models are represented by their first shard; real/corrupt/ holds broken files."""
    root = _testdata_dir()
    files = []
    for sub in ("conformance", "metadata", "real"):
        files += sorted((root / sub).glob("*.gguf"))
    files += sorted((root / "split").glob("*-00001-of-*.gguf"))
    return files


def file_id(path):
    return f"{path.parent.name}/{path.name}"


_imported = {}  # (what, resolved path of a shared file): transformers' or gguf-py's reading of it


def once_per_file(what, path, read):
    """read(path), once per pytest process for a shared test data file (read-only), a deep copy
    each call, so that no test sees what another did to the result; a file a test wrote is read
    anew each time. transformers' GGUF import and gguf-py's GGUFReader each take tens of seconds
    of CPU on a vocabulary of 100 000 tokens and as many merges (the reader makes a numpy view
    of each part of each string), and the tests read the same files many times over."""
    path = pathlib.Path(path)
    key = path.resolve()
    if not key.is_relative_to(_testdata_dir().resolve()):
        return read(path)
    if (what, key) not in _imported:
        _imported[(what, key)] = read(path)
    return copy.deepcopy(_imported[(what, key)])


def imported_tokenizer(path):
    """transformers' own GGUF import of `path`'s tokenizer: AutoTokenizer.from_pretrained(<dir>,
    gguf_file=<name>), once per shared file (once_per_file), which test_hf_folder.py and
    test_hf_tokenizer.py share: transformers 4.57.6 takes a minute and more on a SentencePiece
    vocabulary without merges (GGUFTokenizerSkeleton builds them from the scores, each split of
    each piece looked up in the list of pieces)."""
    from transformers import AutoTokenizer

    return once_per_file("tokenizer", path, lambda p: AutoTokenizer.from_pretrained(
        str(p.parent), gguf_file=p.name))


@pytest.fixture(scope="session")
def testdata():
    root = _testdata_dir()
    if not (root / "conformance").is_dir():
        pytest.skip(f"the shared test data is absent ({root}; set GGUFS_TESTDATA)")
    return root


@pytest.fixture(scope="session")
def ggufs_binary():
    path = pathlib.Path(os.environ.get("GGUFS_BINARY") or REPO / "build" / "ggufs")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no ggufs binary at {path} (build it, or set GGUFS_BINARY)")
    return path


class Mount:
    """A ggufs daemon mounted at `path` (a fresh folder under the test's tmp_path)."""

    def __init__(self, path, source):
        self.path = pathlib.Path(path)
        self.source = source

    def __truediv__(self, name):
        return self.path / name

    def pid(self):
        """The daemon's process id: the ggufs process whose command line names the mount point."""
        want = os.fsencode(str(self.path))
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if want in args and os.path.basename(args[0]) == b"ggufs":
                return int(entry)
        raise AssertionError(f"no ggufs daemon serves {self.path}")

    def io(self):
        """The daemon's /proc/PID/io counters (rchar: bytes it read, wchar: bytes it wrote, its
        replies to the kernel included) as a dict."""
        with open(f"/proc/{self.pid()}/io") as f:
            return {k: int(v) for k, v in (line.split(": ") for line in f)}


def unmount(path):
    if subprocess.run(["fusermount3", "-u", str(path)], capture_output=True).returncode != 0:
        subprocess.run(["fusermount3", "-uz", str(path)], capture_output=True)


@pytest.fixture
def mount(ggufs_binary, tmp_path):
    """mount(source, *options, env=None) mounts `source` with `ggufs [options] source MNT` and
    returns a Mount; every mount is unmounted at teardown, whatever the test did."""
    if not os.path.exists("/dev/fuse"):
        pytest.skip("/dev/fuse is missing: mount tests need FUSE")
    mounted = []

    def do_mount(source, *options, env=None):
        mnt = tmp_path / f"mnt{len(mounted)}"
        mounted.append(mnt)
        r = subprocess.run([str(ggufs_binary), *options, str(source), str(mnt)],
                           capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, f"ggufs {source} failed ({r.returncode}): {r.stderr}"
        return Mount(mnt, source)

    yield do_mount
    for mnt in mounted:
        unmount(mnt)


@pytest.fixture(scope="session")
def dump_tool():
    """ggufs-test-hf-config (tests/support/hf_config_dump.cpp): $GGUFS_HF_CONFIG_DUMP, else
    <repo>/build/ggufs-test-hf-config; the tests that need it skip with a message without it."""
    path = pathlib.Path(
        os.environ.get("GGUFS_HF_CONFIG_DUMP") or REPO / "build" / "ggufs-test-hf-config"
    )
    if not os.access(path, os.X_OK):
        pytest.skip(f"no ggufs-test-hf-config at {path} (build it, or set GGUFS_HF_CONFIG_DUMP)")
    return path
