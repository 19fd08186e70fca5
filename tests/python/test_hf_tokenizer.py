"""tokenizer.json, tokenizer_config.json and special_tokens_map.json of a GGUF model
(src/hf/hf_tokenizer.cpp) against transformers 4.57.6 itself.

The oracle: AutoTokenizer.from_pretrained(<folder holding our three files and our config.json>)
must behave as AutoTokenizer.from_pretrained(<dir>, gguf_file=<file>), transformers' own GGUF
import: the same class, the same token ids for a multilingual text (code, emoji, CJK, runs of
spaces and newlines, special token strings) with and without special tokens, for one text and a
pair; the same decoded text; the same special tokens, added tokens and vocabulary. Stronger
still, where it holds (everywhere here): our tokenizer.json equals the import's backend
serialization (backend_tokenizer.to_str()) as JSON, and our tokenizer_config.json and
special_tokens_map.json equal what the import's save_pretrained writes (less model_max_length,
whose int(1e30) we leave to its default, and chat_template, which save_pretrained moves to
chat_template.jinja).

The GGUF files are written here with gguf-py's GGUFWriter: a SentencePiece vocabulary (byte
tokens, pieces, scores, token types, no merges: the import builds them from the scores) and a
GPT-2 byte-level one (with merges), under each architecture transformers converts; plus the
shared real vocabularies (llama.cpp's vocab-only GGUFs) and the shared tiny llama.

Our side comes from ggufs-test-hf-config --tokenizer / --tokenizer-config / --special-tokens-map
(tests/support/hf_config_dump.cpp): $GGUFS_HF_CONFIG_DUMP, else <repo>/build/ggufs-test-hf-config.
"""

import json
import pathlib
import subprocess

import numpy as np
import pytest

from conftest import _testdata_dir
from test_hf_config import add_base_hparams

gguf = pytest.importorskip("gguf")
transformers = pytest.importorskip("transformers")
from transformers import AutoTokenizer  # noqa: E402

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
    path = pathlib.Path(path)
    return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


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


def assert_same_tokenizer(tool, path, tmp_path):
    reference = theirs(path)
    folder = our_folder(tool, path, tmp_path / "hf")
    mine = AutoTokenizer.from_pretrained(str(folder))

    assert type(mine) is type(reference)
    # The strongest check: the backend tokenizer itself, as JSON.
    ours_json = json.loads((folder / "tokenizer.json").read_text())
    assert ours_json == json.loads(reference.backend_tokenizer.to_str())
    assert json.loads(mine.backend_tokenizer.to_str()) == json.loads(
        reference.backend_tokenizer.to_str()
    )

    assert_same_encoding(mine, reference)
    for name in ("bos", "eos", "unk", "pad"):
        assert getattr(mine, f"{name}_token") == getattr(reference, f"{name}_token"), name
        assert getattr(mine, f"{name}_token_id") == getattr(reference, f"{name}_token_id"), name
    assert mine.all_special_tokens == reference.all_special_tokens
    assert mine.all_special_ids == reference.all_special_ids
    assert added_state(mine) == added_state(reference)
    assert mine.get_vocab() == reference.get_vocab()
    assert mine.clean_up_tokenization_spaces == reference.clean_up_tokenization_spaces
    for flag in ("add_bos_token", "add_eos_token"):
        assert getattr(mine, flag, None) == getattr(reference, flag, None), flag

    # The files save_pretrained writes from transformers' import.
    saved = tmp_path / "saved"
    reference.save_pretrained(str(saved))
    config = json.loads((saved / "tokenizer_config.json").read_text())
    config.pop("model_max_length")
    if (saved / "chat_template.jinja").exists():
        config["chat_template"] = (saved / "chat_template.jinja").read_text()
    assert json.loads((folder / "tokenizer_config.json").read_text()) == config
    assert json.loads((folder / "special_tokens_map.json").read_text()) == json.loads(
        (saved / "special_tokens_map.json").read_text()
    )
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
    w, bos=None, eos=None, pad=None, model="gpt2", specials=("<|endoftext|>",), merges=None
):
    tokens, all_merges = byte_level_vocab(specials)
    merges = all_merges if merges is None else merges
    w.add_tokenizer_model(model)
    w.add_tokenizer_pre("default")
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
    "qwen2": ("qwen2", lambda w: add_bpe(w, eos="end", pad="end")),
    "qwen2moe": (
        "qwen2moe",
        lambda w: (add_bpe(w, eos="end"), w.add_chat_template("qwen2moe <|im_start|>")),
    ),
    "qwen3": (
        "qwen3",
        lambda w: add_bpe(w, bos=0, eos="end", specials=("<|im_start|>", "<|endoftext|>")),
    ),
    "qwen3moe": ("qwen3moe", lambda w: add_bpe(w, eos="end")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_architecture(dump_tool, tmp_path, case):
    arch, fill = CASES[case]
    path = write_gguf(tmp_path / f"{case}.gguf", arch, fill)
    assert_same_tokenizer(dump_tool, path, tmp_path)


def test_mistral_fails_both(dump_tool, tmp_path):
    """transformers 4.57.6 has no GGUF tokenizer converter for mistral (GGUF_TO_FAST_CONVERTERS):
    its import fails, and we render none."""
    path = write_gguf(tmp_path / "m.gguf", "llama", lambda w: add_spm(w), name="mistral")
    with pytest.raises(Exception):
        theirs(path)
    rc, out, err = ours(dump_tool, path, "--tokenizer")
    assert rc == 3 and out == "" and "mistral" in err


@pytest.mark.parametrize(
    "arch,fill,key",
    [
        # GGUFLlamaConverter: eos without bos indexes tokens[None]
        ("llama", lambda w: add_spm(w, bos=None), "tokenizer.ggml.bos_token_id"),
        # ... and without eos LlamaTokenizerFast has no bos token to add
        ("llama", lambda w: add_spm(w, eos=None), "tokenizer.ggml.eos_token_id"),
    ],
)
def test_refused_where_transformers_fails(dump_tool, tmp_path, arch, fill, key):
    path = write_gguf(tmp_path / "m.gguf", arch, fill)
    with pytest.raises(Exception):
        theirs(path)
    rc, out, err = ours(dump_tool, path, "--tokenizer")
    assert rc == 3 and out == "" and key in err


def test_phi3_without_pad(dump_tool, tmp_path):
    """llama.cpp's converter writes no padding id where the original tokenizer has no pad
    token. transformers 4.57.6's GGUFPhi3Converter reads it as an attribute and fails on such a
    file (a transformers bug: the original loads without a pad); ours has no pad token and
    encodes as the import of the same vocabulary given a pad."""
    no_pad = write_gguf(tmp_path / "a.gguf", "phi3", lambda w: add_spm(w, bos=1, eos=2, unk=0))
    with_pad = write_gguf(
        tmp_path / "b.gguf", "phi3", lambda w: add_spm(w, bos=1, eos=2, pad=2, unk=0)
    )
    with pytest.raises(Exception):
        theirs(no_pad)
    mine = AutoTokenizer.from_pretrained(str(our_folder(dump_tool, no_pad, tmp_path / "hf")))
    assert mine.pad_token is None
    assert_same_encoding(mine, theirs(with_pad))


def test_one_element_merges_fail_both(dump_tool, tmp_path):
    """A one-element array is unwrapped into its string by load_gguf_checkpoint, which breaks
    the merges: transformers fails, we refuse."""

    def fill(w):
        add_bpe(w, eos="end", merges=["\u0120 t"])

    path = write_gguf(tmp_path / "m.gguf", "gpt2", fill)
    with pytest.raises(Exception):
        theirs(path)
    rc, _, err = ours(dump_tool, path, "--tokenizer")
    assert rc == 3 and "tokenizer.ggml.merges" in err


# --- Shared files ------------------------------------------------------------------------------


def shared(*parts):
    path = _testdata_dir().joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"the shared test data is absent ({path}; set GGUFS_TESTDATA)")
    return path


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
        pytest.skip(f"transformers 4.57.6 cannot import the tokenizer of {name}: {e}")
    assert_same_tokenizer(dump_tool, path, tmp_path)
