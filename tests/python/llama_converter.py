"""llama.cpp's converter (convert_hf_to_gguf.py, its main()) run for the round-trip tests, each
conversion in a process of its own, forked from one that has already imported it.

A conversion of a tiny model spends most of its time importing torch, transformers and the
converter (5.0 s of its 5.1 s, cProfile of the Gemma 3 case); the round-trip tests make some 250
conversions per run.
So a multiprocessing forkserver imports them once per pytest process (llama_converter_preload,
with the converter's own gguf-py first on sys.path, as the converter puts it) and forks each
conversion from it: every conversion still starts from a process that has run no conversion,
and runs the converter's own main() with its command line. A conversion under another Python
(the transformers 4 venv's, for the rows that name it) is a plain subprocess.

LLAMA_CPP: llama.cpp's source tree, $GGUFS_LLAMA_CPP, else /var/cache/ggufs-tests/llama.cpp.
"""

import multiprocessing
import multiprocessing.forkserver
import os
import pathlib
import subprocess
import sys

LLAMA_CPP = pathlib.Path(os.environ.get("GGUFS_LLAMA_CPP") or "/var/cache/ggufs-tests/llama.cpp")
CONVERTER = LLAMA_CPP / "convert_hf_to_gguf.py"

_context = None


def converter_env():
    """The environment of a process running llama.cpp's Python code: its gguf-py first, offline."""
    path = [str(LLAMA_CPP / "gguf-py")] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1")
    env.pop("NO_LOCAL_GGUF", None)
    return env


def _forkserver():
    global _context
    if _context is None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["llama_converter_preload"])
        # The forkserver is a new interpreter with this environment: Python 3.11's does not take
        # this process's sys.path (forkserver.py, main(), ignores sys_path), and drops a preload
        # it cannot import, so this folder goes on its PYTHONPATH; llama_converter_preload reads
        # where llama.cpp is from GGUFS_LLAMA_CPP.
        saved = dict(os.environ)
        here = str(pathlib.Path(__file__).resolve().parent)
        os.environ["PYTHONPATH"] = os.pathsep.join([here] + [p for p in [saved.get("PYTHONPATH")] if p])
        os.environ["GGUFS_LLAMA_CPP"] = str(LLAMA_CPP)
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        _context = context
    return _context


def _run(args, log_path):
    """In the forked process: the converter's main() with `args`, its output to `log_path`."""
    import llama_converter_preload

    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.argv = [str(CONVERTER), *args]
    llama_converter_preload.converter().main()


class Conversion:
    """One conversion running: wait(timeout) gives its exit status (None while running after the
    timeout), kill() stops it. `log_path` holds its output."""

    def __init__(self, args, log_path, python=None):
        self.log_path = pathlib.Path(log_path)
        self._proc = self._process = None
        # a venv's python is a link to the same interpreter as another venv's: not resolved
        if python is not None and os.path.abspath(python) != os.path.abspath(sys.executable):
            with open(self.log_path, "w") as log:
                self._proc = subprocess.Popen([python, str(CONVERTER), *map(str, args)],
                                              stdout=log, stderr=subprocess.STDOUT,
                                              env=converter_env())
        else:
            self._process = _forkserver().Process(target=_run,
                                                  args=([str(a) for a in args], str(log_path)))
            self._process.start()

    def wait(self, timeout):
        if self._proc is not None:
            try:
                return self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                return None
        self._process.join(timeout)
        return self._process.exitcode

    def running(self):
        if self._proc is not None:
            return self._proc.poll() is None
        return self._process.is_alive()

    def kill(self):
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
        else:
            self._process.kill()
            self._process.join()

    def log(self):
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def convert(args, log_path, python=None):
    """Starts convert_hf_to_gguf.py with `args` (its command line after the program name)."""
    return Conversion(args, log_path, python)


def run(args, log_path, timeout=900):
    """convert_hf_to_gguf.py with `args`, to its end: (exit status, its output)."""
    job = convert(args, log_path)
    status = job.wait(timeout)
    if status is None:
        job.kill()
    return status, job.log()
