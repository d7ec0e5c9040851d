"""``vodou projects add NAME PATH`` / ``list`` / ``remove``: the folders that tag terminal captures."""

from __future__ import annotations

import argparse
from pathlib import Path

from vodou_desktop.cli.output import print_json
from vodou_desktop.errors import InvalidInput, NotFound
from vodou_desktop.runtime import Runtime
from vodou_desktop.vault import projects_store
from vodou_desktop.vault.facts import clean_project


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("projects", help="map project names to folders (captures in a folder get its project)")
    psub = p.add_subparsers(dest="projects_command", metavar="ACTION", required=True)
    add = psub.add_parser("add", help="map a project to a folder")
    add.add_argument("name")
    add.add_argument("path", type=Path)
    add.add_argument("--json", action="store_true")
    add.set_defaults(func=cmd_add)
    lst = psub.add_parser("list", help="list projects and their folders")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=cmd_list)
    rm = psub.add_parser("remove", help="forget a project's folder mapping (its memories stay)")
    rm.add_argument("name")
    rm.set_defaults(func=cmd_remove)


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
        rows = rt.vault.read(projects_store.all_projects)
    if args.json:
        print_json([{"name": n, "path": p} for n, p in rows])
        return 0
    if not rows:
        print("no projects")
    for name, path in rows:
        print(f"{name}\t{path or ''}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    with Runtime.open(args.vault, embedder="none") as rt:
        if not rt.vault.write(lambda c, ch: projects_store.remove_project(c, ch, args.name)):
            raise NotFound(f"no project named {args.name!r}")
    print(f"project {args.name} removed")
    return 0
