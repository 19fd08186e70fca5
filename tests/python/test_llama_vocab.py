"""llama.cpp's own tokenizer tests (tests/test-tokenizer-0.cpp) against the hf/ folder of a mount.

llama.cpp keeps, for 15 vocabularies, a vocab-only GGUF (models/ggml-vocab-NAME.gguf) that its
converter made from a Hugging Face tokenizer, and that tokenizer's own ids for a set of texts:
NAME.gguf.inp holds the texts, each followed by a line "__ggml_vocab_test__", and NAME.gguf.out
one line per text of space-separated ids, which convert_hf_to_gguf_update.py wrote with
AutoTokenizer.from_pretrained(<the original folder>).encode(text, add_special_tokens=False).
Here each GGUF is mounted, AutoTokenizer.from_pretrained(MNT/hf) encodes every text the same way,
and the ids must be the .out's: the original tokenizer's, never ggufs's own.

llama.cpp's source tree comes from $GGUFS_LLAMA_CPP, else /var/cache/ggufs-tests/llama.cpp
(scripts/install-deps --tests extracts it from the pinned llama-cpp-python sdist); without it
every test skips with a message. scripts/test runs this file under transformers 4.57.6 (the venv)
and 5.24.0 (venv-transformers5): transformers 5 rebuilds some tokenizer classes' pipelines
itself instead of reading tokenizer.json's (hf/ names PreTrainedTokenizerFast, which both lines
take as written), so the two lines can differ.

One test per vocabulary, asserting all its cases; the failure lists each mismatching case.
Where ggufs is wrong today, KNOWN names the mismatching cases and the diagnosed cause per
transformers line; the test is then xfail(strict=True) and raises KnownMismatch only when exactly
those cases mismatch: other cases mismatching fail the test, and all passing fails it as XPASS
(remove the entry then).
"""

import os

import pytest

transformers = pytest.importorskip("transformers")
from transformers import AutoTokenizer  # noqa: E402

from llama_converter import LLAMA_CPP  # noqa: E402

SEPARATOR = "\n__ggml_vocab_test__\n"  # test-tokenizer-0.cpp read_tests()
LINE = transformers.__version__.split(".")[0]  # "4" or "5"

VOCABS = ["bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2",
          "llama-bpe", "llama-spm", "mpt", "phi-3", "qwen2", "qwen35", "refact", "starcoder"]


# Why the original tokenizer's ids are not hf/'s, per vocabulary: "hf" False when there is no
# hf/ at all; else per transformers major version, "cases" the indices (0-based, in .inp order)
# that mismatch and "total" how many there are. Every vocabulary matches today.
KNOWN = {}


class KnownMismatch(AssertionError):
    """The failure KNOWN documents for this vocabulary and transformers line, exactly."""


def known(name):
    entry = KNOWN.get(name)
    if entry is None or "hf" in entry:
        return entry
    return entry.get(LINE)


def case_list(cases):
    """'#0 #21 #37-#42' for [0, 21, 37, ..., 42]."""
    out, i = [], 0
    while i < len(cases):
        j = i
        while j + 1 < len(cases) and cases[j + 1] == cases[j] + 1:
            j += 1
        out.append(f"#{cases[i]}" if j == i else f"#{cases[i]}-#{cases[j]}")
        i = j + 1
    return " ".join(out)


def reason(name):
    k = known(name)
    if "hf" in k:
        return f"{name}: {k['cause']}"
    n = len(k["cases"])
    return (f"{name}: {n} of {k['total']} cases ({case_list(k['cases'])}) differ under "
            f"transformers {transformers.__version__}: {k['cause']}")


def params():
    for name in VOCABS:
        marks = [pytest.mark.xfail(strict=True, raises=KnownMismatch, reason=reason(name))] \
            if known(name) else []
        yield pytest.param(name, marks=marks, id=name)


def read_cases(inp, out):
    """[(text, ids)] as test-tokenizer-0.cpp's read_tests(): the .inp split at each separator
    (the text after the last one, if any, is a case too), the .out's lines stripped and split at
    spaces."""
    raw = inp.read_bytes().decode("utf-8")
    texts = raw.split(SEPARATOR)
    if texts[-1] == "":
        texts.pop()
    lines = out.read_text(encoding="utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    assert len(texts) == len(lines), f"{inp}: {len(texts)} texts, {out}: {len(lines)} lines"
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, lines)]


@pytest.fixture(scope="module")
def llama_cpp():
    if not (LLAMA_CPP / "models").is_dir():
        pytest.skip(f"llama.cpp's source is absent ({LLAMA_CPP}: run scripts/install-deps --tests,"
                    " or set GGUFS_LLAMA_CPP)")
    return LLAMA_CPP


def shown(ids, tok, limit=40):
    """At most `limit` ids, each decoded alone, and their tokens (the vocabulary's strings: a
    byte-level piece that decodes to U+FFFD alone still shows its bytes there)."""
    ids, more = ids[:limit], f" … ({len(ids)} ids)" if len(ids) > limit else ""
    pieces = [tok.decode([i]) for i in ids]
    return f"{ids}{more}, decoded {pieces!r}, tokens {tok.convert_ids_to_tokens(ids)!r}"


@pytest.mark.parametrize("name", list(params()))
def test_llama_vocab(name, llama_cpp, mount):
    gguf = llama_cpp / "models" / f"ggml-vocab-{name}.gguf"
    cases = read_cases(gguf.with_name(gguf.name + ".inp"), gguf.with_name(gguf.name + ".out"))
    assert cases, f"{gguf}.inp holds no cases"
    m = mount(gguf)
    hf = m / "hf"
    k = known(name)
    if not hf.is_dir():
        try:
            why = os.getxattr(m.path, "user.ggufs.hf").decode()
        except OSError:
            why = "(no user.ggufs.hf xattr)"
        msg = f"{name}: ggufs offers no hf/: {why}"
        if k is not None and "hf" in k:
            raise KnownMismatch(msg)
        raise AssertionError(msg)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        assert (hf / f).is_file(), f"{name}: hf/ has no {f}"

    tok = AutoTokenizer.from_pretrained(hf)  # once: the 150k-token vocabularies take a second
    bad = []
    for i, (text, expected) in enumerate(cases):
        got = tok.encode(text, add_special_tokens=False)
        if got != expected:
            first = next((j for j, (a, b) in enumerate(zip(expected, got)) if a != b),
                         min(len(expected), len(got)))
            text_shown = repr(text) if len(text) <= 120 else f"{text[:120]!r}… ({len(text)} chars)"
            bad.append((i, f"  #{i} {text_shown}: first difference at id {first}\n"
                           f"    expected {shown(expected, tok)}\n"
                           f"    got      {shown(got, tok)}"))
    if not bad:
        return
    head = (f"{name}: {len(bad)} of {len(cases)} cases differ from llama.cpp's record "
            f"(transformers {transformers.__version__}, {type(tok).__name__}):")
    msg = "\n".join([head] + [line for _, line in bad])
    indices = [i for i, _ in bad]
    if k is not None and "cases" in k and indices == k["cases"]:
        raise KnownMismatch(msg)
    if k is not None:
        msg += f"\n  (KNOWN documents {case_list(k['cases']) if 'cases' in k else 'no hf/'})"
    raise AssertionError(msg)
