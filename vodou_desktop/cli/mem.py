"""``vodou mem``: add, search, show, list and page-link facts."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from functools import partial
from typing import Any

from vodou_desktop.cli.ids import add_id_argument
from vodou_desktop.cli.output import describe_fact, ensure_embedded, fact_line, print_json, wrap
from vodou_desktop.errors import InvalidInput, NotFound, PolicyRefused
from vodou_desktop.governance.policy import require
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.pages import host_of, site_host
from vodou_desktop.runtime import Runtime
from vodou_desktop.search.service import MAX_K, SearchResult
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.vault.clock import since_time
from vodou_desktop.vault.entities_store import find_entities
from vodou_desktop.vault.facts import GLOBAL_KINDS, set_page_link
from vodou_desktop.vault.query import Scope, within
from vodou_desktop.vault.revisions import current_id
from vodou_desktop.vault.sources import TIERS
from vodou_desktop.words import FACT_KINDS, LIST_KINDS, score_details, why_matched


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    mem = sub.add_parser("mem", help="add, search and manage memories: forget hides (undoable), erase deletes for good")
    msub = mem.add_subparsers(dest="mem_command", metavar="ACTION", required=True)

    add = msub.add_parser("add", help="remember something")
    add.add_argument("text", help="the memory's text; - reads it from standard input")
    add.add_argument("--project", help="project the memory belongs to (default: global)")
    add.add_argument("--scope", help="scope label (a search boost, not a wall)")
    add.add_argument("--kind", default="fact", choices=FACT_KINDS,
                     help="fact (default), preference (always global), decision, plan, instruction (a standing "
                          "one: \"always…\") or note")
    add.add_argument("--url", help="page the memory came from (a full URL, or host/path)")
    add.add_argument("--title", help="title of that page")
    add.add_argument("--tier", default="first_party", choices=TIERS)
    add.add_argument("--json", action="store_true")
    add.set_defaults(func=cmd_add)

    search = msub.add_parser("search", help="search by keyword and meaning (operators: project:, kind:, site:,"
                                            " before:, after:)",
                             description="Search by keyword and meaning. The query may hold operators that narrow it: "
                                         "project:NAME (that project only; project:NAME+global with the global "
                                         "memories; project:global the global ones alone), kind:KIND, site:HOST, "
                                         "after:WHEN and before:WHEN (a date such as 2024-05-01, a month, a year, or "
                                         "7d / 12h back from now). Operators alone list what they let through.")
    search.add_argument("query")
    search.add_argument("--project", help="search inside this project (its memories plus global ones)")
    _scope_flags(search)
    search.add_argument("--scope", help="boost memories with this scope")
    search.add_argument("-k", type=int, default=10, help="number of results (default 10)")
    search.add_argument("--entity", metavar="NAME", help="only memories that mention this person or thing")
    search.add_argument("--explain", action="store_true", help="show every factor of each score")
    search.add_argument("--json", action="store_true")
    search.set_defaults(func=cmd_search, needs_vault=True, without_vault=cmd_search_empty)

    show = msub.add_parser("show", help="show one memory")
    add_id_argument(show)
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_show, needs_vault=True)

    lst = msub.add_parser("list", help="list memories, newest first")
    lst.add_argument("--host", help="only memories from this site (and its subdomains); a URL works too")
    lst.add_argument("--project", help="this project's memories and the global ones (--no-global: its own only)")
    _scope_flags(lst)
    lst.add_argument("--kind", choices=LIST_KINDS, help="only memories of this kind")
    lst.add_argument("--since", metavar="WHEN", help="only memories saved since: a date (2026-03-01) or 7d / 12h")
    lst.add_argument("--pinned", action="store_true", help="only pinned memories")
    lst.add_argument("--tool", help="only memories written by this tool (an MCP client's name, cli, claude-code, …)")
    lst.add_argument("--forgotten", action="store_true", help="include forgotten memories")
    lst.add_argument("-n", "--limit", type=int, default=50, help="how many to show (default 50)")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=cmd_list, needs_vault=True, without_vault=cmd_list_empty)

    link = msub.add_parser("page-link", help="link a memory to a page (wins over any page: token)")
    add_id_argument(link)
    link.add_argument("url")
    link.add_argument("--json", action="store_true")
    link.set_defaults(func=cmd_page_link, needs_vault=True)

    # More `mem` actions live in their own modules (cli/mem_*.py), each with register_mem(msub).
    import vodou_desktop.cli as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("mem_"):
            importlib.import_module(f"vodou_desktop.cli.{info.name}").register_mem(msub)


def _scope_flags(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--no-global", action="store_true", help="with --project: that project's own memories only")
    scope.add_argument("--global-only", action="store_true", help="only the global memories (seen from every project)")


def scoped(args: argparse.Namespace, **fields: Any) -> FactFilter:
    """The owner's filter narrowed to ``--project`` as ``--no-global`` / ``--global-only`` say."""
    owner = FactFilter(project=ALL_PROJECTS, **fields)
    if args.global_only:
        if args.project:
            raise InvalidInput("--global-only shows the global memories of every project: leave out --project")
        return within(owner, None, Scope.GLOBAL_ONLY)
    if args.no_global and not args.project:
        raise InvalidInput("--no-global goes with --project (that project's own memories)")
    if not args.project:
        return owner
    return within(owner, args.project, Scope.PROJECT_ONLY if args.no_global else Scope.PROJECT_AND_GLOBAL)


NO_MEMORIES_YET = "no memories yet: add one with `vodou mem add TEXT`, or import (vodou import --help)"


def read_text(text: str) -> str:
    """The memory's text; ``-`` reads standard input (``echo … | vodou mem add -``)."""
    if text != "-":
        return text
    data = sys.stdin.read()
    if not data.strip():
        raise InvalidInput("nothing on standard input to remember")
    return data


def page_url(url: str | None) -> str | None:
    """A page URL as given, or ``host/path`` read as https (a bare host gets ``https://``)."""
    if url is None:
        return None
    url = url.strip()
    if url and "://" not in url and ":" not in url.split("/")[0]:
        url = "https://" + url
    return url


def _open(args: argparse.Namespace, model: bool = True) -> Runtime:
    return Runtime.open(args.vault, embedder=None if model else "none")


def cmd_add(args: argparse.Namespace) -> int:
    # No model here: adding stays instant; the next search (or the running app) embeds it.
    text, url = read_text(args.text), page_url(args.url)
    with _open(args, model=False) as rt:
        if url:  # a page attached: the site mode decides, here as in the browser
            _require_collect(rt, url)
        origin = Origin(kind="cli", tier=args.tier, url=url, title=args.title, tool="cli")
        fact_id = remember(rt.vault, text, origin, kind=args.kind, project=args.project, scope=args.scope)
        fact = rt.vault.read(lambda c: q.get_fact(c, fact_id, FactFilter(project=ALL_PROJECTS)))
        if args.json:
            print_json({**fact.as_json(), "secrets_removed": list(fact_id.secrets_removed)})
        else:
            print(f"remembered #{fact.id}" + (f" in {fact.project}" if fact.project else " (global)"))
            if fact_id.note:
                print(f"{fact_id.note}: the memory holds [secret removed: …] in its place")
        if args.project and fact.project is None and args.kind in GLOBAL_KINDS:
            print(f"vodou: note: a {args.kind} is about you, so it stays global (--project {args.project} "
                  "was not applied)", file=sys.stderr)
    return 0


def _require_collect(rt: Runtime, url: str) -> None:
    try:
        require(SiteModes(rt.vault), url, "write")
    except PolicyRefused as exc:
        raise PolicyRefused(f"{exc} (to allow it: vodou sites set {host_of(url)} collect)") from exc


def cmd_search(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise InvalidInput("-k must be at least 1")
    filt = scoped(args)
    with _open(args) as rt:
        if not rt.vault.read(lambda c: q.count_facts(c, FactFilter(project=ALL_PROJECTS))):
            return _no_memories_yet(args, {"semantic": False, "note": NO_MEMORIES_YET, "results": []})
        semantic = ensure_embedded(rt, quiet=args.json) and rt.search.semantic
        if args.entity:
            results = _entity_results(rt, args, filt)
        else:
            results = rt.search.search(args.query, filt, scope=args.scope, k=args.k, operators=True)
        if args.json:
            print_json({"semantic": semantic, "note": None if semantic else rt.embedder.why_not_ready(),
                        "results": [r.as_json(explain=args.explain) for r in results]})
            return 0
        if not results:
            print("no matching memories")
        for r in results:
            print(fact_line(r.fact, r.score))
            for label, turn in (("before", r.before), ("after", r.after)):
                if turn is not None:
                    print(f"         {label}: #{turn.id} {turn.text}")
            if args.explain:
                why = why_matched(r.fact, r.factors, args.query)
                print(wrap(f"why: {why}", indent="        "))
                print(wrap("; ".join(f"{name} {value}" for name, value in score_details(r.factors)),
                           indent="        "))
    return 0


def _entity_results(rt: Runtime, args: argparse.Namespace, filt: FactFilter) -> list[SearchResult]:
    """Search, then keep the facts linked to the entity (its name or an alias)."""
    entities = rt.vault.read(lambda c: find_entities(c, args.entity))
    if not entities:
        raise NotFound(f"no person or thing called {args.entity!r} in memory")
    linked = {f.id for e, _ in entities
              for f in rt.vault.read(partial(q.facts_for_entity, entity_id=e, f=filt, limit=100_000))}
    results = rt.search.search(args.query, filt, scope=args.scope, k=MAX_K, operators=True)
    return [r for r in results if r.fact.id in linked][: args.k]


OWNER_EVERYTHING = FactFilter(project=ALL_PROJECTS, include_forgotten=True, include_superseded=True)


def cmd_show(args: argparse.Namespace) -> int:
    with _open(args, model=False) as rt:
        fact, history, current, message = rt.vault.read(lambda c: (
            q.get_fact(c, args.id, OWNER_EVERYTHING), q.revision_history(c, args.id, OWNER_EVERYTHING),
            current_id(c, args.id), q.source_message(c, args.id, OWNER_EVERYTHING)))
        if args.json:
            print_json({**fact.as_json(), "history": [h.as_json() for h in history[:-1]],
                        "message": message.as_json() if message else None})
            return 0
        for line in describe_fact(fact, history, current, message):
            print(line)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise InvalidInput("--limit must be at least 1")
    filt = scoped(args, include_forgotten=args.forgotten, host=site_host(args.host) if args.host else None,
                  kinds=(args.kind,) if args.kind else (), tiers=("pinned",) if args.pinned else (),
                  saved_since=since_time(args.since) if args.since else None, tools=(args.tool,) if args.tool else ())
    with _open(args, model=False) as rt:
        facts, total, held = rt.vault.read(lambda c: (
            q.list_facts(c, filt, limit=args.limit), q.count_facts(c, filt),
            q.count_facts(c, FactFilter(project=ALL_PROJECTS, include_forgotten=True))))
        if not held:
            return _no_memories_yet(args, [])
        if args.json:
            print_json([f.as_json() for f in facts])
            return 0
        if not facts:
            print("no memories match")
        for fact in facts:
            print(fact_line(fact))
        if 0 < len(facts) < total:  # never a short list without saying so
            print(f"{len(facts):,} of {total:,} shown (-n to see more)")
    return 0


def _no_memories_yet(args: argparse.Namespace, empty: Any) -> int:
    """A vault with no memory yet (or none made yet): said so, and nothing else is wrong (exit 0)."""
    if args.json:
        print_json(empty)
    else:
        print(NO_MEMORIES_YET)
    return 0


def cmd_list_empty(args: argparse.Namespace) -> int:
    """``mem list`` on a fresh install (no vault made yet): no memories, which is no error."""
    scoped(args)  # the same arguments are refused the same way
    return _no_memories_yet(args, [])


def cmd_search_empty(args: argparse.Namespace) -> int:
    scoped(args)
    return _no_memories_yet(args, {"semantic": False, "note": NO_MEMORIES_YET, "results": []})


def cmd_page_link(args: argparse.Namespace) -> int:
    with _open(args, model=False) as rt:
        _require_collect(rt, args.url)
        rt.vault.write(lambda c, ch: set_page_link(c, ch, args.id, args.url, "manual"))
        fact = rt.vault.read(lambda c: q.get_fact(c, args.id, FactFilter(project=ALL_PROJECTS,
                                                                       include_forgotten=True)))
        if args.json:
            print_json(fact.as_json())
        else:
            print(f"#{fact.id} linked to {fact.page_url}")
    return 0
