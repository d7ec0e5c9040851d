"""``vodou stats [--json]``: what the vault holds, in a few lines (memories, projects, kinds, sites)."""

from __future__ import annotations

import argparse
from typing import Any

from vodou_desktop import config
from vodou_desktop.cli.output import print_json
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.vault.clock import now_iso
from vodou_desktop.words import LIST_KINDS, plural

OWNER = FactFilter(project=ALL_PROJECTS)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("stats", help="how many memories, by project, kind and site")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats, needs_vault=True)


def read_stats(conn: Any) -> dict[str, Any]:
    total = q.count_facts(conn, OWNER)
    by_project = q.count_facts_by_project(conn, OWNER)
    kinds = {k: q.count_facts(conn, FactFilter(project=ALL_PROJECTS, kinds=(k,))) for k in LIST_KINDS}
    kinds["other"] = total - sum(kinds.values())
    return {
        "memories": total,
        "global": total - sum(by_project.values()),
        "projects": by_project,
        "kinds": {k: n for k, n in kinds.items() if n},
        "pinned": q.count_facts(conn, FactFilter(project=ALL_PROJECTS, tiers=("pinned",))),
        "forgotten": q.count_facts(conn, FactFilter(project=ALL_PROJECTS, include_forgotten=True)) - total,
        "sites": len(q.count_facts_by_host(conn, OWNER)),
        "library_pages": len(q.list_documents(conn, OWNER, limit=1_000_000)),
        "waiting_for_embedding": q.unembedded_before(conn, now_iso(), limit=0)[0],
    }


def meaning_is_on() -> bool:
    """Search by meaning as this command's environment and the settings have it (VODOU_EMBEDDER wins)."""
    return config.embedder_choice(config.load()) != "none"


def cmd_stats(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        stats = {**rt.vault.read(read_stats), "search_by_meaning": "on" if meaning_is_on() else "off"}
    if args.json:
        print_json(stats)
        return 0
    print(f"{plural(stats['memories'], 'memory')}: {stats['global']} global"
          + "".join(f", {n} in {p}" for p, n in stats["projects"].items()))
    if stats["kinds"]:
        print("kinds: " + ", ".join(plural(n, k) for k, n in stats["kinds"].items()))
    print(f"{stats['pinned']} pinned, {stats['forgotten']} forgotten (undoable), "
          f"from {plural(stats['sites'], 'site')}, {plural(stats['library_pages'], 'Library page')}")
    waiting = stats["waiting_for_embedding"]
    if stats["search_by_meaning"] == "off":
        print("search by meaning is off: search finds memories by their words"
              + (f" ({waiting} would be embedded when it is turned on)" if waiting else ""))
    elif waiting:
        print(f"{waiting} waiting to be embedded for search by meaning "
              "(the app does it, or the next `vodou mem search`)")
    return 0
