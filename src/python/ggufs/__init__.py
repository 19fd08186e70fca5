"""ggufs in-process: a GGUF model's tree (metadata/, raw/, f32/, hf/, mlx/, ...) without a mount.

``ggufs.open(source, **options)`` serves what ``ggufs SOURCE MNT -o options`` mounts, with the
same bytes, read by the same code (the library's ``ContentReader``): a GGUF file, a split model's
first shard, an http(s)://, s3:// or hf:// URL, ``ollama:NAME[:TAG]``, or a folder (a library).

Errors (the daemon's one-line messages):
  GGUFError(ValueError)     the file is malformed: ``.file``, ``.offset`` (bytes), ``.problem``
  ReadError(OSError)        a read failed (errno EIO: the mount's EIO)
  FileNotFoundError         no such file in the tree
  ViewUnavailable(LookupError)  a folder view (hf/, mlx/, ...) is absent: the reason the mount
                            gives in its root's ``user.ggufs.<view>`` attribute
  KeyError                  an unknown tensor name
  MemoryError               memory ran out
  TypeError, ValueError     a bad ``out`` buffer or option
"""

from ._ggufs import GGUFError, ReadError, ViewUnavailable
from ._model import Model, TensorInfo, open
from ._safetensors import safe_open

__all__ = [
    "GGUFError",
    "Model",
    "ReadError",
    "TensorInfo",
    "ViewUnavailable",
    "open",
    "safe_open",
]

for _e in (GGUFError, ReadError, ViewUnavailable):
    _e.__module__ = "ggufs"
