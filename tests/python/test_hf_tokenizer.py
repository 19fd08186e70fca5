"""tokenizer.json, tokenizer_config.json and special_tokens_map.json of a GGUF model
(src/hf/hf_tokenizer.cpp) against transformers 4.57.6 and 5.24.0 themselves.

hf/'s tokenizer is the original tokenizer llama.cpp's converter read (tests/python/
test_llama_vocab.py checks it against the original ids), keyed on tokenizer.ggml.model and
tokenizer.ggml.pre, and declared PreTrainedTokenizerFast, so that tokenizer.json is taken as
written. The oracle here is transformers' own GGUF import (AutoTokenizer.from_pretrained(<dir>,
gguf_file=<file>)): where it builds the original, AutoTokenizer.from_pretrained(<folder holding our
files>) must give the same token ids for a multilingual text (code, emoji, CJK, runs of spaces and
newlines, special token strings) with and without special tokens, for one text and a pair, the
same decoded text, special tokens and vocabulary. Where the import is not the original, DIFFERS
(4.57.6) and DIFFERS_5 (5.24.0) name the transformers difference and what is asserted instead
(ids that differ while ours decode back, the original's special tokens, our vocabulary within
the import's).

The GGUF files are written here with gguf-py's GGUFWriter: a SentencePiece vocabulary (byte
tokens, pieces, scores, token types, no merges: the import builds them from the scores) and a
GPT-2 byte-level one (with merges), under each architecture transformers converts; plus the
shared real vocabularies (llama.cpp's vocab-only GGUFs) and the shared tiny llama.

Our side comes from ggufs-test-hf-config --tokenizer / --tokenizer-config / --special-tokens-map
(tests/support/hf_config_dump.cpp): $GGUFS_HF_CONFIG_DUMP, else <repo>/build/ggufs-test-hf-config.
"""

import json
import subprocess

import numpy as np
import pytest

from conftest import _testdata_dir, imported_tokenizer
from test_hf_config import add_base_hparams

gguf = pytest.importorskip("gguf")
transformers = pytest.importorskip("transformers")
from transformers import AutoTokenizer  # noqa: E402

TRANSFORMERS_5 = transformers.__version__.split(".")[0] == "5"

TEXT = (
    "Hello world! The quick brown fox.\ndef f(x):\n    return x  # café naïve cafe\u0301\n\n"
    "\t中文字符 and 日本語 😀🎉   spaces  \n\n\n<s> </s> <unk> <|endoftext|> "
    "<|im_start|>user<|im_end|> <bos><eos> <|user|> hello"
)
PAIR = " world  中文\n<|end|>"


def ours(tool, path, what):
    """(exit code, stdout, stderr) of the dump tool on `path`."""
    r = subprocess.run([str(tool), what, str(path)], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def theirs(path):
    return imported_tokenizer(path)  # the shared files' imported once (conftest)


def our_folder(tool, path, folder):
    """Our hf/ folder: config.json and the three tokenizer files."""
    folder.mkdir(exist_ok=True)
    for what, name in [
        (None, "config.json"),
        ("--tokenizer", "tokenizer.json"),
        ("--tokenizer-config", "tokenizer_config.json"),
        ("--special-tokens-map", "special_tokens_map.json"),
    ]:
        args = [str(tool)] + ([what] if what else []) + [str(path)]
        r = subprocess.run(args, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"no {name} for {path}: {r.stderr}"
        (folder / name).write_text(r.stdout)
    return folder


def added_state(tok):
    return {i: t.__getstate__() for i, t in tok.added_tokens_decoder.items()}


def assert_same_encoding(mine, reference):
    """The ids of TEXT, alone and paired with PAIR, with and without special tokens, and their
    decoding with and without them, are equal."""
    for special in (True, False):
        ids = reference(TEXT, add_special_tokens=special)["input_ids"]
        assert mine(TEXT, add_special_tokens=special)["input_ids"] == ids
        pair = reference(TEXT, PAIR, add_special_tokens=special)["input_ids"]
        assert mine(TEXT, PAIR, add_special_tokens=special)["input_ids"] == pair
        for skip in (True, False):
            assert mine.decode(ids, skip_special_tokens=skip) == reference.decode(
                ids, skip_special_tokens=skip
            )


def special_tokens(tok):
    return {name: getattr(tok, f"{name}_token") for name in ("bos", "eos", "unk", "pad")}


def assert_encoding(mine, reference, differs):
    """The encoding part of assert_same_tokenizer: the same as the import's, or as its `differs`
    entry says."""
    if differs.get("encoding") == "special":  # equal without the special tokens
        for args in ((TEXT,), (TEXT, PAIR)):
            ids = reference(*args, add_special_tokens=False)["input_ids"]
            assert mine(*args, add_special_tokens=False)["input_ids"] == ids
            assert mine.decode(ids) == reference.decode(ids)
    elif differs.get("encoding") == "after_special":
        # equal on TEXT up to its first special-token string, different on the whole
        head = TEXT.split("<s>")[0]
        for special in (True, False):
            ids = reference(head, add_special_tokens=special)["input_ids"]
            assert mine(head, add_special_tokens=special)["input_ids"] == ids
            assert mine.decode(ids) == reference.decode(ids)
        assert (
            mine(TEXT, add_special_tokens=False)["input_ids"]
            != reference(TEXT, add_special_tokens=False)["input_ids"]
        ), "the import now encodes as the original: drop the DIFFERS_5 entry"
    elif differs.get("encoding") == "ids":  # the ids differ (and the fixture's round trip too)
        ids = mine(TEXT, add_special_tokens=False)["input_ids"]
        assert ids != reference(TEXT, add_special_tokens=False)["input_ids"]
    elif differs.get("encoding"):
        # TEXT less its special-token strings and decomposed accent (which an NFC normalizer
        # composes) decodes back from our ids
        plain = TEXT.split("<s>")[0].replace("cafe\u0301", "cafe")
        assert mine.decode(mine(plain, add_special_tokens=False)["input_ids"]) == plain
        assert any(
            mine(*args, add_special_tokens=False)["input_ids"]
            != reference(*args, add_special_tokens=False)["input_ids"]
            for args in ((TEXT,), (TEXT, PAIR))
        ), "the import now encodes as the original: drop the DIFFERS entry"
    else:
        assert_same_encoding(mine, reference)


def assert_same_tokenizer(tool, path, tmp_path, differs=None):
    """Ours against the import. `differs` (a DIFFERS entry) names where transformers' import is
    not the original tokenizer: "encoding" (the ids of TEXT differ: then the decoding of our own
    ids must give TEXT back), "specials" (a dict of the original's special tokens, which ours
    must have), "vocab" (the import adds tokens the original has not). "encoding" is "special"
    where only the special tokens added around the text differ, "after_special" where the ids
    are equal up to TEXT's first special-token string."""
    differs = differs or {}
    reference = theirs(path)
    folder = our_folder(tool, path, tmp_path / "hf")
    mine = AutoTokenizer.from_pretrained(str(folder))

    # tokenizer_class PreTrainedTokenizerFast: tokenizer.json is taken as written. transformers 5
    # (models/auto/tokenization_auto.py) overrides the declared class for some model types
    # (MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS: qwen2 gets Qwen2Tokenizer), a subclass that
    # still takes tokenizer.json as written, which the next assertion checks.
    if TRANSFORMERS_5:
        assert isinstance(mine, transformers.PreTrainedTokenizerFast)
    else:
        assert type(mine) is transformers.PreTrainedTokenizerFast
    assert json.loads(mine.backend_tokenizer.to_str()) == json.loads(
        (folder / "tokenizer.json").read_text()
    )
    assert_encoding(mine, reference, differs)
    expected = special_tokens(reference) | differs.get("specials", {})
    assert special_tokens(mine) == expected
    for name, token in expected.items():
        if token is not None:
            assert getattr(mine, f"{name}_token_id") == mine.convert_tokens_to_ids(token), name
    if "vocab" not in differs:
        assert mine.get_vocab() == reference.get_vocab()
    elif differs["vocab"] == "renamed":
        assert len(mine.get_vocab()) <= len(reference.get_vocab())
    else:
        assert set(mine.get_vocab().items()) <= set(reference.get_vocab().items())
    config = json.loads((folder / "tokenizer_config.json").read_text())
    assert config.get("chat_template") == reference.chat_template
    return reference


# --- GGUF files as llama.cpp's converter writes them -------------------------------------------


def bytes_to_unicode():
    """GPT-2's byte-level alphabet: printable Latin-1 bytes stand for themselves, the others
    for 256, 257, ... in byte order."""
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def byte_level_vocab(specials=("<|endoftext|>",)):
    """A GPT-2 style vocabulary: the 256 byte symbols, words merged left to right, specials."""
    table = bytes_to_unicode()
    tokens = [table[b] for b in range(256)]
    merges = []
    words = [" the", " world", "Hello", " quick", "中文", " def", "    ", "\n\n", "😀", " hello"]
    for w in words:
        s = "".join(table[b] for b in w.encode())
        left = s[0]
        for c in s[1:]:
            merged = left + c
            if merged not in tokens:
                tokens.append(merged)
                merges.append(f"{left} {c}")
            left = merged
    return tokens + list(specials), merges


SPM_PIECES = [
    "\u2581", "\u2581\u2581", "\u2581\u2581\u2581\u2581", "e", "h", "l", "o", "w", "r", "d",
    "\u2581h", "he", "ll", "lo", "\u2581w", "or", "ld", "hello", "\u2581hello", "world",
    "\u2581world", "中", "文", "\u2581中", "中文", "def", "\u2581def", "(", ")", ":", "x",
    "\u2581x", "T", "\u2581T", "\u2581The",
]  # fmt: skip


def spm_vocab(specials=("<|endoftext|>", "<|user|>", "<|end|>"), head=("<unk>", "<s>", "</s>")):
    tokens = list(head) + [f"<0x{b:02X}>" for b in range(256)] + SPM_PIECES + list(specials)
    scores = [0.0] * len(head) + [0.0] * 256 + [-float(i) for i in range(len(SPM_PIECES))]
    scores += [0.0] * len(specials)
    types = [2] + [3] * (len(head) - 1) + [6] * 256 + [1] * len(SPM_PIECES) + [3] * len(specials)
    return tokens, scores, types


def add_spm(w, bos=1, eos=2, unk=0, pad=None, types=True, space_prefix=None, **kw):
    tokens, scores, token_types = spm_vocab(**kw)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    if types:
        w.add_token_types(token_types)
    for add, value in [
        (w.add_bos_token_id, bos),
        (w.add_eos_token_id, eos),
        (w.add_unk_token_id, unk),
        (w.add_pad_token_id, pad),
    ]:
        if value is not None:
            add(value)
    if space_prefix is not None:
        w.add_add_space_prefix(space_prefix)
    return tokens


def add_bpe(
    w,
    bos=None,
    eos=None,
    pad=None,
    model="gpt2",
    specials=("<|endoftext|>",),
    merges=None,
    pre="default",
):
    tokens, all_merges = byte_level_vocab(specials)
    merges = all_merges if merges is None else merges
    w.add_tokenizer_model(model)
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types([1] * (len(tokens) - len(specials)) + [3] * len(specials))
    w.add_token_merges(merges)
    end = len(tokens) - 1
    ids = [(w.add_bos_token_id, bos), (w.add_eos_token_id, eos), (w.add_pad_token_id, pad)]
    for add, value in ids:
        if value is not None:
            add(end if value == "end" else value)
    return tokens


def write_gguf(path, arch, fill, name="tiny"):
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    eps = "norm" if arch in ("gpt2", "starcoder2", "stablelm") else "rms"
    add_base_hparams(w, eps, rope_base=10000.0, file_type=None)
    fill(w)
    w.add_tensor("token_embd.weight", np.zeros((4, 16), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


CASES = {
    "llama": ("llama", lambda w: add_spm(w)),
    "llama-no-token-type": ("llama", lambda w: add_spm(w, types=False)),
    "llama-no-space-prefix": ("llama", lambda w: add_spm(w, space_prefix=False)),
    "llama-bos-is-eos-swap": ("llama", lambda w: add_spm(w, bos=2, eos=1, pad=0)),
    "llama-chat-template": (
        "llama",
        lambda w: (add_spm(w), w.add_chat_template("{{ bos_token }}llama {{ messages }}")),
    ),
    "llama-byte-level": ("llama", lambda w: add_bpe(w, bos="end", eos="end", pad=0)),
    "phi3": ("phi3", lambda w: add_spm(w, bos=1, eos=2, pad=2, unk=0)),
    "phi3-specials-missing": ("phi3", lambda w: add_spm(w, bos=1, eos=2, pad=2, specials=())),
    "gemma2": (
        "gemma2",
        lambda w: add_spm(
            w, bos=2, eos=1, unk=3, pad=0, head=("<pad>", "<eos>", "<bos>", "<unk>", "   ")
        ),
    ),
    "gemma3": ("gemma3", lambda w: add_spm(w, bos=1, eos=2, unk=0)),
    "gpt2": ("gpt2", lambda w: add_bpe(w, bos="end", eos="end")),
    "gpt2-no-endoftext": ("gpt2", lambda w: add_bpe(w, bos=0, eos=1, specials=("<eot>",))),
    "starcoder2": ("starcoder2", lambda w: add_bpe(w, bos="end", eos="end")),
    "stablelm": ("stablelm", lambda w: add_bpe(w, bos="end", eos="end", pad=0)),
    # Qwen's vocabularies with the pre name llama.cpp's converter gives them.
    "qwen2": ("qwen2", lambda w: add_bpe(w, eos="end", pad="end", pre="qwen2")),
    "qwen2moe": (
        "qwen2moe",
        lambda w: (add_bpe(w, eos="end", pre="qwen2"), w.add_chat_template("qwen <|im_start|>")),
    ),
    "qwen3": (
        "qwen3",
        lambda w: add_bpe(
            w, bos=0, eos="end", specials=("<|im_start|>", "<|endoftext|>"), pre="qwen2"
        ),
    ),
    "qwen3moe": ("qwen3moe", lambda w: add_bpe(w, eos="end", pre="qwen2")),
}


# Where transformers 4.57.6's import is not the original tokenizer (see assert_same_tokenizer);
# each names the transformers difference (integrations/ggml.py).
_LLAMA_EOS = {"eos": "</s>"}  # GGUFLlamaConverter: eos = tokens[bos id] (it reads the bos id twice)
_NO_UNK = {"unk": None}  # GPT2/GPTNeoX/Qwen2TokenizerFast default unk '<|endoftext|>'; the GGUF
# holds no unknown id (llama.cpp's converter wrote none), so ours has none: byte-level BPE never
# produces one, the encoding is the same
# GGUFQwen2Converter adds '<|im_start|>', '<|im_end|>' whatever the vocabulary holds;
# Qwen2TokenizerFast's unk and pad are '<|endoftext|>' and bos None whatever the GGUF's ids say
# (Qwen2's own tokenizer_config has unk None, and its pad where the GGUF has a padding id)
_QWEN2 = {"encoding": True, "vocab": True, "specials": _NO_UNK}
_QWEN2_NO_PAD = {"encoding": True, "vocab": True, "specials": {"unk": None, "pad": None}}
DIFFERS = {
    "llama": {"specials": _LLAMA_EOS},
    "llama-chat-template": {"specials": _LLAMA_EOS},
    "llama-no-space-prefix": {"specials": _LLAMA_EOS},
    # ... and without token types it adds unk and bos alone: '</s>' in the text is not special
    "llama-no-token-type": {"specials": _LLAMA_EOS, "encoding": True},
    # ... and it sets no pad token, where the GGUF has a padding id (0, '<unk>')
    "llama-bos-is-eos-swap": {"specials": {"eos": "<s>", "pad": "<unk>"}},
    # LlamaTokenizerFast adds bos for any llama architecture; llama.cpp adds it to a byte-level
    # vocabulary only when tokenizer.ggml.add_bos_token says so (absent here); the GGUF's pad
    # id 0 is dropped, and its unk
    "llama-byte-level": {"encoding": "special", "specials": {"pad": "\u0100", "unk": None}},
    # GGUFPhi3Converter: no normalizer, no pre-tokenizer, so spaces never become '▁', and its
    # fixed added-token list, added as new tokens where the vocabulary lacks them
    "phi3": {"encoding": True, "vocab": True},
    "phi3-specials-missing": {"encoding": True, "vocab": True},
    # GGUFGemmaConverter: a Unigram model and GemmaTokenizerFast's fixed '<bos>', '<eos>',
    # '<unk>', '<pad>' (added as new tokens where the vocabulary lacks them), where ours is the
    # SentencePiece BPE of the GGUF's tokens, scores and ids (llama.cpp's "llama" model)
    # (and renames '<0x09>' to '\t'); the fixture's control token '   ' decodes as itself
    "gemma2": {"encoding": "ids", "vocab": "renamed", "specials": {"pad": "<pad>"}},
    "gemma3": {"encoding": "ids", "vocab": "renamed",
               "specials": {"bos": "<s>", "eos": "</s>", "unk": "<unk>", "pad": None}},
    "gpt2": {"specials": _NO_UNK},
    "starcoder2": {"specials": _NO_UNK},
    # GPT2TokenizerFast's fixed '<|endoftext|>' specials (added as a new token), where the GGUF
    # names bos 0 and eos 1
    "gpt2-no-endoftext": {"encoding": True, "vocab": True,
                          "specials": {"bos": "\u0100", "eos": "\u0101", "unk": None}},
    # GPTNeoXTokenizerFast drops the padding id (0)
    "stablelm": {"specials": {"pad": "\u0100", "unk": None}},
    "qwen2": _QWEN2,
    "qwen2moe": _QWEN2_NO_PAD,
    "qwen3": {**_QWEN2_NO_PAD, "specials": {"unk": None, "pad": None, "bos": "\u0100"}},
    "qwen3moe": _QWEN2_NO_PAD,
}


# As DIFFERS, for transformers 5.24.0's import. Its SentencePiece tokenizer
# (integrations/gguf/gguf_tokenizer_mapping.py, sentencepiece_tokenizer: LlamaTokenizer, whose
# legacy=False makes it Metaspace with prepend_scheme "first", no normalizer) prefixes '▁' to the
# first text only: after a special token (TEXT's "<s> </s>": ' ' is '▁' where llama.cpp, which
# prefixes every fragment after a special token (llama-vocab.cpp, is_prev_special), 4.57.6's
# import and ours give '▁▁') and in a pair's second text (' world': '▁w', not '▁▁', 'w'); and it
# prefixes whatever tokenizer.ggml.add_space_prefix says.
_AFTER_SPECIAL = {"encoding": "after_special"}
DIFFERS_5 = {
    "llama": _AFTER_SPECIAL,
    "llama-chat-template": _AFTER_SPECIAL,
    "llama-bos-is-eos-swap": _AFTER_SPECIAL,
    "llama-no-token-type": _AFTER_SPECIAL,
    # ... and with tokenizer.ggml.add_space_prefix false, '▁' before "Hello" all the same
    "llama-no-space-prefix": {"encoding": True},
    # GemmaTokenizer: BPE split at spaces with no '▁' prefix, where the file does not turn off
    # tokenizer.ggml.add_space_prefix (llama.cpp prefixes, as ours); and its fixed specials,
    # added as new tokens ('<mask>'; '<bos>', '<eos>', '<pad>' where the vocabulary lacks them)
    "gemma2": {"encoding": "ids", "vocab": "renamed"},
    "gemma3": {"encoding": "ids", "vocab": "renamed"},
    # GPT2Tokenizer still adds '<|endoftext|>' as a new token (id 294)
    "gpt2-no-endoftext": {"encoding": True, "vocab": True},
    # Qwen2Tokenizer has no NFC normalizer (Qwen2's tokenizer.json has one, as ours): the
    # decomposed "cafe\u0301" is 'e', 'Ì', 'ģ' where ours composes 'é'
    "qwen2": {"encoding": True},
    "qwen2moe": {"encoding": True},
    "qwen3": {"encoding": True},
    "qwen3moe": {"encoding": True},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_architecture(dump_tool, tmp_path, case):
    arch, fill = CASES[case]
    path = write_gguf(tmp_path / f"{case}.gguf", arch, fill)
    differs = (DIFFERS_5 if TRANSFORMERS_5 else DIFFERS).get(case)
    assert_same_tokenizer(dump_tool, path, tmp_path, differs)


def test_mistral_import_fails(dump_tool, tmp_path):
    """transformers 4.57.6 has no GGUF tokenizer converter for mistral (GGUF_TO_FAST_CONVERTERS):
    its import fails; 5.24.0's imports it, as a llama. Ours depends on the tokenizer keys alone:
    the llama file's tokenizer."""
    path = write_gguf(tmp_path / "m.gguf", "llama", lambda w: add_spm(w), name="mistral")
    if TRANSFORMERS_5:
        assert_same_tokenizer(dump_tool, path, tmp_path, DIFFERS_5["llama"])
    else:
        with pytest.raises(Exception):
            theirs(path)
    llama = write_gguf(tmp_path / "l.gguf", "llama", lambda w: add_spm(w))
    rc, out, err = ours(dump_tool, path, "--tokenizer")
    assert rc == 0, err
    assert out == ours(dump_tool, llama, "--tokenizer")[1]


@pytest.mark.parametrize(
    "fill,name,token",
    [
        # GGUFLlamaConverter: eos without bos indexes tokens[None]
        (lambda w: add_spm(w, bos=None), "bos", "<s>"),
        # ... and without eos LlamaTokenizerFast has no bos token to add
        (lambda w: add_spm(w, eos=None), "eos", "</s>"),
    ],
)
def test_spm_default_ids_where_transformers_fails(dump_tool, tmp_path, fill, name, token):
    """The import fails (4.57.6) or has no such token (5.24.0, not llama.cpp's default); ours
    takes llama.cpp's default SentencePiece ids (bos 1, eos 2: llama-vocab.cpp) and encodes as
    the import of the file with both ids, less its eos (its eos is the bos token)."""
    path = write_gguf(tmp_path / "m.gguf", "llama", fill)
    if TRANSFORMERS_5:
        assert getattr(theirs(path), f"{name}_token") is None
    else:
        with pytest.raises(Exception):
            theirs(path)
    mine = AutoTokenizer.from_pretrained(str(our_folder(dump_tool, path, tmp_path / "hf")))
    assert getattr(mine, f"{name}_token") == token
    full = write_gguf(tmp_path / "full.gguf", "llama", lambda w: add_spm(w))
    assert_encoding(mine, theirs(full), DIFFERS_5["llama"] if TRANSFORMERS_5 else {})


def test_phi3_without_pad(dump_tool, tmp_path):
    """llama.cpp's converter writes no padding id where the original tokenizer has no pad
    token. transformers 4.57.6's GGUFPhi3Converter reads it as an attribute and fails on such a
    file (a transformers bug: the original loads without a pad); ours has no pad token and
    encodes as the import of the same vocabulary under llama (GGUFLlamaConverter: the
    SentencePiece normalizer, which GGUFPhi3Converter lacks). 5.24.0 imports the file, without
    a pad: ours is its import."""
    no_pad = write_gguf(tmp_path / "a.gguf", "phi3", lambda w: add_spm(w, bos=1, eos=2, unk=0))
    as_llama = write_gguf(tmp_path / "b.gguf", "llama", lambda w: add_spm(w, bos=1, eos=2, unk=0))
    if TRANSFORMERS_5:
        assert_same_tokenizer(dump_tool, no_pad, tmp_path)
        assert theirs(no_pad).pad_token is None
        return
    with pytest.raises(Exception):
        theirs(no_pad)
    mine = AutoTokenizer.from_pretrained(str(our_folder(dump_tool, no_pad, tmp_path / "hf")))
    assert mine.pad_token is None
    assert_same_encoding(mine, theirs(as_llama))


def test_one_element_merges(dump_tool, tmp_path):
    """A vocabulary with a single merge: transformers 4.57.6's import unwraps the one-element
    array into its string and fails (load_gguf_checkpoint), 5.x's reads it; hf/ renders it, and
    " t" becomes the merged token of the file's one merge, "Ġ t"."""

    def fill(w):
        add_bpe(w, eos="end", merges=["\u0120 t"])

    path = write_gguf(tmp_path / "m.gguf", "gpt2", fill)
    mine = AutoTokenizer.from_pretrained(str(our_folder(dump_tool, path, tmp_path / "hf")))
    assert mine.tokenize(" t") == ["\u0120t"]
    if TRANSFORMERS_5:
        assert_same_encoding(mine, theirs(path))
    else:
        with pytest.raises(Exception):
            theirs(path)


# --- Shared files ------------------------------------------------------------------------------


def shared(*parts):
    path = _testdata_dir().joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"the shared test data is absent ({path}; set GGUFS_TESTDATA)")
    return path


# As DIFFERS, for the shared files.
SHARED_DIFFERS = {
    "ggml-vocab-llama-spm.gguf": {"specials": _LLAMA_EOS},
    "llama-2-tiny-random.gguf": {"specials": _LLAMA_EOS},
    "ggml-vocab-gpt-2.gguf": {"specials": _NO_UNK},
    # GGUFPhi3Converter: no normalizer (see DIFFERS["phi3"]); and it drops the unk and
    # the pad ids' tokens for none and '<|endoftext|>'
    "ggml-vocab-phi-3.gguf": {"encoding": True},
    # the import's "llama-3" variant: ByteLevel with GPT-2's regex, not DeepSeek LLM's Splits
    # (llama.cpp's DEEPSEEK_LLM regexes), and bos and eos as the llama quirk gives them
    # (eos = the bos token; no pad, where the GGUF's eos and pad ids are 100001)
    "ggml-vocab-deepseek-llm.gguf": {
        "encoding": True,
        "specials": {"eos": "<\uff5cend\u2581of\u2581sentence\uff5c>",
                     "pad": "<\uff5cend\u2581of\u2581sentence\uff5c>"},
    },
}


# As DIFFERS_5, for the shared files.
SHARED_DIFFERS_5 = {
    "ggml-vocab-llama-spm.gguf": _AFTER_SPECIAL,
    "llama-2-tiny-random.gguf": _AFTER_SPECIAL,
    # (ggml-vocab-phi-3.gguf: 5.24's phi3 import has the SentencePiece normalizer and adds its
    # user-defined '</s>' (id 2) with normalized=False, as ours now does: the same encoding)
    # the import adds '<|endoftext|>' (102400) and its bos and eos '<｜begin▁of▁sentence｜>',
    # '<｜end▁of▁sentence｜>' as new tokens 102401 and 102402, where the GGUF's are 100000 and
    # 100001 (the import keeps their byte-level spellings there)
    "ggml-vocab-deepseek-llm.gguf": {"encoding": True, "vocab": "renamed"},
}


@pytest.mark.parametrize(
    "name",
    [
        "ggml-vocab-llama-spm.gguf",  # llama, SentencePiece BPE, merges built from the scores
        "ggml-vocab-gpt-2.gguf",  # gpt2, byte-level BPE with merges
        "ggml-vocab-phi-3.gguf",  # phi3, GGUFPhi3Converter
        "ggml-vocab-deepseek-llm.gguf",  # llama with a gpt2 tokenizer: the "llama-3" variant
        "llama-2-tiny-random.gguf",
    ],
)
def test_shared_files(dump_tool, tmp_path, name):
    path = shared("real", name)
    try:
        theirs(path)
    except Exception as e:  # none of these today; say so if a later transformers changes
        pytest.skip(f"transformers {transformers.__version__} cannot import the tokenizer of "
                    f"{name}: {e}")
    differs = (SHARED_DIFFERS_5 if TRANSFORMERS_5 else SHARED_DIFFERS).get(name)
    assert_same_tokenizer(dump_tool, path, tmp_path, differs)
