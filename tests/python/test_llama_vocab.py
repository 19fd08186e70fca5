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
itself instead of reading tokenizer.json's, so the two lines can differ.

One test per vocabulary, asserting all its cases; the failure lists each mismatching case.
Where ggufs is wrong today, KNOWN names the mismatching cases and the diagnosed cause per
transformers line; the test is then xfail(strict=True) and raises KnownMismatch only when exactly
those cases mismatch: other cases mismatching fail the test, and all passing fails it as XPASS
(remove the entry then).
"""

import os
import pathlib

import pytest

transformers = pytest.importorskip("transformers")
from transformers import AutoTokenizer  # noqa: E402

LLAMA_CPP = pathlib.Path(os.environ.get("GGUFS_LLAMA_CPP") or "/var/cache/ggufs-tests/llama.cpp")
SEPARATOR = "\n__ggml_vocab_test__\n"  # test-tokenizer-0.cpp read_tests()
LINE = transformers.__version__.split(".")[0]  # "4" or "5"

VOCABS = ["bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon", "gemma-4", "gpt-2",
          "llama-bpe", "llama-spm", "mpt", "phi-3", "qwen2", "qwen35", "refact", "starcoder"]


def no_hf(arch, tokenizer):
    return {"hf": False, "cause": f"ggufs offers no hf/ for general.architecture '{arch}' "
            f"(tokenizer {tokenizer}) yet"}


# Why the original tokenizer's ids are not hf/'s, per vocabulary and transformers major version:
# "cases" are the indices (0-based, in .inp order) that mismatch, "total" how many there are.
# Each cause was checked by patching a copy of hf/'s files as the text says: every case passed.
_BYTELEVEL = "hf/tokenizer.json's pre_tokenizer is ByteLevel(use_regex=true), GPT-2's regex"
_STARCODER = (
    f"{_BYTELEVEL} alone, where StarCoder's is Sequence[Digits(individual_digits=true), "
    "ByteLevel]: ' ½' (\\p{N}) stays one pre-token instead of ' ' and '½' (llama.cpp's "
    "'starcoder' pre splits \\p{N} first)")


def _deepseek(regexes):
    return (f"{_BYTELEVEL}: ' ½' (\\p{{N}}) stays one pre-token; the original's pre_tokenizer is "
            f"a Sequence of Isolated Splits, llama-vocab.cpp's {regexes} regexes in order, then "
            "ByteLevel(use_regex=false) (so patched: 46/46)")


_LLAMA3 = (
    f"{_BYTELEVEL} (' ?\\p{{N}}+', no [\\r\\n] rules), where llama.cpp's 'llama-bpe' pre is "
    "Llama 3's: Sequence[Split(Regex(\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?"
    "\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+\"), "
    "Isolated), ByteLevel(use_regex=false)] (#0 #21 #32 #37-#42 #45); and BPE "
    "ignore_merges=false where Llama 3's is true (#43: 'Việt' is one token) (so patched: 46/46)")
_PHI3 = (
    "hf/tokenizer.json is GGUFPhi3Converter's: normalizer null, pre_tokenizer null, BPE "
    "byte_fallback=false, unk_token null, so spaces never become '▁' (dropped or fused into the "
    "next word) and bytes without a token vanish; as llama-spm's it should have the normalizer "
    "Sequence[Prepend('▁'), Replace(' ', '▁')] and BPE byte_fallback=true, fuse_unk=true, "
    "unk_token '<unk>' (so patched: 46/46 under 4.57.6 and 5.24.0)")
_QWEN35_NFC = (
    "NFC normalizer, which composes the decomposed inputs ('e' U+0301 becomes 'é', one token "
    "where the original has two)")

KNOWN = {
    "bert-bge": no_hf("bert", "'bert', WordPiece"),
    "command-r": no_hf("command-r", "'gpt2', pre 'command-r'"),
    "falcon": no_hf("falcon", "'gpt2', pre 'falcon'"),
    "gemma-4": no_hf("gemma4", "'gemma4'"),
    "mpt": no_hf("mpt", "'gpt2', pre 'mpt'"),
    "refact": no_hf("refact", "'gpt2', pre 'refact'"),
    "starcoder": {
        "4": {"cases": [0], "total": 46, "cause": _STARCODER},
        "5": {"cases": [0], "total": 46, "cause": _STARCODER + "; besides, transformers 5's "
              "GPT2Tokenizer (tokenizer_config.json's tokenizer_class) builds its own "
              "pre_tokenizer: with tokenizer_class 'PreTrainedTokenizerFast' and the Digits "
              "split, 46/46"},
    },
    "deepseek-coder": {"4": {"cases": [0], "total": 46, "cause": _deepseek(
        "DEEPSEEK_CODER ([\\r\\n], \\s?\\p{L}+, \\s?\\p{P}+, CJK ranges, then "
        "Digits(individual_digits=true) for \\p{N})")}},
    "deepseek-llm": {"4": {"cases": [0], "total": 46, "cause": _deepseek(
        "DEEPSEEK_LLM ([\\r\\n], \\s?[Latin, Greek, Cyrillic ranges]+, \\s?[ASCII and "
        "full-width punctuation]+, \\s+$, CJK ranges, \\p{N}+)")}},
    "llama-bpe": {"4": {"cases": [0, 21, 32, 37, 38, 39, 40, 41, 42, 43, 45], "total": 46,
                        "cause": _LLAMA3}},
    "llama-spm": {"5": {
        "cases": [3, 4, 5, 12, 14, 15, 17, 18, 24, 25, 26, 27, 28, 29, 44], "total": 46,
        "cause": "hf/tokenizer_config.json's tokenizer_class 'LlamaTokenizer': transformers 5's "
        "LlamaTokenizer drops tokenizer.json's normalizer (Prepend('▁'), Replace(' ', '▁')) for "
        "its own Metaspace(prepend_scheme='always', split=false), which prepends no '▁' to a "
        "text already starting with a space (' Hello' gives '▁Hello', the original "
        "'▁▁Hello'); tokenizer_class 'PreTrainedTokenizerFast' keeps tokenizer.json's pipeline "
        "(so patched: 46/46 under both lines)"}},
    "phi-3": {"4": {"cases": [i for i in range(46) if i != 2], "total": 46, "cause": _PHI3}},
    "qwen35": {
        "4": {"cases": [46, 47, 48], "total": 50, "cause": "hf/tokenizer.json's normalizer is "
              f"Qwen2's {_QWEN35_NFC}; Qwen3.5's has none (so patched: 50/50). Its "
              "pre_tokenizer regex should be Qwen3.5's too ('[\\p{L}\\p{M}]+' and "
              "' ?[^\\s\\p{L}\\p{M}\\p{N}]+' for Qwen2's '\\p{L}+' and ' ?[^\\s\\p{L}\\p{N}]+'), "
              "which no case here shows"},
        "5": {"cases": [46, 47, 48], "total": 50, "cause": "transformers 5 loads config.json's "
              "model_type 'qwen2' with its own Qwen2Tokenizer whatever tokenizer_class says "
              "(qwen2 is in its MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS), which builds its own "
              f"{_QWEN35_NFC}; hf/tokenizer.json's NFC normalizer is wrong as well (Qwen3.5's "
              "has none) but is not read"},
    },
}
# The same cause under both lines: transformers 5 loads these tokenizer.json files as they are
# (TokenizersBackend: for a ByteLevel tokenizer.json declaring LlamaTokenizer, and for phi3).
for _name in ("deepseek-coder", "deepseek-llm", "llama-bpe", "phi-3"):
    KNOWN[_name]["5"] = KNOWN[_name]["4"]


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
