"""``remem bench locomo``: evidence recall on LoCoMo for remem, BM25 and dense-only retrieval.

For each conversation a fresh SQLite memory is built through the public API only: every turn
is ``observe``d as a source in one conversation scope, ``thread:<sample_id>``, with the session
date as ``occurred_at``, the speaker as ``actor`` and the ``dia_id`` as ``source_id`` (image
turns carry their caption text, see :mod:`remem.bench.locomo_data`). Both people's turns are
one shared conversation and questions are about either of them, so one thread scope is the
honest fit: ``user:<speaker>`` scopes would make the benchmark pick whose memory to ask, which
is reading the question for the engine.

Every question of categories 1-4 with evidence is then asked of its own conversation's memory
with ``Memory.recall`` (budget :func:`budget_for` tokens, ``limit`` = the largest k). Returned
sources map to their ``dia_id``; returned items (facts formed by derive, when it runs) map
through their provenance source ids. Both are merged by the fused score recall reports.

The baselines see the same turns, indexed fairly as the peers index them, ``"Speaker: text"``:
:class:`~remem.bench.baselines.BM25Baseline` (rank-bm25, lower-cased, Porter-stemmed tokens,
English stop words dropped) and :class:`~remem.bench.baselines.DenseBaseline` with the same
embedder the memory uses (``providers.registry.shared_embedder(None)``).

Measured besides recall: ingest throughput (observed turns per second, the embedding of each
turn included), recall latency per system (ms; remem's includes query embedding, search,
fusion and budgeted rendering), the process's peak RSS and how many remem results were
truncated by the budget. Nothing here reads answers, observations or summaries.

Levers measured for multi-session questions (issue 18), one at a time on conversations 1-2
(231 questions). Overall cells are R@5 and R@10 "all"/"any"; category cells are "all" at
R@5/R@10. Every top 10 held at most 10 distinct turns. Each row changes one thing against the
row in brackets (C is what was adopted):

=========================== =========== =========== =========== =========== =========== ===========
lever [compared with]       R@5         R@10        multi-hop   temporal    open-domain single-hop
=========================== =========== =========== =========== =========== =========== ===========
main (5fef780)              0.589/0.684 0.706/0.784 0.047/0.233 0.905/0.952 0.364/0.545 0.640/0.763
A speaker prefix [main]     0.580/0.688 0.706/0.801 0.047/0.209 0.889/0.937 0.364/0.455 0.632/0.789
B stems, q word+stem [main] 0.580/0.688 0.706/0.801 0.093/0.233 0.873/0.937 0.273/0.455 0.632/0.781
**C stems, q stem** [main]  0.606/0.714 0.719/0.814 0.140/0.256 0.889/0.968 0.273/0.455 0.658/0.781
D previous turn ctx [main]  0.580/0.662 0.688/0.784 0.047/0.116 0.841/0.873 0.364/0.364 0.658/0.833
A speaker prefix [C]        0.602/0.714 0.706/0.801 0.140/0.233 0.873/0.952 0.273/0.455 0.658/0.772
E fetch 50 -> 100 [C]       0.593/0.701 0.719/0.818 0.140/0.233 0.889/0.968 0.273/0.455 0.632/0.789
F other speaker 0.2 [C]     0.602/0.701 0.706/0.805 0.163/0.256 0.905/0.937 0.273/0.455 0.632/0.772
F other speaker 0.05 [C]    0.593/0.693 0.688/0.792 0.163/0.256 0.905/0.937 0.273/0.455 0.614/0.737
G diversity x0.85 [C]       0.589/0.701 0.654/0.762 0.163/0.186 0.905/0.921 0.273/0.364 0.605/0.711
G diversity x0.7 [C]        0.550/0.662 0.615/0.723 0.116/0.186 0.873/0.905 0.182/0.273 0.570/0.649
H neighbours .3/.2 [C]      0.606/0.714 0.719/0.814 0.140/0.256 0.889/0.968 0.273/0.455 0.658/0.781
H neighbours .5/.3 [C]      0.606/0.714 0.714/0.810 0.140/0.256 0.889/0.968 0.273/0.455 0.658/0.772
H neighbours .8/.5 [C]      0.593/0.693 0.706/0.810 0.140/0.233 0.857/0.968 0.273/0.364 0.649/0.772
I full text x1.5 [C]        0.610/0.710 0.693/0.784 0.163/0.256 0.905/0.952 0.273/0.364 0.649/0.746
I vector x1.5 [C]           0.589/0.684 0.719/0.818 0.116/0.233 0.873/0.968 0.364/0.545 0.632/0.781
=========================== =========== =========== =========== =========== =========== ===========

A: sources indexed (full text and vector) as "<actor>: <text>". B, C: Porter stems in the full
text index, the query asking for word and stem (B) or the stem alone (C). D: each turn embedded
after the previous turn of its run. E: candidates per channel. F: share of its score a turn keeps
when the question names the other speaker (0.5 today). G: a source's score times the factor for
each better source of the same run within 12 turns. H: the turns right after / before the top 10
sources join as candidates with that share of its score. I: fixed channel weights in RRF.

Adopted: stems (:mod:`remem.domain.textindex`). Not adopted, and why:

- *speaker-prefixed indexing*: recall already searches a question that names a speaker
  without the name and ranks that speaker's turns first (``domain.recall``); the prefix adds
  nothing to that and costs a point with stems.
- *the previous turn as embedding context*: single-hop gains 7 points at R@10 (an answer turn
  is understood with its question), but multi-hop and temporal lose 12 and 8: every turn's
  vector drifts toward its neighbour's topic. It would also keep a forgotten turn's meaning
  alive in its neighbour's vector, which erasure would have to chase.
- *diversity across sessions*: the top 10 already spans 6.4 sessions on average for
  multi-hop questions (2.2 hold evidence); pushing further replaces evidence with noise.
- *neighbouring turns added as candidates*, *wider candidate lists*, *a stricter weight for
  the other speaker* (96% of evidence is said by the person the question names, yet the
  weight already suffices) and *fixed channel weights* (equal weights are the best of those
  tried, so agreement weighting has little to gain over RRF): no gain.
- Not tried for lack of time: query decomposition, temporal anchoring (temporal is already
  0.89-0.97), entity linking across sessions, engine-made session digests.

Second round (issue 18 goal 1, levers 1-4). Screened first offline on conversations 1-2: the
top 50 of today's recall plus the lever's channel fused by RRF (k = 20, the other speaker's
turns at half weight), which reproduces the engine's R@10 within 0.004; then the chosen lever
built into the engine and measured with this bench. Overall cells R@5 and R@10 "all"/"any",
then multi-hop R@10 "all":

=============================================== =========== =========== =========
lever (offline screen, conversations 1-2)       R@5         R@10        multi-hop
=============================================== =========== =========== =========
C as adopted above (screen baseline)            0.606/0.714 0.723/0.823 0.256
J1 window vectors 4/2, one channel              0.619/0.697 0.723/0.827 0.233
J1 window vectors 6/3, one channel              0.632/0.714 0.736/0.840 0.279
J1 window vectors 8/4, one channel              0.632/0.714 0.745/0.831 0.302
J1 whole-session vectors                        0.576/0.667 0.697/0.797 0.209
J2 window mean of turn vectors 4/2              0.619/0.719 0.719/0.818 0.209
J3 window full text 4/2, one channel            0.662/0.758 0.740/0.853 0.209
J4 full text + vectors fused into one channel   0.645/0.740 0.753/0.870 0.233
**J5 full text and vectors, two channels 6/3**  0.675/0.766 0.771/0.883 0.279
J5 two channels 4/2                             0.684/0.788 0.771/0.879 0.256
J5 two channels 8/4                             0.697/0.779 0.758/0.861 0.256
K entity channel (capitalised query words)      0.602/0.714 0.719/0.818 0.233
=============================================== =========== =========== =========

"w/s": window of w consecutive turns, a new window every s turns; a window's turns enter the
channel in the window's rank order, each window's turns by their own cosine. J5 6/3 was
built (:mod:`remem.domain.digests`, :mod:`remem.service.digests`) and measured here:

=========================== =========== =========== =========== =========== =========== ===========
lever [compared with]       R@5         R@10        multi-hop   temporal    open-domain single-hop
=========================== =========== =========== =========== =========== =========== ===========
C (main 74d4a0f)            0.606/0.714 0.719/0.814 0.140/0.256 0.889/0.968 0.273/0.455 0.658/0.781
**J digests 6/3** [C]       0.671/0.762 0.775/0.866 0.140/0.279 0.905/0.952 0.455/0.545 0.763/0.886
=========================== =========== =========== =========== =========== =========== ===========

All five conversations (760 questions), same run order:

=========================== =========== =========== =========== =========== =========== ===========
lever                       R@5         R@10        multi-hop   temporal    open-domain single-hop
=========================== =========== =========== =========== =========== =========== ===========
C (main 74d4a0f)            0.593/0.728 0.696/0.816 0.162/0.254 0.782/0.840 0.205/0.386 0.711/0.825
**J digests 6/3**           0.658/0.778 0.743/0.854 0.162/0.275 0.808/0.846 0.341/0.409 0.804/0.900
=========================== =========== =========== =========== =========== =========== ===========

R@10 "all" per conversation, C -> J: 0.713 -> 0.767, 0.728 -> 0.790, 0.743 -> 0.763,
0.638 -> 0.668, 0.691 -> 0.770 (every one gains; no category loses). Cost: one more embedding
per three turns at intake (a six-turn text) and a third more documents in the index. Measured
at 10,000 synthetic turns (a 60-word vocabulary: every digest matches nearly every query term,
the worst case for full text), recall CPU p50 25.5 -> 39.5 ms in one run (expanding digests
into channels is ~1 ms of it; the rest is full text and vectors over 3,300 more, longer
documents), and observe_many CPU 92 -> 284 s for the 10,000 turns. Not yet tried: digests in
vectors only, or full-text terms capped per digest.

Adopted: digests (J). Not adopted, and why:

- *entity channel* (K: the turns that mention a capitalised word of the question other than a
  speaker, ranked by cosine): no gain; LoCoMo questions name the speakers, whom recall already
  handles, and other names are rare in them.
- *query decomposition* ("X and Y ..." asked as "X ..." and "Y ...", fused by RRF with the
  question): 10 questions of conversations 1-2 have that form; R@10 "all" 1 -> 1, "any"
  6 -> 4. The sub-queries lose what the pair has in common.
- *temporal anchoring*: temporal R@10 "all" is 0.95-0.97 already; at most 3 of 63 questions
  could gain, so it was not built.
- *window mean of turn vectors* (J2, no extra embedding) and *one fused digest channel* (J4)
  gain less than two channels over embedded windows.

Third round (issue 18 goal 1 again; nothing adopted). Every row is the engine's own recall on
all five conversations (760 questions) over memories built once with digests
(``--keep-db``, then ``--reuse-db``: the exact engine, no screen), each lever patched in
alone. Overall cells R@5 and R@10 "all"/"any", multi-hop "all" R@5/R@10, then R@10 "all"
of temporal, open-domain and single-hop; "c50" is the share of questions whose evidence is all
among the first 50 fused sources (multi-hop after the slash); CPU is the recall's p95 CPU ms
in that run (the baseline's was 40 and 44 in two runs, the machine loaded):

============================ =========== =========== =========== ===== ===== ===== ========= ===
lever                        R@5         R@10        multi-hop   temp  open  1-hop c50       CPU
============================ =========== =========== =========== ===== ===== ===== ========= ===
J digests (main 34b8899)     0.658/0.778 0.743/0.854 0.162/0.275 0.846 0.409 0.900 .854/.535 40
L1 Rocchio channel k3 b.5    0.646/0.768 0.730/0.841 0.169/0.254 0.853 0.386 0.883 .854/.535 47
L1 Rocchio channel k5 b1     0.645/0.764 0.733/0.842 0.169/0.261 0.853 0.364 0.888 .855/.535 44
L1 Rocchio query k3 b.3      0.659/0.778 0.743/0.857 0.176/0.268 0.853 0.409 0.900 .853/.521 40
L1 Rocchio query k5 b.5      0.658/0.776 0.743/0.854 0.169/0.268 0.853 0.409 0.900 .854/.528 38
L1 tf-idf terms k3 +8        0.659/0.774 0.734/0.850 0.169/0.275 0.846 0.386 0.885 .851/.514 52
L2 agreement N10 a1          0.658/0.779 0.741/0.849 0.162/0.275 0.846 0.409 0.895 .855/.535 40
L2 agreement N20 a2          0.658/0.782 0.743/0.855 0.162/0.268 0.846 0.409 0.902 .855/.535 41
L2 multi-channel bonus .2    0.643/0.767 0.736/0.850 0.162/0.261 0.846 0.386 0.892 .854/.535 44
L2 RRF k 20 -> 10            0.651/0.776 0.743/0.857 0.155/0.268 0.853 0.409 0.900 .853/.528 36
L2 RRF k 20 -> 40            0.647/0.771 0.745/0.862 0.176/0.275 0.853 0.386 0.902 .854/.535 37
L3 members round robin       0.617/0.738 0.726/0.839 0.183/0.261 0.853 0.364 0.876 .862/.549 42
L3 best 3 members            0.630/0.747 0.713/0.836 0.183/0.254 0.853 0.318 0.859 .832/.521 41
L3 best 2, round robin       0.584/0.708 0.683/0.799 0.190/0.254 0.846 0.295 0.809 .826/.521 40
L3 5 digests per channel     0.654/0.774 0.736/0.851 0.148/0.239 0.853 0.364 0.900 .849/.500 39
L3 20 digests per channel    0.658/0.782 0.741/0.849 0.162/0.275 0.853 0.409 0.892 .854/.535 42
L4 sentence vectors channel  0.653/0.767 0.739/0.854 0.169/0.268 0.853 0.409 0.892 .841/.486 60
L4 sentence vectors in place 0.643/0.772 0.730/0.851 0.141/0.239 0.846 0.364 0.892 .822/.408 55
L4 '?' turns x.5, share .3   0.642/0.763 0.741/0.858 0.141/0.254 0.840 0.432 0.902 .854/.535 43
L4 mostly-'?' turns x.5/.5   0.659/0.782 0.746/0.859 0.169/0.275 0.853 0.409 0.902 .854/.535 39
L4 diversity x.9 within 12   0.639/0.764 0.732/0.850 0.183/0.268 0.840 0.364 0.888 .854/.535 39
L4 diversity x.8 within 6    0.629/0.753 0.717/0.832 0.218/0.275 0.840 0.386 0.856 .854/.535 43
L4 other speaker x.25        0.657/0.778 0.750/0.862 0.183/0.289 0.853 0.432 0.902 .854/.535 38
L4 other x.25, raw next      0.658/0.783 0.746/0.858 0.169/0.282 0.833 0.455 0.902 .854/.535 36
============================ =========== =========== =========== ===== ===== ===== ========= ===

L1 pseudo-relevance feedback: the first pass's best k sources (fused order, digests and
items left out) seed a second pass. *Rocchio channel*: the query vector plus b times the
seeds' mean vector, searched again and fused as one more RRF channel; *Rocchio query*: that
vector replaces the query's in the vector channel; *tf-idf terms*: the seeds' 8 terms with the
highest (seeds containing it) x log(1 + N / (1 + df)) added to the full-text query, one more
channel. L2: each channel's RRF weight 1 + a x (share of its top N found in another channel's
top N); or a candidate's fused score x (1 + 0.2 per extra channel that found it); or the RRF
constant re-chosen now that digests add two channels. L3: how a
digest promotes its turns (today: every member, best digest first, each digest's members by
their own cosine), and how many digests per channel. L4: each turn's sentences (and image
caption) embedded apart, a turn ranked by its best sentence, as one more channel or in place
of the turn vectors (one embedding per sentence at intake, ~3x today's); a turn that ends in
"?" (or is mostly questions) keeps that share of its score and passes the given share to the
next turn; the score of a source times the factor per better source of the same run within
that many turns; the other speaker's share of score (0.5 today), and passing the next turn the
unweighted share.

What this says:

- Reordering what the candidates hold is exhausted at k = 10 with these signals: no lever
  moves R@10 "all" by more than 0.007 (five questions); the best (other speaker x0.25, +0.007
  R@10, +0.014 multi-hop) drops open-domain R@5 and was already rejected without digests (F):
  within noise, and a weight tuned on these conversations. The candidate-set ceiling (c50)
  moved only with round-robin promotion (.862/.549), which loses at k = 10.
- Where the top 10 goes (today, questions naming one speaker): 24-30% of its turns are the
  other speaker's, though 97% of evidence turns are said by the person named, and 22-27%
  end in "?". Both are a turn's neighbours in a matching window or the question that
  precedes an answer; demoting them (L4) pushes out the answers they carry in next-turn share.
- Multi-hop: 76 of 142 questions have all their evidence in the first 50 fused sources, 31
  in the first 10 (39 in the returned top 10, after the speaker and next-turn rescoring);
  the rest sit at 11-50, below whole windows of the best-matching session.
- Pseudo-relevance feedback finds more of what the first pass found: the seeds are the
  question's own topic in one session, and multi-hop evidence lies in other sessions, worded
  unlike both the question and the seeds. Rocchio costs a vector fetch and a second vector
  search (within this run's CPU noise at 3k documents; one more vector search per recall at
  scale), the terms one more full-text query (+8-12 ms CPU p95 here), for nothing.
- Agreement weighting reproduces RRF: channels agree on the same session's turns.
- A digest must promote all its members: cutting a window to its most similar turns loses
  the answer turns, which are worded unlike the question (that is why digests work).
- Sentence vectors lose more (long turns' topics) than they find.
- What remains is a change in what the engine knows, not in ranking: model-made facts per
  session or turn (measured with a local model: :mod:`remem.bench.locomo_extraction`).
"""

from __future__ import annotations

import json
import platform
import resource
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import remem
from remem.bench.baselines import BM25Baseline, DenseBaseline
from remem.bench.locomo_data import CATEGORY_NAMES, Conversation, LocomoSet, load_locomo
from remem.bench.locomo_extraction import ModelExtraction, memory_config, same_build
from remem.bench.metrics import RecallRecord, aggregate_recall, latency_summary

SYSTEMS = ("remem", "bm25", "dense")
MEMORY_ID = "locomo"
TOKENS_PER_RESULT = 300
"""Budget per requested result: a LoCoMo turn is 20-80 tokens plus its line's few tokens of
labels; generous on purpose, so the budget never decides what is measured at k."""

Progress = Callable[[str, int, int], None]
"""``progress(label, done, total)`` while a conversation is ingested."""


def budget_for(k: int) -> int:
    """The recall budget (tokens) that fits ``k`` LoCoMo turns with room to spare."""
    return TOKENS_PER_RESULT * k + 500


def conversation_scope(conv: Conversation) -> str:
    return f"thread:{conv.sample_id}"


@dataclass
class SystemRun:
    """One system's answers: one record per question and the latency of each call (ms)."""

    name: str
    records: list[RecallRecord] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)


@dataclass
class IngestStats:
    turns: int = 0
    seconds: float = 0.0
    per_conversation: list[dict[str, Any]] = field(default_factory=list)

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.seconds if self.seconds else 0.0


def ranked_dia_ids(result: Any) -> list[str]:
    """Source ids of a recall result, best first: sources as themselves, items through their
    provenance (``sources``), merged by the fused score (items first on ties)."""
    scored: list[tuple[float, int, list[str]]] = []
    for i, item in enumerate(result.items):
        scored.append((item.score, i, list(item.sources)))
    offset = len(scored)
    for i, src in enumerate(result.sources):
        scored.append((src.score, offset + i, [src.id]))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [sid for _, _, sids in scored for sid in sids]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ingest(mem: Any, conv: Conversation, progress: Progress | None = None
           ) -> tuple[float, float]:
    """Observes every turn of a conversation, then runs the derive jobs observe queued.

    Returns:
        (seconds observing: record, chain, full text and vector of each turn; seconds deriving:
        extraction and reconciliation of claims).
    """
    scope = conversation_scope(conv)
    t0 = time.perf_counter()
    for i, turn in enumerate(conv.turns, start=1):
        mem.observe(scope, turn.text, role="user", actor=turn.speaker, source_id=turn.dia_id,
                    run_id=conv.sample_id, occurred_at=turn.occurred_at, kind="user-message")
        if progress:
            progress(conv.sample_id, i, len(conv.turns))
    t1 = time.perf_counter()
    if hasattr(mem, "run_jobs"):
        mem.run_jobs()
    return t1 - t0, time.perf_counter() - t1


def _timed(fn: Callable[[], list[str]]) -> tuple[list[str], float]:
    t0 = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t0) * 1000


def evaluate_conversation(conv: Conversation, db_dir: Path, ks: Sequence[int],
                          runs: dict[str, SystemRun], embed: Callable[[list[str]], Any],
                          progress: Progress | None = None, digests: bool = True,
                          reuse_db: bool = False, extraction: ModelExtraction | None = None
                          ) -> dict[str, Any]:
    """Ingests one conversation into a fresh memory (or, with ``reuse_db``, opens the one a
    kept earlier run built with the same config: recall-only changes measured in a minute,
    exactly), asks every scorable question of the three systems, appends to ``runs``;
    returns this conversation's ingest and truncation stats (ingest 0 s if reused)."""
    path = db_dir / f"{conv.sample_id}.db"
    providers = extraction.providers() if extraction else None
    reused = reuse_db and _reusable(path, digests, extraction)
    if not reused:
        for old in db_dir.glob(path.name + "*"):
            old.unlink()
    store = remem.open(path, derive="worker", providers=providers)  # inline's work, timed apart
    try:
        if reused:
            mem, observe_s, derive_s = store.memory(MEMORY_ID), 0.0, 0.0
        else:
            mem = store.create_memory(MEMORY_ID, memory_config(digests, extraction))
            observe_s, derive_s = ingest(mem, conv, progress)
        items = sum(mem.status()["items"].values())
        bm25 = BM25Baseline(conv.turns)
        dense = DenseBaseline(conv.turns, embed)
        k_max = max(ks)
        scope, budget = conversation_scope(conv), budget_for(k_max)
        truncated = 0
        for q in conv.scorable_questions():
            ev = frozenset(q.evidence)
            result, ms = _timed_recall(mem, scope, q.question, budget, k_max)
            truncated += result.truncated
            answers = {"remem": (ranked_dia_ids(result), ms),
                       "bm25": _timed(lambda: bm25.search(q.question, k_max)),
                       "dense": _timed(lambda: dense.search(q.question, k_max))}
            for name, (ids, ms) in answers.items():
                runs[name].records.append(RecallRecord(q.category, tuple(ids), ev, q.qid))
                runs[name].latencies_ms.append(ms)
    finally:
        store.close()
    return {"sample_id": conv.sample_id, "turns": len(conv.turns),
            "questions": len(conv.scorable_questions()),
            "ingest_s": round(observe_s + derive_s, 3), "observe_s": round(observe_s, 3),
            "derive_s": round(derive_s, 3), "items_derived": items, "truncated": truncated,
            "reused_db": reused}


def _reusable(path: Path, digests: bool, extraction: ModelExtraction | None) -> bool:
    """Whether ``path`` holds a memory a kept run built with this config."""
    if not path.is_file():
        return False
    store = remem.open(path, providers=extraction.providers() if extraction else None)
    try:
        return same_build(store.memory(MEMORY_ID).memory_config(), digests, extraction)
    except remem.RememError:
        return False
    finally:
        store.close()


def _timed_recall(mem: Any, scope: str, query: str, budget: int, limit: int
                  ) -> tuple[Any, float]:
    t0 = time.perf_counter()
    result = mem.recall([scope], query, budget_tokens=budget, limit=limit)
    return result, (time.perf_counter() - t0) * 1000


def run_locomo(data: Path | str | LocomoSet, *, ks: Sequence[int] = (5, 10),
               out_dir: Path = Path("bench-out/locomo"), limit_conversations: int | None = None,
               progress: Progress | None = None, keep_db: bool = False,
               digests: bool = True, reuse_db: bool = False,
               extraction: ModelExtraction | None = None) -> dict[str, Any]:
    """Runs the benchmark and writes ``results.json``, ``per_question.jsonl`` and
    ``recall.png`` into ``out_dir``.

    Args:
        data: a LoCoMo JSON path (or an already loaded set).
        ks: the k of recall@k (each >= 1).
        out_dir: output directory (created); SQLite files go to ``out_dir/db``.
        limit_conversations: only the first N conversations.
        progress: ingest progress callback.
        keep_db: keep the per-conversation SQLite files.
        digests: build the memories with ``{"digests": true}`` (conversation-window digests,
            opt-in per memory; the recommended setting for conversation memories).
        reuse_db: recall over the memories a ``keep_db`` run left in ``out_dir/db`` (same
            digests setting; others are rebuilt) instead of ingesting again; implies
            ``keep_db``. For recall-side levers: the same engine, no ingest.
        extraction: a chat model as derive's Extractor (default: the offline rules), see
            :mod:`remem.bench.locomo_extraction`.

    Returns:
        The results document (see :func:`results_document`).
    """
    from remem.providers.registry import shared_embedder

    dataset = data if isinstance(data, LocomoSet) else load_locomo(data)
    convs = dataset.conversations[:limit_conversations] if limit_conversations else \
        dataset.conversations
    ks = tuple(sorted(set(int(k) for k in ks)))
    if not ks or ks[0] < 1:
        raise ValueError(f"k must be positive integers, got {ks!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    db_dir = out_dir / "db"
    db_dir.mkdir(exist_ok=True)
    embedder = shared_embedder(None)
    embedder.embed_batch(["warm up"])  # model load is not ingest time
    runs = {name: SystemRun(name) for name in SYSTEMS}
    ingest_stats = IngestStats()
    for conv in convs:
        row = evaluate_conversation(conv, db_dir, ks, runs, embedder.embed_batch, progress,
                                    digests, reuse_db, extraction)
        ingest_stats.turns += row["turns"]
        ingest_stats.seconds += row["ingest_s"]
        ingest_stats.per_conversation.append(row)
    if not (keep_db or reuse_db):
        shutil.rmtree(db_dir, ignore_errors=True)
    doc = results_document(dataset, convs, ks, runs, ingest_stats)
    doc["memory_config"] = memory_config(digests, extraction)
    (out_dir / "results.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    with (out_dir / "per_question.jsonl").open("w", encoding="utf-8") as fh:
        for name, r in runs.items():
            for rec, ms in zip(r.records, r.latencies_ms, strict=True):
                fh.write(json.dumps({"system": name, "qid": rec.qid, "category": rec.category,
                                     "evidence": sorted(rec.evidence),
                                     "retrieved": list(rec.retrieved), "ms": round(ms, 3)})
                         + "\n")
    plot_recall(doc, out_dir / "recall.png")
    return doc


def results_document(dataset: LocomoSet, convs: Sequence[Conversation], ks: Sequence[int],
                     runs: dict[str, SystemRun], ingest_stats: IngestStats) -> dict[str, Any]:
    """The ``results.json`` document: settings, data stats, and per system recall + latency."""
    systems = {}
    for name, r in runs.items():
        summary = aggregate_recall(r.records, ks)
        lat = latency_summary(r.latencies_ms) if r.latencies_ms else None
        systems[name] = {
            "recall": summary.as_dict(),
            "latency_ms": {"p50": round(lat.p50, 3), "p95": round(lat.p95, 3),
                           "mean": round(lat.mean, 3), "max": round(lat.max, 3),
                           "n": lat.n} if lat else None}
    max_k = max(ks)
    per_conv = ingest_stats.per_conversation
    return {
        "benchmark": "locomo evidence recall",
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "data": {"path": dataset.path, "conversations": [c.sample_id for c in convs],
                 "turns": sum(len(c.turns) for c in convs),
                 "questions_scored": sum(len(c.scorable_questions()) for c in convs),
                 "questions_skipped": sum(len(c.questions) - len(c.scorable_questions())
                                          for c in convs),
                 "evidence": dataset.evidence_stats.as_dict()},
        "settings": {"ks": list(ks), "scope": "thread:<sample_id>", "role": "user",
                     "budget_tokens": budget_for(max_k), "limit": max_k,
                     "categories": {str(c): n for c, n in CATEGORY_NAMES.items() if c != 5}},
        "systems": systems,
        "ingest": {"turns": ingest_stats.turns, "seconds": round(ingest_stats.seconds, 3),
                   "turns_per_s": round(ingest_stats.turns_per_s, 1),
                   "observe_s": round(sum(c["observe_s"] for c in per_conv), 3),
                   "derive_s": round(sum(c["derive_s"] for c in per_conv), 3),
                   "items_derived": sum(c["items_derived"] for c in per_conv),
                   "per_conversation": per_conv},
        "remem_truncated": sum(c["truncated"] for c in ingest_stats.per_conversation),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
        "platform": {"python": platform.python_version(), "machine": platform.machine()},
    }


# --------------------------------------------------------------------------- rendering


def _cell(block: dict[str, Any], k: int) -> str:
    s = block[f"R@{k}"]
    return f"{s['all']:.3f} / {s['any']:.3f}"


def recall_tables(doc: dict[str, Any]) -> list[Any]:
    """Rich tables: one per k (rows systems, columns categories + overall, cells all / any),
    then cost (ingest, latency, RSS)."""
    from rich.table import Table

    cats = sorted({c for s in doc["systems"].values() for c in s["recall"]["by_category"]},
                  key=int)
    tables = []
    for k in doc["settings"]["ks"]:
        t = Table(title=f"LoCoMo evidence recall@{k} (all / any)")
        t.add_column("system")
        for c in cats:
            n = next(s["recall"]["by_category"][c][f"R@{k}"]["n"]
                     for s in doc["systems"].values() if c in s["recall"]["by_category"])
            t.add_column(f"{c} {CATEGORY_NAMES.get(int(c), '?')} (n={n})", justify="right")
        t.add_column(f"overall (n={doc['data']['questions_scored']})", justify="right")
        for name, s in doc["systems"].items():
            by = s["recall"]["by_category"]
            t.add_row(name, *(_cell(by[c], k) if c in by else "-" for c in cats),
                      _cell(s["recall"]["overall"], k))
        tables.append(t)
    cost = Table(title="cost")
    for col in ("system", "recall p50 ms", "recall p95 ms"):
        cost.add_column(col, justify="right" if "ms" in col else "left")
    for name, s in doc["systems"].items():
        lat = s["latency_ms"] or {"p50": 0, "p95": 0}
        cost.add_row(name, f"{lat['p50']:.2f}", f"{lat['p95']:.2f}")
    tables.append(cost)
    return tables


def summary_line(doc: dict[str, Any]) -> str:
    ing = doc["ingest"]
    return (f"{len(doc['data']['conversations'])} conversations, {ing['turns']} turns ingested "
            f"in {ing['seconds']:.1f} s ({ing['turns_per_s']:.1f} turns/s; observe "
            f"{ing['observe_s']:.1f} s, derive {ing['derive_s']:.1f} s forming "
            f"{ing['items_derived']} items), "
            f"{doc['data']['questions_scored']} questions scored "
            f"({doc['data']['questions_skipped']} skipped: adversarial or no evidence), "
            f"evidence ids {doc['data']['evidence']}, remem results truncated: "
            f"{doc['remem_truncated']}, peak RSS {doc['peak_rss_mb']:.0f} MB")


def markdown_table(doc: dict[str, Any]) -> str:
    """The README/closing-note table: R@k all/any per category and overall, per system."""
    cats = sorted({c for s in doc["systems"].values() for c in s["recall"]["by_category"]},
                  key=int)
    head = ["system", "k"] + [f"{c} {CATEGORY_NAMES.get(int(c), '?')}" for c in cats] + [
        "overall", "p50 ms", "p95 ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in doc["systems"].items():
        for k in doc["settings"]["ks"]:
            by = s["recall"]["by_category"]
            lat = s["latency_ms"]
            lines.append("| " + " | ".join(
                [name, f"R@{k}"] + [_cell(by[c], k) if c in by else "-" for c in cats]
                + [_cell(s["recall"]["overall"], k), f"{lat['p50']:.1f}", f"{lat['p95']:.1f}"])
                + " |")
    return "\n".join(lines)


def plot_recall(doc: dict[str, Any], path: Path) -> None:
    """A PNG: one panel per k, grouped bars of R@k "all" per category and overall for each
    system, with "any" drawn as an outline behind each bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = doc["settings"]["ks"]
    systems = list(doc["systems"])
    cats = sorted({c for s in doc["systems"].values() for c in s["recall"]["by_category"]},
                  key=int)
    groups = [*cats, "overall"]
    labels = [CATEGORY_NAMES.get(int(c), c) if c != "overall" else "overall" for c in groups]
    fig, axes = plt.subplots(1, len(ks), figsize=(6 * len(ks), 4.2), squeeze=False)
    width = 0.8 / max(1, len(systems))
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    for ax, k in zip(axes[0], ks, strict=True):
        for j, name in enumerate(systems):
            rec = doc["systems"][name]["recall"]
            blocks = [rec["by_category"].get(c) if c != "overall" else rec["overall"]
                      for c in groups]
            alls = [b[f"R@{k}"]["all"] if b else 0 for b in blocks]
            anys = [b[f"R@{k}"]["any"] if b else 0 for b in blocks]
            xs = [i + (j - (len(systems) - 1) / 2) * width for i in range(len(groups))]
            color = colors[j % len(colors)]
            ax.bar(xs, anys, width * 0.95, fill=False, edgecolor=color, linewidth=1.0)
            ax.bar(xs, alls, width * 0.95, color=color, label=name)
        ax.set_xticks(range(len(groups)), labels)
        ax.set_ylim(0, 1)
        ax.set_title(f"recall@{k}: filled = all, outline = any")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
    fig.suptitle(f"LoCoMo evidence recall ({', '.join(doc['data']['conversations'])})",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
