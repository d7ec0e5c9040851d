"""``vodou mem entity NAME``: the memories linked to a person, place or organisation (ING-4).

NAME may be the entity's full name or one of its aliases. ``--scan`` (re)finds entities in every
memory first.
"""

from __future__ import annotations

import argparse
from functools import partial

from vodou_desktop.cli.output import fact_line, print_json
from vodou_desktop.errors import NotFound
from vodou_desktop.ingest.entities import extract_entities
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import entities_store as es
from vodou_desktop.vault import query as q


def register_mem(msub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = msub.add_parser("entity", help="list the memories linked to an entity (name or alias)")
    p.add_argument("name")
    p.add_argument("--project", help="only this project and global memories")
    p.add_argument("--scan", action="store_true", help="find entities in every memory first")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_entity, needs_vault=True)


def cmd_entity(args: argparse.Namespace) -> int:
    filt = FactFilter(project=args.project or ALL_PROJECTS)
    with Runtime.open(args.vault, embedder="none") as rt:
        if args.scan:
            extract_entities(rt.vault)
        matches = rt.vault.read(partial(es.find_entities, name=args.name))
        if not matches:
            raise NotFound(f"no entity called {args.name!r} (try --scan)")
        result = [(name, rt.vault.read(partial(q.facts_for_entity, entity_id=eid, f=filt))) for eid, name in matches]
    if args.json:
        print_json([{"entity": name, "facts": [f.as_json() for f in facts]} for name, facts in result])
        return 0
    for name, facts in result:
        print(f"{name}:")
        for fact in facts:
            print("  " + fact_line(fact))
    return 0
