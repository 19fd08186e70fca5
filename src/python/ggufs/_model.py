"""The Model: one opened source, its metadata, tensor infos, decoded tensors and its tree."""

import io
import mmap
import os
import stat as _stat
import types
from typing import NamedTuple, Optional, Tuple

import numpy as np

from . import _ggufs
from ._ggufs import ViewUnavailable

# Model.tensor's dtypes: the NumPy dtype of the returned array. NumPy has no bfloat16: its
# elements come as their 16 bits in uint16 (torch.from_numpy(a).view(torch.bfloat16) reads them).
_DTYPES = {
    "float32": np.dtype("<f4"),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype("<u2"),
    "stored": np.dtype("u1"),
}
# The dtype names an `out` buffer may carry for each (numpy, torch and MLX spell them alike
# after their last dot: "float32", "torch.bfloat16", "mlx.core.bfloat16").
_OUT_DTYPES = {
    "float32": {"float32"},
    "float16": {"float16"},
    "bfloat16": {"bfloat16", "uint16", "int16"},
    "stored": {"uint8", "int8"},
}
_ALIGN = 64  # bytes: the alignment of the buffers Model.tensor allocates


class TensorInfo(NamedTuple):
    """A tensor info (GGUF specification, ggml docs/gguf.md, "tensor info").

    type: the ggml type name ("Q4_K"; "type_<id>" for an id ggml does not have);
    shape: NumPy order (ne reversed); ne: ggml order, ne[0] fastest; offset: absolute byte
    offset of its data in `file`; nbytes: its stored size in bytes (-1 when the type is
    unknown); decodes: whether Model.tensor can give it as floats (the mount's f32/).
    """

    name: str
    type: str
    shape: Tuple[int, ...]
    ne: Tuple[int, ...]
    offset: int
    nbytes: int
    file: str
    decodes: bool


def aligned_empty(nbytes: int, dtype=np.uint8, shape=None) -> np.ndarray:
    """An uninitialised array of `nbytes` bytes whose data starts on a 64-byte boundary."""
    dtype = np.dtype(dtype)
    buf = np.empty(nbytes + _ALIGN, np.uint8)
    skip = (-buf.ctypes.data) % _ALIGN
    arr = buf[skip : skip + nbytes].view(dtype)
    return arr.reshape(shape if shape is not None else (nbytes // dtype.itemsize,))


def _to_metadata_value(v):
    if isinstance(v, tuple):  # (numpy dtype, bytes): a numeric array, read-only
        return np.frombuffer(v[1], dtype=np.dtype(v[0]))
    if isinstance(v, list):
        return [_to_metadata_value(x) for x in v]
    return v


def _dtype_name(obj) -> str:
    return str(getattr(obj, "dtype", "")).rsplit(".", 1)[-1]


class Model:
    """One opened source. Use as a context manager, or call close().

    Options are the mount's -o names: hf_dtype, mlx_dtype, safetensors_dtype ("f32", "f16",
    "bf16"), hf_max_shard_size, mlx_requantize (8, 6, 4), mmproj (a projector's path),
    cache_dir, cache_size_mib, ca_file, token, read_timeout, s3_path_style, s3_virtual_host,
    s3_anonymous; and threads: how many threads a read may use (default: every CPU).
    Raises GGUFError, ReadError, FileNotFoundError, ValueError (a bad option value), TypeError
    (an unknown option).
    """

    def __init__(self, source, threads: Optional[int] = None, **options):
        self._threads = int(threads) if threads else _ggufs.hardware_threads()
        self._m = _ggufs.Mount(os.fspath(source), **options)
        self.source = os.fspath(source)
        self._metadata = None
        self._tensors = None
        self._index = None

    # -- lifetime --------------------------------------------------------------------------
    def close(self) -> None:
        self._m = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def _mount(self):
        if self._m is None:
            raise ValueError("I/O operation on a closed ggufs.Model")
        return self._m

    @property
    def warnings(self):
        """The lines the daemon logs at mount: what the views leave out."""
        return list(self._mount.warnings)

    # -- metadata and tensor infos ---------------------------------------------------------
    @property
    def metadata(self):
        """The metadata as a read-only mapping, in file order: integers, floats, bools, str
        (bytes where not UTF-8), read-only NumPy arrays for numeric arrays, lists for arrays of
        strings. Empty for a library."""
        if self._metadata is None:
            self._metadata = types.MappingProxyType(
                {k: _to_metadata_value(v) for k, v in self._mount.metadata()}
            )
        return self._metadata

    @property
    def tensors(self):
        """Tensor name -> TensorInfo, in file order (read-only). Empty for a library."""
        if self._tensors is None:
            infos = {}
            index = {}
            for i, (name, typ, ne, offset, nbytes, file, decodes) in enumerate(
                self._mount.tensors()
            ):
                infos[name] = TensorInfo(
                    name, typ, tuple(reversed(ne)), tuple(ne), offset, nbytes, file, decodes
                )
                index[name] = i
            self._tensors = types.MappingProxyType(infos)
            self._index = index
        return self._tensors

    def tensor(self, name: str, dtype: str = "float32", out=None):
        """Tensor `name`'s elements, decoded block by block, bit-equal to the mount's f32/
        (float32), f16/ (float16) and raw/ (stored) files; bfloat16 rounds as torch's
        .to(torch.bfloat16) does. Shape: TensorInfo.shape; "stored" gives the stored bytes
        (uint8, TensorInfo.nbytes of them), for a local file a read-only view of the file
        mapped in memory, no copy.

        out: a C-contiguous, writable NumPy array, CPU torch tensor or MLX array of the shape
        and dtype (bfloat16: torch's or MLX's bfloat16, or 16-bit integers; stored: a byte
        buffer of nbytes bytes), decoded into in place and returned. Without out the array is
        allocated 64-byte aligned.

        Raises KeyError (no such tensor), ValueError (a type ggufs does not decode, a bad dtype
        or out shape, a shape NumPy cannot hold), TypeError (out of another dtype or not writable), ReadError.
        """
        info = self.tensors[name]
        if dtype not in _DTYPES:
            raise ValueError(f"dtype {dtype!r}: must be one of {', '.join(_DTYPES)}")
        index = self._index[name]
        if dtype == "stored":
            shape = (info.nbytes,)
        else:
            shape = info.shape
        if out is None:
            if dtype == "stored":
                view = self._mapped(index)
                if view is not None:
                    return view
            np_dtype = _DTYPES[dtype]
            count = info.nbytes if dtype == "stored" else int(np.prod(shape, dtype=object))
            try:
                out = aligned_empty(count * np_dtype.itemsize, np_dtype, shape)
            except ValueError:
                # A zero-element tensor whose other dimensions' product overflows NumPy's
                # intp (ne = [2^40, 2^40, 2^40, 0] is a valid tensor info).
                raise ValueError(f"{name}: NumPy cannot hold an array of shape {shape}") from None
        else:
            if _dtype_name(out) not in _OUT_DTYPES[dtype]:
                raise TypeError(
                    f"out has dtype {getattr(out, 'dtype', type(out).__name__)}; "
                    f"{dtype} needs one of {sorted(_OUT_DTYPES[dtype])}"
                )
            if dtype != "stored" and tuple(out.shape) != tuple(shape):
                raise ValueError(f"out has shape {tuple(out.shape)}; {name} has {tuple(shape)}")
        self._mount.tensor_into(index, dtype, out, self._threads)
        return out

    def _mapped(self, index: int):
        ext = self._mount.stored_extent(index)
        if ext is None:
            return None
        fd, offset, size = ext
        if size == 0:
            return np.empty(0, np.uint8)
        start = offset - offset % mmap.ALLOCATIONGRANULARITY
        mm = mmap.mmap(fd, offset - start + size, access=mmap.ACCESS_READ, offset=start)
        return np.frombuffer(mm, dtype=np.uint8, count=size, offset=offset - start)

    # -- the tree ---------------------------------------------------------------------------
    def _call(self, fn, path, *args):
        try:
            return fn(os.fsencode(path), *args)
        except FileNotFoundError:
            self._explain_missing(path)
            raise

    def _explain_missing(self, path: str) -> None:
        # A folder view that is absent says why in its parent's user.ggufs.<name> (the model's
        # root): ViewUnavailable with that reason, as `getfattr -n user.ggufs.hf MNT` shows it.
        parts = [p for p in path.split("/") if p not in ("", ".")]
        for i, name in enumerate(parts):
            parent = "/".join(parts[:i])
            try:
                attrs = dict(self._mount.xattrs(os.fsencode(parent)))
            except OSError:
                return
            reason = attrs.get("user.ggufs." + name)
            if reason is not None:
                raise ViewUnavailable(f"{path}: {reason.decode('utf-8', 'replace')}")

    def listdir(self, path: str = "") -> list:
        """The names in folder `path` ("" or "/": the root), in the mount's order."""
        return self._call(self._mount.listdir, path)

    def stat(self, path: str = "") -> os.stat_result:
        """An os.stat_result as the mount's: a folder 0o555, a file 0o444, st_size in bytes."""
        is_dir, size, mtime_ns = self._call(self._mount.stat, path)
        mode = (_stat.S_IFDIR | 0o555) if is_dir else (_stat.S_IFREG | 0o444)
        t = mtime_ns / 1e9
        return os.stat_result((mode, 0, 0, 2 if is_dir else 1, 0, 0, size, t, t, t))

    def getxattrs(self, path: str = "") -> dict:
        """The extended attributes the mount shows for `path` (name -> bytes)."""
        return dict(self._call(self._mount.xattrs, path))

    def readinto(self, path: str, offset: int, out) -> int:
        """Reads bytes of file `path` from byte `offset` into writable buffer `out` (its nbytes
        at most; clipped at the end of the file); returns the count."""
        return self._call(self._mount.readinto, path, offset, out, self._threads)

    def read(self, path: str, offset: int = 0, size: int = -1) -> bytes:
        """Bytes [offset, offset + size) of file `path` (size -1: to its end), as `dd` reads
        them from the mount."""
        total = self.stat(path).st_size
        if size < 0 or offset + size > total:
            size = max(0, total - offset)
        buf = aligned_empty(size)
        n = self.readinto(path, offset, buf)
        return buf[:n].tobytes()

    def open(self, path: str) -> "RawFile":
        """File `path` as an io.RawIOBase (wrap it in io.BufferedReader for small reads)."""
        return RawFile(self, path)


def open(source, **options) -> Model:
    """Opens `source` as ``ggufs SOURCE MNT`` mounts it (see Model)."""
    return Model(source, **options)


class RawFile(io.RawIOBase):
    """A file of the tree, read-only and seekable."""

    def __init__(self, model: Model, path: str):
        super().__init__()
        st = model.stat(path)
        if _stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(21, "Is a directory", path)
        self._model, self._path, self._size, self._pos = model, path, st.st_size, 0
        self.name = path

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, b):
        view = memoryview(b).cast("B")
        if self._pos >= self._size or len(view) == 0:
            return 0
        arr = np.frombuffer(view, dtype=np.uint8)
        n = self._model.readinto(self._path, self._pos, arr)
        self._pos += n
        return n

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._pos = base + offset
        return self._pos

    def tell(self):
        return self._pos
