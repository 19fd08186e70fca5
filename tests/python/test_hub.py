"""hf:// names against huggingface_hub itself: the URL ggufs requests is hf_hub_url(...) and the
token it sends is get_token()'s, as seen by a small HTTP server on 127.0.0.1 standing in for the
Hub (HF_ENDPOINT), started and stopped by the test. `ggufs --info hf://...` makes the requests."""

import http.server
import itertools
import json
import os
import subprocess
import sys
import threading

import pytest


class Hub:
    """Serves one GGUF file at every path with range requests, as the Hub's resolve/ answers,
    and records each request's target and Authorization header."""

    def __init__(self, body):
        self.requests = []
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                hub.requests.append((self.path, self.headers.get("Authorization")))
                first, last = 0, len(body) - 1
                spec = self.headers.get("Range", "")
                if spec.startswith("bytes="):
                    a, _, b = spec[6:].partition("-")
                    first, last = int(a), min(int(b) if b else last, len(body) - 1)
                part = body[first:last + 1]
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {first}-{last}/{len(body)}")
                self.send_header("Content-Length", str(len(part)))
                self.send_header("ETag", '"gguf-test"')
                self.end_headers()
                self.wfile.write(part)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def hub(testdata):
    h = Hub((testdata / "conformance" / "F32.gguf").read_bytes())
    yield h
    h.stop()


def base_env(home, endpoint):
    # Only what the test sets: a token or HF_* of the caller's own environment must not leak in.
    return {"PATH": os.environ["PATH"], "HOME": str(home), "HF_ENDPOINT": endpoint}


def ggufs_info(binary, name, env):
    return subprocess.run([str(binary), "--info", name], env=env, capture_output=True, text=True,
                          timeout=60)


def hub_python(code, env):
    """Runs `code` with the suite's Python (the one that has huggingface_hub) in `env`: its
    constants (HF_ENDPOINT, HF_HOME, HF_TOKEN_PATH) are read at import, so each set of variables
    needs its own process."""
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# (hf:// name, hf_hub_url's arguments): repo_id, filename, repo_type, revision.
NAMES = [
    ("hf://someone/model/m.gguf", ("someone/model", "m.gguf", None, None)),
    ("hf://someone/model/with space.gguf", ("someone/model", "with space.gguf", None, None)),
    ("hf://someone/model/ütf-8 ✓ 🦙.gguf", ("someone/model", "ütf-8 ✓ 🦙.gguf", None, None)),
    ("hf://someone/model/a+b.gguf", ("someone/model", "a+b.gguf", None, None)),
    ("hf://someone/model/c#d.gguf", ("someone/model", "c#d.gguf", None, None)),
    ("hf://someone/model/100%.gguf", ("someone/model", "100%.gguf", None, None)),
    ("hf://someone/model/%41.gguf", ("someone/model", "%41.gguf", None, None)),
    ("hf://someone/model/semi;colon?q=1&x='\"<>.gguf",
     ("someone/model", "semi;colon?q=1&x='\"<>.gguf", None, None)),
    ("hf://someone/model/deep/nested/folders/m.gguf",
     ("someone/model", "deep/nested/folders/m.gguf", None, None)),
    ("hf://datasets/someone/data/m.gguf", ("someone/data", "m.gguf", "dataset", None)),
    ("hf://datasets/someone/data@v1.0/sub dir/m+1.gguf",
     ("someone/data", "sub dir/m+1.gguf", "dataset", "v1.0")),
    ("hf://spaces/someone/space/m.gguf", ("someone/space", "m.gguf", "space", None)),
    ("hf://someone/model@refs/pr/1/m.gguf", ("someone/model", "m.gguf", None, "refs/pr/1")),
    ("hf://someone/model@refs/convert/parquet/x/m.gguf",
     ("someone/model", "x/m.gguf", None, "refs/convert/parquet")),
    ("hf://someone/model@refs%2Fpr%2F12/m.gguf", ("someone/model", "m.gguf", None, "refs/pr/12")),
    ("hf://someone/model@feature%2Fbranch/m.gguf",
     ("someone/model", "m.gguf", None, "feature/branch")),
    ("hf://someone/model@0123456789abcdef0123456789abcdef01234567/m.gguf",
     ("someone/model", "m.gguf", None, "0123456789abcdef0123456789abcdef01234567")),
    ("hf://some-one/Model.Name_2/m.gguf", ("some-one/Model.Name_2", "m.gguf", None, None)),
]


def test_requested_url_is_hf_hub_url(hub, ggufs_binary, tmp_path):
    env = base_env(tmp_path, hub.endpoint)
    code = ("import json, sys; from huggingface_hub import hf_hub_url\n"
            f"cases = {[args for _, args in NAMES]!r}\n"
            "print(json.dumps([hf_hub_url(r, f, repo_type=t, revision=v) for r, f, t, v in cases]))")
    urls = hub_python(code, env)
    for (name, _), url in zip(NAMES, urls):
        hub.requests.clear()
        r = ggufs_info(ggufs_binary, name, env)
        assert r.returncode == 0, f"{name}: {r.stderr}"
        assert hub.requests, name
        for target, _ in hub.requests:
            assert hub.endpoint + target == url, name


# Token sources, each present or not (and in some of their odd forms); every combination.
HF_TOKEN = [None, "", "env-token", "  env-spaced \r\n"]
HUGGING_FACE_HUB_TOKEN = [None, "", " old-token\n"]  # the variable's older name
HF_TOKEN_PATH = [None, "path-token\n", "missing", "  path-lines\r\nsecond\n"]
HF_HOME = [None, "home-token", "  \n", "no file"]
DEFAULT_HOME = ["default-token\n", None]  # $HOME/.cache/huggingface/token
XDG_CACHE_HOME = [None, "xdg-token\n"]  # $XDG_CACHE_HOME/huggingface/token


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


# get_token() under each environment in one process: huggingface_hub reads HF_HOME and
# HF_TOKEN_PATH into huggingface_hub.constants at import, so that module is imported again (its
# own code, run anew) after the environment is set; get_token() looks its values up there.
GET_TOKENS = """
import importlib, json, os
from huggingface_hub import constants, get_token
def tokens(envs):
    out = []
    for env in envs:
        os.environ.clear()
        os.environ.update(env)
        importlib.reload(constants)
        out.append(get_token())
    return out
"""


def token_cases():
    return list(
        itertools.product(
            HF_TOKEN, HUGGING_FACE_HUB_TOKEN, HF_TOKEN_PATH, HF_HOME, DEFAULT_HOME, XDG_CACHE_HOME
        )
    )


def test_token_is_get_token(hub, ggufs_binary, tmp_path):
    cases = token_cases()
    envs = []
    for i, (token, old_token, token_path, hf_home, default_home, xdg) in enumerate(cases):
        d = tmp_path / str(i)
        env = base_env(d / "home", hub.endpoint)
        if token is not None:
            env["HF_TOKEN"] = token
        if old_token is not None:
            env["HUGGING_FACE_HUB_TOKEN"] = old_token
        if token_path == "missing":
            env["HF_TOKEN_PATH"] = str(d / "nowhere" / "token")
        elif token_path is not None:
            env["HF_TOKEN_PATH"] = write(d / "token-path" / "t", token_path)
        if hf_home is not None:
            env["HF_HOME"] = str(d / "hf-home")
            (d / "hf-home").mkdir(parents=True)
            if hf_home != "no file":
                write(d / "hf-home" / "token", hf_home)
        if default_home is not None:
            write(d / "home" / ".cache" / "huggingface" / "token", default_home)
        if xdg is not None:
            env["XDG_CACHE_HOME"] = str(d / "xdg")
            write(d / "xdg" / "huggingface" / "token", xdg)
        envs.append(env)
    # The environments go in a file: on the command line they pass the system's argument limit.
    envs_file = tmp_path / "envs.json"
    envs_file.write_text(json.dumps(envs))
    wants = hub_python(
        GET_TOKENS + f"print(json.dumps(tokens(json.load(open({str(envs_file)!r})))))",
        base_env(tmp_path, ""),
    )
    failures = []
    for case, env, want in zip(cases, envs, wants):
        hub.requests.clear()
        r = ggufs_info(ggufs_binary, "hf://someone/model/m.gguf", env)
        assert r.returncode == 0, r.stderr
        sent = {auth for _, auth in hub.requests}
        assert len(sent) == 1, sent
        got = sent.pop()
        if got != (None if want is None else f"Bearer {want}"):
            failures.append(f"{case}: get_token() {want!r}, ggufs sent {got!r}")
    assert not failures, f"{len(failures)} of {len(cases)} cases differ:\n" + "\n".join(failures)
