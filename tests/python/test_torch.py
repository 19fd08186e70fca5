"""PyTorch over the mount without a copy: its tensors are views of the page cache of npy/ and f32/
files, mapped from the mount, and hold the conformance references."""

import json
import mmap
import warnings

import numpy as np
import pytest
import torch

from conftest import file_id, shared_gguf_files

CONFORMANCE = [p for p in shared_gguf_files() if p.parent.name == "conformance"]


def mapping_of(address):
    """The file that /proc/self/maps says is mapped at `address` (None if no file is)."""
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if lo <= address < hi:
                return fields[5].strip() if len(fields) == 6 else None
    return None


def reference(testdata, path, name):
    return np.fromfile(testdata / "conformance" / "ref" / path.stem / f"{name}.f32", dtype="<f4")


@pytest.mark.parametrize("path", CONFORMANCE, ids=file_id)
def test_from_numpy_of_npy_memmap_shares_the_mapping(path, testdata, mount):
    m = mount(path)
    for t in json.loads((m / "gguf.json").read_text())["tensors"]:
        npy = m / "npy" / f"{t['name']}.npy"
        a = np.load(npy, mmap_mode="r")
        with warnings.catch_warnings():  # the mapping is read-only, which torch warns about
            warnings.simplefilter("ignore", UserWarning)
            x = torch.from_numpy(a)
        assert x.data_ptr() == a.ctypes.data
        assert mapping_of(x.data_ptr()) == str(npy)
        assert mapping_of(x.data_ptr() + x.nbytes - 1) == str(npy)
        assert list(x.shape) == t["ne"][::-1]
        want = reference(testdata, path, t["name"])
        assert np.array_equal(x.reshape(-1).view(torch.int32).numpy(), want.view(np.int32))


@pytest.mark.parametrize("path", CONFORMANCE, ids=file_id)
def test_frombuffer_of_f32_mmap_shares_the_mapping(path, testdata, mount):
    m = mount(path)
    for t in json.loads((m / "gguf.json").read_text())["tensors"]:
        f32 = m / "f32" / t["name"]
        with open(f32, "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            x = torch.frombuffer(mm, dtype=torch.float32)
        assert mapping_of(x.data_ptr()) == str(f32)
        assert mapping_of(x.data_ptr() + x.nbytes - 1) == str(f32)
        want = reference(testdata, path, t["name"])
        assert np.array_equal(x.view(torch.int32).numpy(), want.view(np.int32))
        del x
        mm.close()
