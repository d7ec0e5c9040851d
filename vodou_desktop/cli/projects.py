"""``vodou projects add NAME PATH`` / ``list`` / ``remove``: the folders that tag terminal captures."""

from __future__ import annotations

import argparse
from pathlib import Path

from vodou_desktop.cli.output import print_json
from vodou_desktop.errors import InvalidInput, NotFound
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, projects_store
from vodou_desktop.vault import query as q
from vodou_desktop.vault.facts import clean_project
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
        counts = rt.vault.read(lambda c: q.count_facts_by_project(c, FactFilter(project=ALL_PROJECTS)))
    names = sorted(set(folders) | set(counts))
    if args.json:
        print_json([{"name": n, "path": folders.get(n), "memories": counts.get(n, 0)} for n in names])
        return 0
    if not names:
        print("no projects yet: add a memory with --project NAME, or map a folder with: vodou projects add NAME PATH")
    for name in names:
        folder = folders.get(name)
        print(f"{name}\t{plural(counts.get(name, 0), 'memory')}\t{folder or '(no folder)'}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        if not rt.vault.write(lambda c, ch: projects_store.remove_project(c, ch, args.name)):
            raise NotFound(f"no project named {args.name!r}")
    print(f"project {args.name} removed")
    return 0
