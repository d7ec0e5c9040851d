"""``vodou projects add NAME PATH`` / ``list`` / ``remove``: the folders that tag terminal captures."""

from __future__ import annotations

import argparse
from pathlib import Path

from vodou_desktop.cli.output import print_json
from vodou_desktop.errors import InvalidInput, NotFound
from vodou_desktop.mcp.projects import all_default_projects, set_default_project
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, projects_store
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import clean_project
from vodou_desktop.vault.query import Scope
from vodou_desktop.words import plural


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("projects", help="map project names to folders (captures in a folder get its project)")
    psub = p.add_subparsers(dest="projects_command", metavar="ACTION", required=True)
    add = psub.add_parser("add", help="map a project to a folder")
    add.add_argument("name")
    add.add_argument("path", type=Path)
    add.add_argument("--json", action="store_true")
    add.set_defaults(func=cmd_add)
    lst = psub.add_parser("list", help="list projects: those mapped to a folder and those that hold memories")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=cmd_list, needs_vault=True)
    rm = psub.add_parser("remove", help="forget a project's folder mapping (its memories stay)")
    rm.add_argument("name")
    rm.set_defaults(func=cmd_remove, needs_vault=True)
    default = psub.add_parser("default", help="the project AI tools use when nothing else says (vodou mcp)")
    default.set_defaults(func=cmd_default, needs_vault=True, name=None, client=None, json=False,
                         default_action="show")
    dsub = default.add_subparsers(dest="default_action", metavar="ACTION")
    show = dsub.add_parser("show", help="the defaults set (also what `vodou projects default` alone shows)")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_default, needs_vault=True)
    set_ = dsub.add_parser("set", help="set the default project")
    set_.add_argument("name", help="the project")
    clear = dsub.add_parser("clear", help="remove the default (for --client, or the one for every AI tool)")
    clear.set_defaults(func=cmd_default, needs_vault=True)
    for action in (set_, clear):
        action.add_argument("--client", help="only for this AI tool (its MCP client name, e.g. claude-code)")
        action.add_argument("--json", action="store_true")
    set_.set_defaults(func=cmd_default, needs_vault=False)


def cmd_add(args: argparse.Namespace) -> int:
    name = clean_project(args.name)
    if name is None:
        raise InvalidInput("project name is empty")
    folder = args.path.expanduser().resolve()
    if not folder.is_dir():
        raise InvalidInput(f"not a folder: {args.path}")
    with Runtime.open(args.vault, embedder="none") as rt:
        rt.vault.write(lambda c, ch: projects_store.add_project(c, ch, name, str(folder)))
    if args.json:
        print_json({"name": name, "path": str(folder)})
    else:
        print(f"project {name} → {folder}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        folders = dict(rt.vault.read(projects_store.all_projects))
        counts = rt.vault.read(lambda c: q.project_counts(c, FactFilter(project=ALL_PROJECTS)))
    names = sorted(set(folders) | set(counts.projects))
    if args.json:  # each scope's count: this project only, and with the global memories
        print_json([{"name": n, "path": folders.get(n), "memories": counts.count(n, Scope.PROJECT_ONLY),
                     "with_global": counts.count(n, Scope.PROJECT_AND_GLOBAL)} for n in names])
        return 0
    if not names:
        print("no projects yet: add a memory with --project NAME, or map a folder with: vodou projects add NAME PATH")
    for name in names:
        folder = folders.get(name)
        print(f"{name}\t{plural(counts.count(name, Scope.PROJECT_ONLY), 'memory')}"
              f" ({counts.count(name, Scope.PROJECT_AND_GLOBAL):,} with the global ones)\t{folder or '(no folder)'}")
    if names:
        print(f"global\t{plural(counts.global_count, 'memory')} (seen from every project)")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        if not rt.vault.write(lambda c, ch: projects_store.remove_project(c, ch, args.name)):
            raise NotFound(f"no project named {args.name!r}")
    print(f"project {args.name} removed")
    return 0


def cmd_default(args: argparse.Namespace) -> int:
    """Set, clear or show the default project for MCP clients (stored in the vault's settings, so the
    app, the CLI and every ``vodou mcp`` process agree)."""
    client = args.client.strip() if args.client else None
    if args.client is not None and not client:
        raise InvalidInput("--client needs the AI tool's name")
    name = clean_project(args.name) if args.default_action == "set" else None
    if args.default_action == "set" and name is None:
        raise InvalidInput("project name is empty")
    with Runtime.open(args.vault, embedder="none") as rt:
        if args.default_action in ("set", "clear"):
            rt.vault.write(lambda c, ch: set_default_project(c, ch, name, client))
        defaults = rt.vault.read(all_default_projects)
    if args.json:
        print_json({"all_clients": defaults.get(None), "clients": {k: v for k, v in defaults.items() if k}})
        return 0
    if not defaults:
        print("no default project: AI tools in an unmapped folder see global memories only")
    for who, name in sorted(defaults.items(), key=lambda kv: (kv[0] is not None, kv[0] or "")):
        print(f"{who or 'every AI tool'}\t{name}")
    return 0
