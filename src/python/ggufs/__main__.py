"""python -m ggufs ls|cat|cp SOURCE PATH [DEST] [-o OPTION=VALUE,...]: the tree where no mount
can go. ls lists a folder (or names a file), cat writes a file to stdout, cp copies a file or a
folder (recursively) to DEST, as `cp -r MNT/PATH DEST` would. The daemon's one-line messages and
exit codes: 1 usage, 2 cannot read, 3 not a valid GGUF file."""

import argparse
import os
import stat
import sys

import numpy as np

from . import GGUFError, ViewUnavailable
from ._model import Model, aligned_empty

EXIT_USAGE, EXIT_CANNOT_READ, EXIT_INVALID_GGUF = 1, 2, 3
_CHUNK = 64 << 20  # bytes a copy step reads


def _options(items):
    out = {}
    for item in items or []:
        for part in item.split(","):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"-o {part}: must be OPTION=VALUE")
            out[key] = int(value) if key in ("mlx_requantize", "cache_size_mib", "read_timeout") else value
    return out


def _copy_file(model, path, dest, size):
    buf = aligned_empty(min(size, _CHUNK) or 1)
    with open(dest, "wb") as out:
        at = 0
        while at < size:
            n = model.readinto(path, at, buf[: min(_CHUNK, size - at)])
            out.write(memoryview(buf[:n]))
            at += n


def _copy(model, path, dest):
    st = model.stat(path)
    if not stat.S_ISDIR(st.st_mode):
        if os.path.isdir(dest):
            dest = os.path.join(dest, os.path.basename(path.rstrip("/")) or "file")
        return _copy_file(model, path, dest, st.st_size)
    os.makedirs(dest, exist_ok=True)
    for name in model.listdir(path):
        _copy(model, f"{path.rstrip('/')}/{name}", os.path.join(dest, name))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ggufs", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("ls", "cat", "cp"))
    parser.add_argument("source")
    parser.add_argument("path", nargs="?", default="")
    parser.add_argument("dest", nargs="?")
    parser.add_argument("-o", dest="options", action="append", metavar="OPTION=VALUE,...")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else 0
    if args.command == "cp" and not args.dest:
        print("ggufs: cp needs SOURCE PATH DEST", file=sys.stderr)
        return EXIT_USAGE
    try:
        options = _options(args.options)
    except ValueError as e:
        print(f"ggufs: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with Model(args.source, **options) as model:
            if args.command == "ls":
                st = model.stat(args.path)
                names = model.listdir(args.path) if stat.S_ISDIR(st.st_mode) else [args.path]
                sys.stdout.write("".join(n + "\n" for n in names))
            elif args.command == "cat":
                out = sys.stdout.buffer
                size = model.stat(args.path).st_size
                buf = aligned_empty(min(size, _CHUNK) or 1)
                at = 0
                while at < size:
                    n = model.readinto(args.path, at, buf[: min(_CHUNK, size - at)])
                    out.write(memoryview(buf[:n]))
                    at += n
                out.flush()
            else:
                _copy(model, args.path, args.dest)
        return 0
    except GGUFError as e:
        print(f"ggufs: {e}", file=sys.stderr)
        return EXIT_INVALID_GGUF
    except ViewUnavailable as e:
        print(f"ggufs: {e}", file=sys.stderr)
        return EXIT_CANNOT_READ
    except OSError as e:  # ReadError: the daemon's line; the others: PATH: the OS's words
        where = f"{e.filename}: " if e.filename else ""
        print(f"ggufs: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_CANNOT_READ
    except (TypeError, ValueError) as e:
        print(f"ggufs: {e}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print("ggufs: not enough memory", file=sys.stderr)
        return EXIT_CANNOT_READ


if __name__ == "__main__":
    sys.exit(main())
