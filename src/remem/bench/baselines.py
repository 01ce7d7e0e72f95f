"""Retrieval baselines for the LoCoMo bench: BM25 over turns and exact dense cosine.

Both index the turns of *one* conversation (a question is asked of the memory built from its own
conversation) and return dia_ids, best first.

Fair to the peers (issue 18): both index each turn as ``"Speaker: text"`` (:func:`turn_document`),
as mem0, engram and most published LoCoMo runs do, since almost every question names a speaker;
BM25 drops English stop words (:data:`STOP_WORDS`, the classic NLTK list) from documents and
queries. ``speaker=False`` / ``stop_words=False`` give the earlier, weaker variants.

Tokenisation (``tokenize``): lower-case, ``\\w+`` runs, then, by default, the Porter (1980)
stemmer of :mod:`remem.domain.stemming` (``porter_stem``, re-exported here). ``stem=False`` gives the
unstemmed variant for comparison.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from remem.domain.stemming import porter_stem

__all__ = [
    "STOP_WORDS",
    "porter_stem",
    "turn_document",
    "tokenize",
    "BM25Baseline",
    "DenseBaseline",
]


class _TurnLike(Protocol):
    dia_id: str
    text: str


STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which who
    whom this that these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against between
    into through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some
    such no nor not only own same so than too very s t can will just don should now d ll m o re
    ve y""".split()
)
"""English stop words (the NLTK ``stopwords.words("english")`` list without its
contractions), dropped by BM25 from documents and queries."""


def turn_document(turn: _TurnLike, *, speaker: bool = True) -> str:
    """The text a baseline indexes for a turn: ``"Speaker: text"`` when the turn has a speaker
    and ``speaker`` is set, else the text alone."""
    name = getattr(turn, "speaker", None)
    return f"{name}: {turn.text}" if speaker and name else turn.text


_TOKEN_RE = re.compile(r"\w+")


def tokenize(text: str, *, stem: bool = True, stop_words: bool = False) -> list[str]:
    """Lower-cased ``\\w+`` tokens without :data:`STOP_WORDS` when ``stop_words``,
    Porter-stemmed when ``stem``."""
    toks = _TOKEN_RE.findall(text.lower())
    if stop_words:
        toks = [t for t in toks if t not in STOP_WORDS]
    return [porter_stem(t) for t in toks] if stem else toks


# --------------------------------------------------------------------------- BM25


class BM25Baseline:
    """``rank_bm25.BM25Okapi`` (default k1=1.5, b=0.75) over the turns' tokens.

    Each turn is indexed as :func:`turn_document` (``speaker``); stop words are dropped from
    turns and queries when ``stop_words``. ``search`` returns up to k dia_ids by descending score, ties broken by turn order; turns that
    share no token with the query (score 0) are never returned.
    """

    def __init__(self, turns: Sequence[_TurnLike], *, stem: bool = True, speaker: bool = True,
                 stop_words: bool = True) -> None:
        try:
            from rank_bm25 import BM25Okapi
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "BM25Baseline needs rank-bm25: pip install 'remem[bench]'"
            ) from exc
        self.stem, self.stop_words = stem, stop_words
        self.dia_ids: list[str] = [t.dia_id for t in turns]
        corpus = [tokenize(turn_document(t, speaker=speaker), stem=stem, stop_words=stop_words)
                  for t in turns]
        # BM25Okapi divides by the corpus size and the average length: guard the degenerate cases.
        self._bm25 = BM25Okapi(corpus) if corpus and any(corpus) else None

    def scores(self, query: str) -> np.ndarray:
        if self._bm25 is None:
            return np.zeros(len(self.dia_ids))
        q = tokenize(query, stem=self.stem, stop_words=self.stop_words)
        return np.asarray(self._bm25.get_scores(q), dtype=float)

    def search(self, query: str, k: int) -> list[str]:
        if k <= 0:
            return []
        s = self.scores(query)
        order = np.argsort(-s, kind="stable")
        return [self.dia_ids[i] for i in order[:k] if s[i] > 0]


# --------------------------------------------------------------------------- dense


def _l2_normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


class DenseBaseline:
    """Exact cosine search: every turn's :func:`turn_document` (``speaker``) embedded once,
    vectors L2-normalised.

    ``embed`` maps a list of texts to an array of shape (len(texts), dim). Texts are embedded in
    batches of ``batch_size``. A zero vector (turn or query) scores 0 against everything. Ties are
    broken by turn order.
    """

    def __init__(
        self,
        turns: Sequence[_TurnLike],
        embed: Callable[[list[str]], np.ndarray],
        *,
        batch_size: int = 64,
        speaker: bool = True,
    ) -> None:
        if batch_size <= 0:
            raise ValueError("batch_size must be positive")
        self._embed = embed
        self.dia_ids: list[str] = [t.dia_id for t in turns]
        texts = [turn_document(t, speaker=speaker) for t in turns]
        chunks = [
            self._embed_checked(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)
        ]
        if chunks:
            self.matrix = _l2_normalise(np.vstack(chunks).astype(np.float32, copy=False))
        else:
            self.matrix = np.zeros((0, 0), dtype=np.float32)

    def _embed_checked(self, texts: list[str]) -> np.ndarray:
        out = np.asarray(self._embed(texts), dtype=np.float32)
        if out.ndim != 2 or out.shape[0] != len(texts):
            raise ValueError(
                f"embed returned shape {out.shape} for {len(texts)} texts; expected (n, dim)"
            )
        return out

    def scores(self, query: str) -> np.ndarray:
        if not self.dia_ids:
            return np.zeros(0, dtype=np.float32)
        q = _l2_normalise(self._embed_checked([query])[0])
        if q.shape[0] != self.matrix.shape[1]:
            raise ValueError(
                f"query vector has dim {q.shape[0]}, turn vectors have {self.matrix.shape[1]}"
            )
        return self.matrix @ q

    def search(self, query: str, k: int) -> list[str]:
        if k <= 0 or not self.dia_ids:
            return []
        s = self.scores(query)
        order = np.argsort(-s, kind="stable")
        return [self.dia_ids[i] for i in order[:k]]
