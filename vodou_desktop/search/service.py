"""Hybrid search: keyword (FTS5 bm25) and meaning (cosine), fused, shared along conversations, then
weighted (SEARCH-2).

1. Candidates: the best ``KEYWORD_POOL`` rows holding any of the query's terms (bm25, Porter-stemmed
   text plus a dated memory's date in words), the ``VECTOR_POOL`` nearest by cosine, and the turns
   next to the best ``NEIGHBOUR_POOL`` of them in their conversation. The pools are fixed, so the
   first results never depend on ``k``.
2. Fusion (``fusion.py``): each path's scores normalised over the candidates, blended.
3. Conversation context: a turn takes a share of the turn before it (the one it answers) and after
   it (its reply), so an answer is found through its question; and a share of the best candidate
   two to ``NEARBY_SPAN`` turns away in the same conversation (what was said a little earlier or
   later on the subject).
4. Weights: provenance tier, duplicate status and scope; the share of the query's terms a candidate
   holds; for a transcript's turn (``Name: what they said``), whether the question names its
   speaker; and the share of its sentences that ask (a question holds none of its answer; its reply
   still takes its share of it, before this weight). Every factor is kept for ``explain``.

Hard predicates (project wall, soft delete, supersession, no document chunks) are applied by the
vault's query builder on every path, neighbours included; the vector path only proposes ids.

Speed (bench/search.py, end to end): the query is embedded on the model's thread while this thread
runs the keyword stage; candidates are ranked on light rows (``query.rank_rows``: tier, duplicate
status, scope), read by the same statements that check them against the filter; every candidate's
cosine comes from the vector index's rows (the vault is read only for a vector the index does not
hold yet); full facts are read only for the results returned and their neighbours. A query is one
read transaction.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

from vodou_desktop.search import keyword
from vodou_desktop.search import operators as search_operators
from vodou_desktop.search.embedder import DEFAULT_MODEL, MIN_COSINE, MINILM_MODEL, Embedder
from vodou_desktop.search.fusion import FusionParams, keyword_weight, normalise
from vodou_desktop.search.vectors import VectorIndex
from vodou_desktop.vault import Fact, FactFilter, Vault, dates
from vodou_desktop.vault import query as q

log = logging.getLogger(__name__)

TIER_WEIGHTS = {"pinned": 1.1, "first_party": 1.0, "capture": 0.925, "import": 0.85}
DUPLICATE_WEIGHT = FusionParams().duplicate_weight  # 0.4 (SEARCH-2)
# Weights by kind (ING-6; bench/notes/ingest.md has the figures behind them): a person's message kept whole
# (conversation memory) ranks just below what was distilled from it, which says the same in fewer words;
# standing instructions and preferences apply to every later question on their subject, so they rank
# above an ordinary memory that matches as well (recall puts them first too).
KIND_WEIGHTS = {"conversation": 0.9, "instruction": 1.5, "preference": 1.5}
# Memories of the same message (its turn and what was distilled from it; ``source_event_id``): every one
# after the best of them counts this much, so ten results are ten messages where they can be.
SAME_MESSAGE_WEIGHT = 0.5
SCOPE_WEIGHT = 2.0
# Chosen by cross-validation over folds of conversations of three sets, ours, LoCoMo-10 and BEAM 100K, by
# the worst set's ratio to its own bm25 (python -m bench.quality --cv; bench/RESULTS.md). Every fold chose
# ``answers`` 1.0: without it BEAM falls from .746 to .667 hit@10 while the other two gain about .01-.02.
FUSION = FusionParams(method="minmax", keyword_weight=0.6, adaptive=8.0, before_share=0.5, after_share=0.15,
                      context_weight=0.5, coverage=1.0, second_hop=0.5, previous_turn=4.0, speaker=1.0, asks=0.7,
                      nearby=0.2, answers=1.0)
MAX_K = 200
# Candidates per path: fixed, so that the first results never depend on how many were asked for.
KEYWORD_POOL = 100
VECTOR_POOL = 100
NEIGHBOUR_POOL = 50
PRE_BLEND = FusionParams(method="zscore", keyword_weight=0.5)
COMMON_TERM_MIN = 2_000
COMMON_MEMO_SIZE = 10_000  # terms whose commonness is remembered until the vault changes
MAX_QUERY_CHARS = 10_000
HOP_ANCHORS = 3  # the second hop expands the query with words of this many best first-hop candidates
HOP_WORDS = 5  # ... this many of them
HOP_CANDIDATE_WORDS = 40  # words looked up in the index (their chunk counts) per query, at most
HOP_POOL = 50  # rows the second pass reads
BM25_K1, BM25_B = 1.2, 0.75  # FTS5's own bm25 constants, for the previous turn's words
NEARBY_SPAN = 6  # a turn takes a share of the best candidate up to this many places away (bench/history/rounds-1-4.md)


@dataclass(frozen=True)
class SearchResult:
    fact: Fact
    score: float
    factors: dict[str, Any] = field(default_factory=dict)
    before: Fact | None = None  # the turn before it in its conversation (the one it answers)
    after: Fact | None = None  # the turn after it (the reply)

    def as_json(self, explain: bool = False) -> dict[str, Any]:
        data = self.fact.as_json()
        data["score"] = round(self.score, 6)
        data["neighbours"] = {"before": _brief(self.before), "after": _brief(self.after)}
        if explain:
            data["explain"] = self.factors
        return data


@dataclass(frozen=True)
class RankedMatches:
    """``search_all``'s answer: the ranked results, then the further keyword matches as
    ``(id, bm25)`` (best first), for the caller to read a page at a time."""

    ranked: list[SearchResult]
    more: list[tuple[int, float]]

    @property
    def total(self) -> int:
        return len(self.ranked) + len(self.more)


def _brief(fact: Fact | None) -> dict[str, Any] | None:
    return None if fact is None else {"id": fact.id, "text": fact.text, "valid_at": fact.event_time}


@dataclass
class Candidates:
    """One query's candidates with their raw scores (what ``rank`` fuses; bench.cv gathers once, ranks many times)."""

    kw: dict[int, float]  # match strength: -bm25, higher is better
    vec: dict[int, float]  # cosine, for every candidate when the model is on
    found_by_vector: set[int]
    before: dict[int, int]  # id -> the visible turn before it
    after: dict[int, int]
    facts: dict[int, q.RankRow]  # every candidate the filter lets through: what ranking weighs of it
    semantic: bool
    anchors: set[int] = field(default_factory=set)  # the ids whose neighbours were read
    coverage: dict[int, float] = field(default_factory=dict)  # share of the query's terms each candidate holds
    hop: dict[int, float] = field(default_factory=dict)  # second keyword pass: match strength, higher is better
    hop_words: list[str] = field(default_factory=list)  # the words the second pass added to the query
    previous: dict[int, float] = field(default_factory=dict)  # bm25 the turn before adds (``_previous_turn``)
    speaker: dict[int, str] = field(default_factory=dict)  # id -> its speaker, when the question names them
    asks: dict[int, float] = field(default_factory=dict)  # id -> share of its sentences that are questions (> 0)
    nearby: dict[int, set[int]] = field(default_factory=dict)  # id -> the candidates 2..NEARBY_SPAN turns away
    filt: FactFilter = field(default_factory=FactFilter)  # the filter they were gathered under
    floor: float = MIN_COSINE[MINILM_MODEL]  # the model's cosine below which a memory is unrelated
    # each path's normalised scores per fusion method, for the ids they were computed over (``_fusion``)
    norms: dict[str, tuple[list[int], int, int, dict[int, float], dict[int, float]]] = field(
        default_factory=dict, repr=False)


class _Scored(NamedTuple):
    score: float
    id: int
    from_before: float
    from_after: float
    from_nearby: float
    tier_w: float
    kind_w: float
    dup_w: float
    message_w: float
    scope_w: float
    cover_w: float
    speaker_w: float
    asks_w: float


# fused, kw norm, vector norm, kw weight, second-hop norm
_Norms = tuple[dict[int, float], dict[int, float], dict[int, float], float, dict[int, float]]


class SearchService:
    def __init__(self, vault: Vault, embedder: Embedder | None = None, index: VectorIndex | None = None,
                 params: FusionParams = FUSION) -> None:
        self.vault = vault
        self.embedder = embedder
        model = getattr(embedder, "model_id", DEFAULT_MODEL)  # an index holds its embedder's vectors only
        self.index = index if index is not None else VectorIndex(vault, model=model)
        # below this cosine a memory is unrelated to the query for this model (embedder.MIN_COSINE)
        self.min_cosine = float(getattr(embedder, "min_cosine", None)
                                or MIN_COSINE.get(model, MIN_COSINE[MINILM_MODEL]))
        self.params = params
        self._local = threading.local()  # per thread: its reader connection's common-term memo

    @property
    def semantic(self) -> bool:
        return self.embedder is not None and self.embedder.ready

    def search(self, text: str, filt: FactFilter | str | None = None, *, scope: str | None = None,
               k: int = 10, operators: bool = False) -> list[SearchResult]:
        """Top ``k`` facts for ``text`` under ``filt`` (a project name means that project's facts
        plus global ones). Any string is safe; none raises, except, with ``operators`` (what a person
        or an AI tool typed as a search: ``project:``, ``kind:``, ``site:``, ``before:``, ``after:``,
        see ``operators.py``), an operator that is malformed or would reach past ``filt``."""
        filt = FactFilter(project=filt) if isinstance(filt, str) else filt or FactFilter()
        k = max(1, min(int(k), MAX_K))
        if operators:  # they narrow the filter, never widen it; alone, they list what they let through
            typed = search_operators.parse(text)
            text, filt = typed.words, typed.narrow(filt)
            if typed.only_operators:
                return [SearchResult(f, 0.0) for f in self.vault.read(lambda c: q.list_facts(c, filt, limit=k))]
        text, pending = self._submit(text)
        try:
            # One read transaction for the whole query: one snapshot, no BEGIN/COMMIT per step (the
            # index applies the vault's changes before it, not inside it: see ``VectorIndex.held``).
            with self.index.held():
                return self.vault.read(lambda conn: self._top(
                    conn, self._gather(conn, text, filt, self.params, pending), self.params, scope, k, True,
                    neighbours=True))
        finally:
            if pending is not None:
                pending.cancel()  # only when the keyword stage raised before the vector was needed

    def search_all(self, text: str, filt: FactFilter | None = None, *,
                   scope: str | None = None, operators: bool = False) -> RankedMatches:
        """Every match of ``text`` under ``filt``, for a list that can reach them all (the memory
        browser): the candidates ranked exactly as ``search`` ranks them (its top ``k`` are their
        first ``k``), then every other fact the keyword expression finds, by bm25. One read
        transaction; only the ranked candidates are read in full (a few hundred at most)."""
        filt = filt or FactFilter()
        if operators:  # as in ``search``; alone, every memory they let through, newest first
            typed = search_operators.parse(text)
            text, filt = typed.words, typed.narrow(filt)
            if typed.only_operators:
                return RankedMatches([], [(i, 0.0) for i in self.vault.read(lambda c: q.ordered_fact_ids(c, filt))])
        text, pending = self._submit(text)
        try:
            with self.index.held():
                return self.vault.read(lambda conn: self._all(conn, text, filt, scope, pending))
        finally:
            if pending is not None:
                pending.cancel()

    def _all(self, conn: Any, text: str, filt: FactFilter, scope: str | None,
             pending: Future[np.ndarray] | None) -> RankedMatches:
        cands = self._gather(conn, text, filt, self.params, pending)
        ranked = self._top(conn, cands, self.params, scope, None, True, neighbours=False)
        expr = self._keyword_expression(conn, text)
        seen = {r.fact.id for r in ranked}
        more = [(i, bm25) for i, bm25 in q.keyword_match_ids(conn, expr, filt, -1, self.params.context_weight)
                if i not in seen] if expr else []
        return RankedMatches(ranked, more)

    # -- candidates ----------------------------------------------------------------------
    def gather(self, text: str, filt: FactFilter, params: FusionParams | None = None) -> Candidates:
        """Every candidate with its raw scores.

        The query is embedded on the model's thread while this thread runs the keyword stage, so a
        new query costs about the longer of the two, not their sum."""
        params = params or self.params
        text, pending = self._submit(text)
        try:
            with self.index.held():
                return self.vault.read(lambda conn: self._gather(conn, text, filt, params, pending))
        finally:
            if pending is not None:
                pending.cancel()

    def _submit(self, text: str) -> tuple[str, Future[np.ndarray] | None]:
        """The query, cut to ``MAX_QUERY_CHARS``, and its embedding handed to the model's thread."""
        text = (text or "")[:MAX_QUERY_CHARS]
        if not (self.semantic and text.strip()):
            return text, None
        try:
            # the meaning half embeds the question without the dates it names (``dates.without_dates``)
            return text, self.embedder.submit_one(dates.without_dates(text))  # type: ignore[union-attr]
        except Exception as exc:  # the model stopped between the check and the hand-off: keyword only
            log.warning("query embedding not started (%s); this search uses keywords only", exc)
            return text, None

    def _gather(self, conn: Any, text: str, filt: FactFilter, params: FusionParams,
                pending: Future[np.ndarray] | None) -> Candidates:
        """``gather`` inside one read transaction on ``conn``."""
        # The keyword check also reads each match's ranking row: needed anyway, and read while the
        # model embeds the query.
        ranked = self._keyword(conn, text, filt, KEYWORD_POOL, params.context_weight)
        kw = {row.id: -score for row, score in ranked}
        rows = {row.id: row for row, _ in ranked}
        qvec = _query_vector(pending)
        vec: dict[int, float] = {}
        if qvec is not None:
            vec, found = self._nearest_rows(conn, qvec, filt, VECTOR_POOL, rows)
            rows.update((i, found[i]) for i in vec if i not in rows)
        found_by_vector = set(vec)
        if qvec is not None:
            vec.update(self._cosines(conn, qvec, sorted(set(kw) - found_by_vector)))
        cands = Candidates(kw, vec, found_by_vector, {}, {}, {}, qvec is not None, floor=self.min_cosine)
        # The best candidates by a plain blend (a fixed number, whatever k or the fusion).
        pre = _fusion(cands, PRE_BLEND, sorted(set(kw) | set(vec)))[0]
        if params.second_hop:
            self._second_hop(conn, text, filt, pre, cands, rows, qvec, params.context_weight)
        # best first, ties by id (``pre`` is in id order and a reverse sort keeps equal items' order)
        best = [i for i, _ in sorted(pre.items(), key=itemgetter(1), reverse=True)[:NEIGHBOUR_POOL]]
        cands.anchors = set(best)
        # one statement reads the turns next to the anchors and, for the nearby share, a few more
        around = q.thread_neighbour_ids(conn, best, filt, NEARBY_SPAN if params.nearby else 1)
        _place([t for t in around if abs(t[1]) == 1], cands.before, cands.after)
        extra = (set(cands.before.values()) | set(cands.after.values())) - set(kw) - set(vec)
        if extra:
            if qvec is not None:
                vec.update(self._cosines(conn, qvec, sorted(extra)))
            rows.update((r.id, r) for r in q.rank_rows(conn, sorted(extra), filt))
        cands.facts = rows
        cands.filt = filt
        if params.nearby:
            # between candidates only: a turn that is not one takes nothing (no row read for it)
            for anchor, offset, other in around:
                if abs(offset) > 1 and other in rows:
                    cands.nearby.setdefault(anchor, set()).add(other)
                    cands.nearby.setdefault(other, set()).add(anchor)
        if params.coverage or params.previous_turn or params.speaker or params.asks or params.answers:
            # for the anchors and their neighbours: what can reach the top (bench/history/rounds-1-4.md)
            near = cands.anchors | set(cands.before.values()) | set(cands.after.values())
            texts = q.match_texts(conn, sorted(near.intersection(rows)), filt)
            stems = {i: (self._tokens(conn, body, stem=True), self._tokens(conn, context or "", stem=True))
                     for i, body, context in texts}
            if params.speaker:
                cands.speaker = self._named_speakers(conn, text, texts)
            if params.asks or params.answers:
                cands.asks = {i: share for i, body, _ in texts if (share := keyword.asking_share(body)) > 0}
            terms = {t: self._tokens(conn, t, stem=True) for t in keyword.terms(text)}
            wanted = {x for stem in terms.values() for x in stem}
            if params.coverage and wanted:
                cands.coverage = {i: len(wanted.intersection([*body, *context])) / len(wanted)
                                  for i, (body, context) in stems.items()}
            if params.previous_turn and wanted:
                cands.previous = self._previous_turn(conn, terms, cands.before, stems)
        return cands

    # -- term features -------------------------------------------------------------------
    def _named_speakers(self, conn: Any, text: str, texts: list[tuple[int, str, str | None]]) -> dict[int, str]:
        """The turns whose speaker (``keyword.speaker``) the question names: every word of the name
        is a word of the question, as the keyword index sees words (case and accents folded); or,
        for a question in the first person, the person's own turns in a chat with an assistant
        (``keyword.PERSON_SPEAKERS``)."""
        asked = set(self._tokens(conn, text, stem=False))
        first_person = not asked.isdisjoint(keyword.FIRST_PERSON)
        out = {}
        for i, body, _ in texts:
            name = keyword.speaker(body)
            if name is None:
                continue
            words = self._tokens(conn, name, stem=False)
            if (words and asked.issuperset(words)) or (first_person and name in keyword.PERSON_SPEAKERS):
                out[i] = name
        return out

    def _tokens(self, conn: Any, text: str, stem: bool) -> list[str]:
        """``text``'s words as the keyword index sees them: Porter stems (``stem``) or plain words."""
        tokenizers = getattr(self._local, "tokenizers", None)
        if tokenizers is None or tokenizers[0] is not conn:
            tokenizers = (conn, conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"]),
                          conn.fts5_tokenizer("unicode61", ["remove_diacritics", "2"]))
            self._local.tokenizers = tokenizers
        tok = tokenizers[1] if stem else tokenizers[2]
        return list(tok(text.encode("utf-8", "surrogatepass"), 4, None, include_offsets=False,
                        include_colocated=False))

    def _previous_turn(self, conn: Any, terms: dict[str, list[str]], before: dict[int, int],
                       stems: dict[int, tuple[list[str], list[str]]]) -> dict[int, float]:
        """Per turn whose turn before is known and visible, what the question's words in that turn add
        to its bm25 when the two turns are read as one document: the previous turn as a second column of
        the keyword index, computed at query time from the two texts (a forgotten or erased turn is
        not read, so it adds nothing). FTS5's bm25, with each term's chunk count from the index; the
        average length is the candidates' own."""
        memo = self._memo(conn)
        n_chunks = max(1, q.chunk_count_estimate(conn))
        idf: dict[str, float] = {}
        for term, stem in terms.items():
            if stem and stem[0] not in idf:
                n = self._doc_count(memo, conn, term)
                idf[stem[0]] = max(1e-6, math.log((n_chunks - n + 0.5) / (n + 0.5)))
        lengths = [len(body) for body, _ in stems.values()]
        avg = max(1.0, sum(lengths) / len(lengths)) if lengths else 1.0

        def bm25(counts: Counter[str], length: int, avg_length: float) -> float:
            norm = BM25_K1 * (1 - BM25_B + BM25_B * length / avg_length)
            return sum(w * counts[t] * (BM25_K1 + 1) / (counts[t] + norm) for t, w in idf.items() if counts[t])

        out = {}
        for i, (body, _) in stems.items():
            prev = before.get(i)
            if prev is None or prev not in stems:
                continue
            own, other = Counter(body), Counter(stems[prev][0])
            if not any(other[t] for t in idf):
                continue
            out[i] = bm25(own + other, len(body) + len(stems[prev][0]), 2 * avg) - bm25(own, len(body), avg)
        return out

    def _second_hop(self, conn: Any, text: str, filt: FactFilter, pre: dict[int, float], cands: Candidates,
                    rows: dict[int, q.RankRow], qvec: np.ndarray | None, context_weight: float) -> None:
        """A second keyword pass for questions whose answer lies in a turn that shares words with the
        first hop's best turns rather than with the question (RM3-style expansion): the question
        expanded with the ``HOP_WORDS`` most distinctive words of the ``HOP_ANCHORS`` best candidates
        (fewest chunks holding them, and held by at least one other chunk).

        bm25 adds up over a query's terms, so only the added words are matched here (a few rare
        words: a cheap pass) and a row's strength for the expanded question is its first-pass
        strength plus its strength for the added words."""
        best = [i for i, _ in sorted(pre.items(), key=itemgetter(1), reverse=True)[:HOP_ANCHORS]]
        if not best:
            return
        asked = set(self._tokens(conn, text, stem=True))
        seen: dict[str, None] = {}
        for _, body, _ in q.match_texts(conn, best, filt):
            for word in self._tokens(conn, body, stem=False):
                if len(word) > 2 and not word.isdigit() and word not in keyword.STOPWORDS:
                    seen.setdefault(word, None)
        words = [w for w in seen if not asked.intersection(self._tokens(conn, w, stem=True))]
        memo = self._memo(conn)
        cap = memo[2]
        counts = {w: self._doc_count(memo, conn, w) for w in words[:HOP_CANDIDATE_WORDS]}
        picked = sorted((w for w, n in counts.items() if 2 <= n < cap), key=lambda w: (counts[w], w))[:HOP_WORDS]
        if not picked:
            return
        ranked = q.keyword_rank_rows(conn, " OR ".join(keyword.quote(w) for w in picked), filt, HOP_POOL,
                                     context_weight)
        hop = dict(cands.kw)
        for row, score in ranked:
            hop[row.id] = hop.get(row.id, 0.0) - score
        cands.hop = hop
        cands.hop_words = picked
        new = [row for row, _ in ranked if row.id not in rows]
        rows.update((row.id, row) for row in new)
        if qvec is not None and new:
            cands.vec.update(self._cosines(conn, qvec, [row.id for row in new]))

    @staticmethod
    def _doc_count(memo: tuple[Any, int, int, dict[str, bool], dict[str, int]], conn: Any, word: str) -> int:
        """How many chunks hold ``word`` (up to the common cap), remembered like the common terms."""
        known = memo[4]
        if word not in known:
            if len(known) > COMMON_MEMO_SIZE:
                known.clear()
            known[word] = q.term_doc_count(conn, keyword.quote(word), memo[2])
        return known[word]

    def _cosines(self, conn: Any, qvec: np.ndarray, ids: list[int]) -> dict[int, float]:
        """Cosine of ``qvec`` with each of ``ids`` that has a vector of the index's model: from the
        index's own rows (no blob read), and from the vault for any the index does not hold yet (a
        vector written since its last sync, or an index still loading)."""
        found = self.index.cosines(qvec, ids)
        missing = [i for i in ids if i not in found]
        if missing:
            found.update(_dots(qvec, q.embeddings_for(conn, missing, self.index.model)))
        return found

    def _keyword(self, conn: Any, text: str, filt: FactFilter, pool: int,
                 context_weight: float) -> list[tuple[q.RankRow, float]]:
        """bm25 (lower is better in SQLite) and ranking row of the best ``pool`` of the rows holding
        any of the query's terms, ranked by all of them. Very common terms (in over 1% of chunks) do
        not pick rows, because an OR over them makes FTS5 score a large share of the vault (170 ms at
        1M chunks), but they still count in the rows' scores; when every term is common the rows must
        hold them all."""
        expr = self._keyword_expression(conn, text)
        if expr is None:
            return []
        return q.keyword_rank_rows(conn, expr, filt, pool, context_weight)

    def _keyword_expression(self, conn: Any, text: str) -> str | None:
        """The FTS5 expression the keyword stage matches (see ``_keyword``); None: nothing to match."""
        terms = keyword.terms(text)
        if not terms:
            return None
        common = self._common_terms(conn, terms)
        rare = [t for t in terms if t not in common]
        return (keyword.any_of_rare(rare, [t for t in terms if t in common]) if rare
                else keyword.match_expression(" ".join(terms), "and"))

    def _common_terms(self, conn: Any, terms: list[str]) -> set[str]:
        """The query's common terms (see ``_keyword``), remembered per reader connection until the
        vault changes (SQLite's ``data_version`` moves when another connection commits): a term
        costs an index read once per change of the vault, not once per query."""
        memo = self._memo(conn)
        known: dict[str, bool] = memo[3]
        if len(known) > COMMON_MEMO_SIZE:
            known.clear()
        for t in terms:
            if t not in known:
                known[t] = q.term_is_common(conn, keyword.quote(t), memo[2])
        return {t for t in terms if known[t]}

    def _memo(self, conn: Any) -> tuple[Any, int, int, dict[str, bool], dict[str, int]]:
        """This thread's memo for ``conn``: (conn, data version, common cap, term -> common, word ->
        chunk count), new whenever the vault changed."""
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        memo = getattr(self._local, "common", None)
        if memo is None or memo[0] is not conn or memo[1] != version:
            memo = (conn, version, _common_cap(conn), {}, {})
            self._local.common = memo
        return memo  # type: ignore[no-any-return]

    def _nearest(self, qvec: np.ndarray, filt: FactFilter, pool: int) -> dict[int, float]:
        """Cosine per id, for candidates that pass the filter; widens until ``pool`` pass."""
        with self.index.held():
            return self.vault.read(lambda conn: self._nearest_rows(conn, qvec, filt, pool)[0])

    def _nearest_rows(self, conn: Any, qvec: np.ndarray, filt: FactFilter, pool: int,
                      known: dict[int, q.RankRow] | None = None) -> tuple[dict[int, float], dict[int, q.RankRow]]:
        """``_nearest``, with the ranking rows of the candidates that passed (read by the check).
        ``known``: rows that already passed ``filt`` in this read transaction (not read again)."""
        n, total = pool * 4, len(self.index)
        while True:
            cands = self.index.top(qvec, n)
            found, rows = self._allowed_best(conn, cands, filt, pool, known or {}, self.min_cosine)
            if len(found) >= pool or n >= total or (cands and cands[-1][1] < self.min_cosine):
                # best first, ties by id
                return dict(sorted(sorted(found.items()), key=itemgetter(1), reverse=True)[:pool]), rows
            n *= 8

    @staticmethod
    def _allowed_best(conn: Any, cands: list[tuple[int, float]], filt: FactFilter, pool: int,
                      known: dict[int, q.RankRow], floor: float) -> tuple[dict[int, float], dict[int, q.RankRow]]:
        """The candidates (best first) at or above ``floor`` (the model's unrelated cosine) that pass the
        filter, checked a part at a time: once ``pool`` pass and the next unchecked cosine is below the ``pool``-th best
        found, the rest cannot enter the top ``pool`` and are not looked up (each costs a row read).
        The check reads the ranking rows of those that pass."""
        eligible = [(i, s) for i, s in cands if s >= floor]
        found: dict[int, float] = {}
        rows: dict[int, q.RankRow] = {}
        start, step = 0, max(1, pool * 3)
        while start < len(eligible):
            part = eligible[start : start + step]
            rows.update((i, known[i]) for i, _ in part if i in known)
            unknown = [i for i, _ in part if i not in known]
            if unknown:
                rows.update((r.id, r) for r in q.rank_rows(conn, unknown, filt))
            found.update((i, s) for i, s in part if i in rows)
            start, step = start + step, len(eligible)
            if start < len(eligible) and len(found) >= pool:
                if eligible[start][1] < sorted(found.values(), reverse=True)[pool - 1]:
                    break
        return found, rows

    # -- ranking -------------------------------------------------------------------------
    def rank(self, cands: Candidates, params: FusionParams, scope: str | None = None,
             explain: bool = True, limit: int | None = None) -> list[SearchResult]:
        """The candidates, best first (the best ``limit`` when given): fused, shared with their
        neighbours, weighted. Full facts are read and the factors built only for what is returned;
        ``explain`` false leaves the factors out (a caller ranking one question many times)."""
        return self.vault.read(lambda conn: self._top(conn, cands, params, scope, limit, explain, neighbours=False))

    def score_ids(self, cands: Candidates, params: FusionParams, limit: int, scope: str | None = None) -> list[int]:
        """The best ``limit`` candidate ids under ``params``, without reading anything (what ``rank``
        orders by; bench.cv ranks every question under many configurations)."""
        return [t.id for t in self._score(cands, params, scope, limit)[0]]

    def _top(self, conn: Any, cands: Candidates, params: FusionParams, scope: str | None, limit: int | None,
             explain: bool, neighbours: bool) -> list[SearchResult]:
        """What ``search`` and ``rank`` share: score every candidate, keep the best ``limit``, read the
        full facts of those (and, with ``neighbours``, of their neighbour turns, read here for results
        that were not anchors) in one read, and build the results."""
        scored, norms = self._score(cands, params, scope, limit)
        shown = {t.id for t in scored}
        before, after = cands.before, cands.after
        if neighbours:
            before, after = dict(before), dict(after)
            missing = [t.id for t in scored if t.id not in cands.anchors]
            if missing:
                _place(q.thread_neighbour_ids(conn, missing, cands.filt), before, after)
            shown |= {x for i in shown for x in (before.get(i), after.get(i)) if x is not None}
        facts = {f.id: f for f in q.facts_by_ids(conn, sorted(shown), cands.filt)} if shown else {}
        results = self._results(cands, params, scope, scored, norms, facts, explain)
        if not neighbours:
            return results
        return [replace(r, before=facts.get(before.get(r.fact.id, -1)), after=facts.get(after.get(r.fact.id, -1)))
                for r in results]

    def _score(self, cands: Candidates, params: FusionParams, scope: str | None,
               limit: int | None = None) -> tuple[list[_Scored], _Norms]:
        """Every candidate's final score and its weights, best first (the best ``limit``); and the
        fusion's figures.

        A candidate's score is what it shares with the turns around it (its blended score, plus a
        share of the turn before, the turn after and the best turn nearby) times its weights, each a
        plain factor that ``explain`` shows and whose product is the score: provenance tier,
        duplicate status, scope, the share of the question's words it holds, whether the question
        names its speaker, and the share of its sentences that only ask. A new weight is one more
        factor in ``weights`` below, one more field of ``_Scored`` and one more entry in ``_results``."""
        ids = sorted(cands.facts)
        norms = _fusion(cands, params, ids)
        fused = norms[0]
        facts, before, after = cands.facts, cands.before, cands.after
        kw, by_vector = keyword_scores(cands, params), cands.found_by_vector
        hop = cands.hop if params.second_hop else {}
        before_share, after_share = params.before_share, params.after_share
        coverage, cover = params.coverage, cands.coverage
        speaker_w = 1.0 + params.speaker
        named = cands.speaker if params.speaker else {}
        asks, asking = params.asks, cands.asks
        near_share, nearby = params.nearby, cands.nearby if params.nearby else {}
        answers, duplicate = params.answers, params.duplicate_weight
        scored = []
        for i in ids:
            row = facts[i]
            prev, nxt = before.get(i), after.get(i)
            from_before = before_share * fused.get(prev, 0.0) if prev is not None else 0.0
            if answers and from_before:
                from_before *= 1.0 - answers + answers * asking.get(prev, 0.0)  # type: ignore[arg-type]
            from_after = after_share * fused.get(nxt, 0.0) if nxt is not None else 0.0
            near = nearby.get(i)
            from_near = near_share * max(fused.get(j, 0.0) for j in near) if near else 0.0
            if i not in kw and i not in by_vector and i not in hop and from_before + from_after + from_near <= 0:
                continue  # only a neighbour, and it took nothing from the turns near it
            shared = fused[i] + from_before + from_after + from_near
            tier_w = TIER_WEIGHTS.get(row.tier, 1.0)
            kind_w = KIND_WEIGHTS.get(row.kind, 1.0)
            dup_w = 1.0 if row.is_canonical else duplicate
            scope_w = SCOPE_WEIGHT if scope and row.scope == scope else 1.0
            cover_w = 1.0 + coverage * cover.get(i, 0.0)
            said_w = speaker_w if i in named else 1.0
            asks_w = 1.0 - asks * asking.get(i, 0.0)
            scored.append((shared * tier_w * kind_w * dup_w * scope_w * cover_w * said_w * asks_w, i, from_before,
                           from_after, from_near, tier_w, kind_w, dup_w, 1.0, scope_w, cover_w, said_w, asks_w))
        scored.sort(reverse=True)  # by score, then id, both descending ((score, id) is unique)
        return [_Scored._make(t) for t in _one_per_message(scored, facts)[:limit]], norms

    @staticmethod
    def _results(cands: Candidates, params: FusionParams, scope: str | None, scored: list[_Scored],
                 norms: _Norms, facts: dict[int, Fact], explain: bool) -> list[SearchResult]:
        """``scored`` as results (a fact hidden since the candidates were read is left out)."""
        fused, kw_norm, vec_norm, w_kw, hop_norm = norms
        results = []
        for t in scored:
            i = t.id
            fact = facts.get(i)
            if fact is None:
                continue
            prev, nxt = cands.before.get(i), cands.after.get(i)
            shared = fused[i] + t.from_before + t.from_after + t.from_nearby
            near = max(cands.nearby.get(i, ()), key=lambda j: (fused.get(j, 0.0), -j), default=None) \
                if t.from_nearby else None
            factors = {
                "path": "hybrid" if cands.semantic else "keyword",
                "keyword_bm25": round(-cands.kw[i], 6) if i in cands.kw else None,
                "previous_turn_words": round(_previous_words(cands, params, i), 6) if i in cands.previous else None,
                "previous_turn_weight": params.previous_turn,
                "keyword_norm": round(kw_norm[i], 6),
                "vector_cosine": round(cands.vec[i], 6) if i in cands.vec else None,
                "vector_norm": round(vec_norm[i], 6),
                "second_hop_words": cands.hop_words, "second_hop_bm25": round(-cands.hop[i], 6) if i in cands.hop
                else None, "second_hop_norm": round(hop_norm.get(i, 0.0), 6), "second_hop_weight": params.second_hop,
                "fusion": params.method, "keyword_weight": round(w_kw, 6), "fused": round(fused[i], 6),
                "before_id": prev, "from_before": round(t.from_before, 6),
                "before_asks": round(cands.asks.get(prev, 0.0), 6) if prev is not None else None,
                "answers_weight": params.answers,
                "after_id": nxt, "from_after": round(t.from_after, 6),
                "nearby_id": near, "from_nearby": round(t.from_nearby, 6), "nearby_weight": params.nearby,
                "shared": round(shared, 6),
                "tier": fact.tier, "tier_weight": t.tier_w, "kind": fact.kind, "kind_weight": t.kind_w,
                "canonical": fact.is_canonical, "duplicate_weight": t.dup_w, "same_message_weight": t.message_w,
                "scope": fact.scope, "query_scope": scope, "scope_weight": t.scope_w,
                "coverage": round(cands.coverage[i], 6) if i in cands.coverage else None,
                "coverage_weight": round(t.cover_w, 6),
                "speaker": cands.speaker.get(i), "speaker_weight": round(t.speaker_w, 6),
                "asks": round(cands.asks[i], 6) if i in cands.asks else None, "asks_weight": round(t.asks_w, 6),
                "final": round(t.score, 6),
            } if explain else {}
            results.append(SearchResult(fact, t.score, factors))
        return results

def _one_per_message(scored: list[tuple[Any, ...]], rows: dict[int, q.RankRow]) -> list[tuple[Any, ...]]:
    """``scored`` (best first) with every memory after the best of its message weighed by
    ``SAME_MESSAGE_WEIGHT``, best first again. Memories that name no message are never weighed."""
    seen: set[int] = set()
    out = []
    for t in scored:
        message = rows[t[1]].message
        if message is not None and message in seen:
            t = (t[0] * SAME_MESSAGE_WEIGHT, *t[1:8], SAME_MESSAGE_WEIGHT, *t[9:])
        elif message is not None:
            seen.add(message)
        out.append(t)
    out.sort(reverse=True)
    return out


def _place(rows: list[tuple[int, int, int]], before: dict[int, int], after: dict[int, int]) -> None:
    """Record each anchor's neighbours, and the anchor as its neighbour's neighbour."""
    for anchor, offset, other in rows:
        if offset < 0:
            before[anchor] = other
            after.setdefault(other, anchor)
        elif offset > 0:
            after[anchor] = other
            before.setdefault(other, anchor)


def _fusion(cands: Candidates, params: FusionParams, ids: list[int]) -> _Norms:
    """(fused, keyword norm, vector norm, keyword weight, second-hop norm) for ``ids``. Each path's
    normalised scores depend only on its scores, the method and ``ids``: they are computed once per
    method and ids (a query fuses twice: to pick the neighbours' anchors, then to rank). The second
    hop adds its weight times its normalised match strength."""
    hop = params.second_hop
    kw = keyword_scores(cands, params)
    if not cands.semantic:
        # Keyword path alone: scaled from 0, so the last of two real matches does not score 0.
        kw_norm = normalise(kw, ids, "minmax", floor=0.0)
        hop_norm = normalise(cands.hop, ids, "minmax", floor=0.0) if hop and cands.hop else {}
        fused = {i: kw_norm[i] + hop * hop_norm[i] for i in ids} if hop_norm else kw_norm
        return fused, kw_norm, {i: 0.0 for i in ids}, 1.0, hop_norm
    key = f"{params.method}/{params.previous_turn if cands.previous else 0}/{params.answers}"
    known = cands.norms.get(key)
    if known is not None and known[:3] == (ids, len(kw), len(cands.vec)):
        kw_norm, vec_norm = known[3], known[4]
    else:
        kw_norm = normalise(kw, ids, params.method)
        vec_norm = normalise(cands.vec, ids, params.method, floor=cands.floor)
        cands.norms[key] = (ids, len(kw), len(cands.vec), kw_norm, vec_norm)
    w = keyword_weight(params, kw)
    hop_norm = normalise(cands.hop, ids, params.method) if hop and cands.hop else {}
    if hop_norm:
        return ({i: w * kw_norm[i] + (1 - w) * vec_norm[i] + hop * hop_norm[i] for i in ids}, kw_norm, vec_norm, w,
                hop_norm)
    return {i: w * kw_norm[i] + (1 - w) * vec_norm[i] for i in ids}, kw_norm, vec_norm, w, hop_norm


def _previous_words(cands: Candidates, params: FusionParams, i: int) -> float:
    """What the question's words in the turn before add to ``i``'s bm25 (before ``previous_turn``), as
    far as that turn asks (``answers``)."""
    extra = cands.previous[i]
    if params.answers:
        extra *= 1.0 - params.answers + params.answers * cands.asks.get(cands.before[i], 0.0)
    return extra


def keyword_scores(cands: Candidates, params: FusionParams) -> dict[int, float]:
    """Each candidate's keyword match strength: its own bm25, plus ``previous_turn`` times what the
    question's words in the turn before add (``SearchService._previous_turn``), as far as that turn
    asks (``answers``)."""
    if not params.previous_turn or not cands.previous:
        return cands.kw
    out = dict(cands.kw)
    for i in cands.previous:
        out[i] = max(0.0, out.get(i, 0.0) + params.previous_turn * _previous_words(cands, params, i))
    return out


def _query_vector(pending: Future[np.ndarray] | None) -> np.ndarray | None:
    """The query's vector, or None when there is none or the model failed on it: a search then
    answers from keywords alone rather than raising (as it does while the model is loading)."""
    if pending is None:
        return None
    try:
        return pending.result()
    except Exception as exc:
        log.warning("query embedding failed (%s); this search uses keywords only", exc)
        return None


def _dots(qvec: np.ndarray, rows: list[tuple[int, bytes]]) -> dict[int, float]:
    """Cosine per id of stored unit vectors (a row of another width is left out)."""
    width = qvec.shape[0] * 4
    return {i: float(np.frombuffer(b, dtype="<f4") @ qvec) for i, b in rows if len(b) == width}


def _common_cap(conn: Any) -> int:
    """A term is common when found in more chunks than this: 1% of them, and ``COMMON_TERM_MIN``."""
    return max(COMMON_TERM_MIN, q.chunk_count_estimate(conn) // 100)
