"""SEARCH-2: tier weights, duplicate demotion and scope boost, read from `--explain`."""

from __future__ import annotations

import json

from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault


def _explain(vault: Vault, query: str, *extra: str) -> list[dict]:
    result = run_cli("--vault", str(vault.path), "mem", "search", query, "--explain", "--json", *extra)
    assert result.code == 0, result.err
    return json.loads(result.out)["results"]


def test_tier_weights_order_equal_matches(vault: Vault, cli_model: object) -> None:
    text = "the wombat burrow is behind the shed"
    ids = {tier: remember(vault, text, Origin(kind="cli", tier=tier)) for tier in ("import", "capture", "first_party")}
    rows = _explain(vault, "wombat burrow")
    assert [r["id"] for r in rows] == [ids["first_party"], ids["capture"], ids["import"]]
    weights = {r["tier"]: r["explain"]["tier_weight"] for r in rows}
    assert weights == {"first_party": 1.0, "capture": 0.925, "import": 0.85}
    for r in rows:
        e = r["explain"]
        assert abs(e["shared"] - (e["fused"] + e["from_before"] + e["from_after"] + e["from_nearby"])) < 1e-5
        assert abs(e["final"] - e["shared"] * e["tier_weight"] * e["kind_weight"] * e["duplicate_weight"]
                   * e["same_message_weight"] * e["scope_weight"] * e["coverage_weight"] * e["speaker_weight"]
                   * e["asks_weight"]) < 1e-5


def test_non_canonical_duplicate_is_demoted(vault: Vault, cli_model: object) -> None:
    a = remember(vault, "the heron nests by the mill pond", Origin(kind="cli"))
    b = remember(vault, "the heron nests by the mill pond", Origin(kind="cli"))
    vault.write(lambda c, ch: c.execute("UPDATE chunks SET fact_group = ?, is_canonical = 0 WHERE id = ?", (a, b)))
    rows = _explain(vault, "heron mill pond")
    assert [r["id"] for r in rows] == [a, b]
    assert rows[1]["explain"]["duplicate_weight"] == 0.4 and rows[0]["explain"]["duplicate_weight"] == 1.0
    assert abs(rows[1]["score"] - 0.4 * rows[0]["score"]) < 1e-5


def test_matching_scope_doubles_the_score(vault: Vault, cli_model: object) -> None:
    work = remember(vault, "the standup moved to ten thirty", Origin(kind="cli"), scope="work")
    home = remember(vault, "the standup moved to ten thirty", Origin(kind="cli"), scope="home")
    rows = _explain(vault, "standup moved", "--scope", "home")
    assert [r["id"] for r in rows] == [home, work]
    assert rows[0]["explain"]["scope_weight"] == 2.0 and rows[1]["explain"]["scope_weight"] == 1.0


def test_json_fields_are_stable(vault: Vault, cli_model: object) -> None:
    remember(vault, "the kettle descaler is under the sink", Origin(kind="cli", url="https://home.example/x"))
    row = _explain(vault, "kettle")[0]
    for key in ("id", "text", "project", "scope", "tier", "source_url", "source_host", "created_at", "valid_at",
                "score"):
        assert key in row
    assert row["source_host"] == "home.example"
    assert row["created_at"].endswith("+00:00") and row["valid_at"] == row["created_at"]


def test_keyword_path_never_scores_a_real_match_zero(keyword_search) -> None:  # type: ignore[no-untyped-def]
    from vodou_desktop.vault import FactFilter

    vault = keyword_search.vault
    remember(vault, "The grey heron is the commonest heron in Europe", Origin(kind="cli"))
    remember(vault, "A heron eats fish", Origin(kind="cli"))
    fused = [r.factors["fused"] for r in keyword_search.search("heron", FactFilter())]
    assert len(fused) == 2 and min(fused) > 0 and max(fused) == 1.0
