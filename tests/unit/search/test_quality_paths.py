"""Issue 10's acceptance on the search paths: stemming, question words, k-independence, conversation
threads and neighbours (with every hard predicate), and the upgrade of a vault at schema 0002."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, remember, save_document
from vodou_desktop.ingest.window import Entry, capture_conversation
from vodou_desktop.search import keyword
from vodou_desktop.search.backfill import backfill
from vodou_desktop.search.service import SearchService
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import query as q
from vodou_desktop.vault.connection import open_connection
from vodou_desktop.vault.migrations import migrate
from vodou_desktop.vault.schema import MIGRATIONS

DAY = "2023-05-07"


def _turns(vault: Vault, turns: list[str], project: str = "talk", day: str = DAY) -> list[int]:
    """A conversation stored the plain way: one remember() per turn, in order, with its date."""
    return [remember(vault, t, Origin(kind="turn", tool="harness"), project=project, valid_at=day) for t in turns]


# -- keyword path ---------------------------------------------------------------------------------

def test_stemming_finds_other_forms_of_a_word(keyword_search: SearchService) -> None:
    heron = remember(keyword_search.vault, "Herons nest in colonies", Origin(kind="cli"))
    research = remember(keyword_search.vault, "Researching adoption agencies", Origin(kind="cli"))
    remember(keyword_search.vault, "A colony of ants", Origin(kind="cli"))
    for word, wanted in (("heron", heron), ("research", research)):
        results = keyword_search.search(word, FactFilter())
        assert results[0].fact.id == wanted
        # anything after it holds no form of the word: found by the second pass ("colonies" -> "colony")
        assert all(r.factors["keyword_bm25"] is None for r in results[1:])


def test_question_words_are_never_required(keyword_search: SearchService) -> None:
    target = remember(keyword_search.vault, "Melanie painted a sunrise over the lake", Origin(kind="cli"))
    results = keyword_search.search("What did she paint, and how many did he ever see?", FactFilter())
    assert [r.fact.id for r in results] == [target]
    assert keyword.terms("How many did she paint?") == ["paint"]
    assert keyword.terms("did he") == ["did", "he"]  # nothing else left: kept, so the query still means something


def test_a_plain_project_name_is_accepted_as_the_filter(keyword_search: SearchService) -> None:
    inside = remember(keyword_search.vault, "zebracorn notes", Origin(kind="cli"), project="A")
    remember(keyword_search.vault, "zebracorn secrets", Origin(kind="cli"), project="B")
    assert [r.fact.id for r in keyword_search.search("zebracorn", "A")] == [inside]


WORDS = ("heron lake colony paint sunrise adoption agency research violin lesson wombat garden river "
         "market bread cheese train ticket museum concert guitar school teacher camping trip").split()


def _seed_vault(vault: Vault, n: int = 160) -> None:
    rng = random.Random(7)
    for i in range(n):
        words = rng.sample(WORDS, rng.randint(3, 8))
        text = f"{'AB'[i % 2]}: " + " ".join(words)
        day = f"2023-0{1 + (i // 40)}-1{i % 3}"
        remember(vault, text, Origin(kind="turn", tool="seed"), project=("p", "q")[i // 80], valid_at=day)


QUERIES = st.lists(st.sampled_from([*WORDS, "did", "she", "how", "many", "May", "2023", "zzz"]),
                   min_size=1, max_size=5).map(" ".join)


@pytest.fixture
def seeded_keyword(keyword_search: SearchService) -> SearchService:
    _seed_vault(keyword_search.vault)
    return keyword_search


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=QUERIES, project=st.sampled_from(["p", "q", None]))
def test_keyword_top_10_does_not_depend_on_k(seeded_keyword: SearchService, text: str, project: str | None) -> None:
    filt = FactFilter(project=project)
    top10 = [r.fact.id for r in seeded_keyword.search(text, filt, k=10)]
    top200 = [r.fact.id for r in seeded_keyword.search(text, filt, k=200)]
    assert top10 == top200[:10]


@pytest.fixture
def seeded_hybrid(hybrid_search: SearchService) -> SearchService:
    _seed_vault(hybrid_search.vault, 120)
    assert hybrid_search.embedder is not None
    backfill(hybrid_search.vault, hybrid_search.embedder)
    return hybrid_search


@pytest.mark.model
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=QUERIES, project=st.sampled_from(["p", None]))
def test_hybrid_top_10_does_not_depend_on_k(seeded_hybrid: SearchService, text: str, project: str | None) -> None:
    filt = FactFilter(project=project)
    top10 = [(r.fact.id, round(r.score, 9)) for r in seeded_hybrid.search(text, filt, k=10)]
    top200 = [(r.fact.id, round(r.score, 9)) for r in seeded_hybrid.search(text, filt, k=200)]
    assert top10 == top200[:10]


def test_the_session_date_is_matched_in_words(keyword_search: SearchService) -> None:
    may = _turns(keyword_search.vault, ["A: We finally moved the piano"], day="2023-05-07")
    _turns(keyword_search.vault, ["A: We finally moved the sofa"], project="other", day="2023-06-01")
    results = keyword_search.search("what did we move in May 2023", FactFilter(project=ALL_PROJECTS))
    assert results[0].fact.id == may[0]


# -- conversation threads -------------------------------------------------------------------------

def _threads(vault: Vault) -> list[tuple[int, int, int]]:
    sql = "SELECT id, thread_id, thread_seq FROM chunks ORDER BY id"
    return vault.read(lambda c: [tuple(r) for r in c.execute(sql)])


def test_plain_sequential_turns_form_one_thread_and_a_change_starts_another(vault: Vault) -> None:
    a, b, c = _turns(vault, ["A: one", "B: two", "A: three"])
    (d,) = _turns(vault, ["A: next day"], day="2023-05-08")  # another session
    (e,) = _turns(vault, ["A: elsewhere"], project="other", day="2023-05-08")  # another conversation
    f = remember(vault, "a note with no date", Origin(kind="turn", tool="harness"), project="talk")
    assert _threads(vault) == [(a, a, 0), (b, a, 1), (c, a, 2), (d, d, 0), (e, e, 0), (f, f, 0)]


def test_a_captured_conversation_is_one_thread_in_order(vault: Vault) -> None:
    turns = [Entry(f"I prefer tea number {i} in the morning", "panel", None, None, f"2023-05-07T10:0{i}:00+00:00",
                   f"t{i}") for i in range(3)]
    report = capture_conversation(vault, turns, project="p", conversation_id="c1",
                                  extractor=lambda text: _one_bullet(text))
    # the person's turns, kept whole, are one conversation in order; what was distilled from them another
    turns_at, distilled_at = report.turn_ids[0], report.distilled_ids[0]
    assert sorted(t[1:] for t in _threads(vault)) == sorted(
        [(turns_at, 0), (turns_at, 1), (turns_at, 2), (distilled_at, 0), (distilled_at, 1), (distilled_at, 2)])


def _one_bullet(text: str) -> list:  # type: ignore[type-arg]
    from vodou_desktop.ingest.extract import Bullet
    return [Bullet(text, "fact")]


def test_a_reply_comes_back_as_the_neighbour_of_the_matched_question(keyword_search: SearchService) -> None:
    vault = keyword_search.vault
    q_id, reply, later = _turns(vault, ["Caroline: Which adoption agencies did you look into?",
                                        "Melanie: The two on Elm Street, both very welcoming.",
                                        "Caroline: Lovely, see you Sunday."])
    results = keyword_search.search("adoption agencies", FactFilter(project="talk"))
    # the reply first (found through its question; the question only asks), its question beside it
    assert results[0].fact.id == reply and results[0].before is not None and results[0].before.id == q_id
    asked = next(r for r in results if r.fact.id == q_id)
    assert asked.after is not None and asked.after.id == reply and asked.before is None
    row = asked.as_json()
    assert row["neighbours"]["after"]["text"].startswith("Melanie: The two on Elm Street")


def test_a_reply_takes_a_share_of_the_question_it_answers(vault: Vault) -> None:
    from vodou_desktop.search.embedder import Embedder
    from vodou_desktop.search.fusion import FusionParams
    from vodou_desktop.search.vectors import VectorIndex

    q_id, reply = _turns(vault, ["A: Where did you buy the kayak?", "B: At the harbour shop, last spring."])
    service = SearchService(vault, Embedder("none"), VectorIndex(vault), FusionParams(before_share=0.5))
    results = service.search("kayak", FactFilter(project="talk"))
    assert [r.fact.id for r in results] == [q_id, reply]
    assert results[1].factors["from_before"] == pytest.approx(0.5) and results[1].factors["before_id"] == q_id


def test_neighbours_honour_the_wall_soft_delete_and_documents(vault: Vault) -> None:
    a, b, c, d = _turns(vault, ["A: first", "B: second", "A: third", "B: fourth"])
    vault.write(lambda conn, ch: conn.execute("UPDATE chunks SET invalid_at = 'now' WHERE id = ?", (c,)))
    doc = save_document(vault, "a document text", Origin(kind="library", url="https://docs.example/a", title="Doc"))
    doc_chunk = vault.read(lambda conn: conn.execute("SELECT id FROM chunks WHERE document_id = ?",
                                                     (doc,)).fetchone()[0])
    # a document chunk placed into the thread by hand must still never come back
    vault.write(lambda conn, ch: conn.execute("UPDATE chunks SET thread_id = ?, thread_seq = 4 WHERE id = ?",
                                              (a, doc_chunk)))
    (other,) = _turns(vault, ["A: in another project"], project="secret")
    vault.write(lambda conn, ch: conn.execute("UPDATE chunks SET thread_id = ?, thread_seq = 5 WHERE id = ?",
                                              (a, other)))

    def neighbours(f: FactFilter) -> list[tuple[int, int, int]]:
        return vault.read(lambda conn: q.thread_neighbour_ids(conn, [a, b, c, d, doc_chunk, other], f, span=2))

    talk = neighbours(FactFilter(project="talk"))
    assert (b, 1, c) not in talk and (d, -1, c) not in talk  # forgotten
    assert all(doc_chunk not in (x, y) and other not in (x, y) for x, _, y in talk)  # document, other project
    assert (a, 1, b) in talk and (b, -1, a) in talk and (b, 2, d) in talk
    assert all(x != c for x, _, _ in talk)  # a forgotten anchor has no neighbours
    everything = neighbours(FactFilter(project=ALL_PROJECTS, include_forgotten=True))
    assert (b, 1, c) in everything and all(doc_chunk not in (x, y) for x, _, y in everything)


def test_mem_search_shows_the_neighbours(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    _turns(vault, ["A: Which trail did you hike?", "B: The ridge trail above the quarry."])
    out = run_cli("--vault", str(vault.path), "mem", "search", "hike", "--project", "talk")
    assert out.code == 0, out.err
    assert "B: The ridge trail above the quarry." in out.out
    data = json.loads(run_cli("--vault", str(vault.path), "mem", "search", "hike", "--project", "talk",
                              "--json").out)["results"]
    asked, answer = "A: Which trail did you hike?", "B: The ridge trail above the quarry."
    by_text = {r["text"]: r for r in data}
    assert by_text[asked]["neighbours"]["after"]["text"] == answer
    assert by_text[answer]["neighbours"]["before"]["text"] == asked


# -- upgrading a vault written at schema 0002 --------------------------------------------------------

def test_a_0002_vault_migrates_rebuilds_the_index_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = open_connection(path)
    migrate(conn, path, MIGRATIONS[:2])
    texts = ["Herons nest in colonies", "Researching adoption agencies", "the heron at the pond",
             "A: Did you go hiking?", "B: Yes, up the ridge."]
    conn.execute("INSERT INTO memory_sources(id, kind, tier, created_at) VALUES (1, 'cli', 'first_party', 'x')")
    for i, text in enumerate(texts, start=1):
        conn.execute("INSERT INTO chunks(id, text, source_id, project_id, created_at, valid_at) VALUES (?,?,1,?,?,?)",
                     (i, text, "p", f"2026-01-01T00:00:0{i}+00:00", "2023-05-07" if i > 3 else None))
    before_heron = [r[0] for r in conn.execute("SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'heron'")]
    before_count = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    conn.close()
    assert before_heron == [3]

    with Vault.open(path) as vault:
        from vodou_desktop.search.embedder import Embedder
        from vodou_desktop.search.vectors import VectorIndex

        service = SearchService(vault, Embedder("none"), VectorIndex(vault))
        found = {r.fact.id for r in service.search("heron", "p")}
        assert set(before_heron) < found == {1, 3}
        assert [r.fact.id for r in service.search("research", "p")] == [2]
        assert vault.read(lambda c: c.execute("SELECT count(*) FROM chunks").fetchone()[0]) == before_count
        assert vault.read(lambda c: c.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
                          .fetchall()) == []
        assert _threads(vault)[3:] == [(4, 4, 0), (5, 4, 1)]
        hike = next(r for r in service.search("hiking", "p") if r.fact.id == 4)
        assert hike.after is not None and hike.after.id == 5
