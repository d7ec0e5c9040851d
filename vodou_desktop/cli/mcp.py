"""``vodou mcp``: serve the vault to AI tools over MCP on stdio (``--project`` pins it to one
project); ``vodou mcp install CLIENT`` / ``uninstall CLIENT`` merge it into a client's own
configuration file; ``--print-config CLIENT`` prints the entry to paste by hand."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from vodou_desktop.cli.output import print_json
from vodou_desktop.mcp import install
from vodou_desktop.mcp.client_config import server_command
from vodou_desktop.vault.facts import clean_project

CLIENT_NAMES = list(install.CLIENTS)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("mcp", help="serve memory to AI tools (Model Context Protocol, stdio)",
                       description="Serve the vault to MCP clients (Claude Desktop, Claude Code, Cursor, VS Code,"
                                   " Windsurf, Codex, Zed, Gemini CLI) over stdio. Started by the client, not by hand;"
                                   " `vodou mcp install CLIENT` sets a client up.")
    p.add_argument("--print-config", metavar="CLIENT", choices=CLIENT_NAMES,
                   help=f"print the configuration entry for a client: {', '.join(CLIENT_NAMES)}")
    p.add_argument("--project", metavar="NAME",
                   help="pin this server to one project: every call searches it (and global memories) only")
    p.set_defaults(func=cmd_mcp)
    msub = p.add_subparsers(dest="mcp_command", metavar="ACTION")
    for action, text in (("install", "add Vodou to an AI tool's MCP configuration (keeps everything else)"),
                         ("uninstall", "remove Vodou from an AI tool's MCP configuration")):
        a = msub.add_parser(action, help=text)
        a.add_argument("client", choices=CLIENT_NAMES, metavar="CLIENT", help=", ".join(CLIENT_NAMES))
        a.add_argument("--dry-run", action="store_true", help="print the change, write nothing")
        a.add_argument("--config", metavar="FILE", help="the client's configuration file (default: its usual place)")
        if action == "install":
            a.add_argument("--project", dest="install_project", metavar="NAME",
                           help="pin the installed server to one project")
        a.add_argument("--json", action="store_true")
        a.set_defaults(func=cmd_install if action == "install" else cmd_uninstall)


def _command(args: argparse.Namespace, project: str | None) -> tuple[str, list[str], dict[str, str]]:
    command, cmd_args = server_command(vault=args.vault, project=clean_project(project) if project else None)
    return command, cmd_args, install.server_env()


def cmd_install(args: argparse.Namespace) -> int:
    command, cmd_args, env = _command(args, args.install_project)
    path = _path(args)
    change = install.plan_install(args.client, command, cmd_args, env, path)
    return _report(args, change, "install", install.claude_add_command(command, cmd_args, env)
                   if args.client == "claude-code" else None)


def cmd_uninstall(args: argparse.Namespace) -> int:
    return _report(args, install.plan_uninstall(args.client, _path(args)), "uninstall", None)


def _path(args: argparse.Namespace) -> Path:
    return Path(args.config).expanduser() if args.config else install.config_path(args.client)


def _report(args: argparse.Namespace, change: install.Change, action: str, claude: str | None) -> int:
    title = install.CLIENTS[args.client].title
    if not args.dry_run:
        change = install.apply(change)
    if args.json:
        print_json({"client": args.client, "path": str(change.path), "changed": change.changed,
                    "dry_run": args.dry_run, "written": str(change.target) if change.changed else None,
                    "backup": str(change.backup) if change.backup else None,
                    "after": change.after if args.dry_run else None, "claude_command": claude})
        return 0
    if not change.changed:
        print(f"{title}: nothing to change in {change.path}"
              f" (Vodou is {'already set up' if action == 'install' else 'not set up'} there)")
    elif args.dry_run:
        print(f"{title}: would write {change.path}" + (f" (keeping {change.path}.bak)" if change.before else "")
              + ":\n" + (change.after or ""))
    else:
        line = f"{title}: Vodou {'set up' if action == 'install' else 'removed'} in {change.path}"
        if change.through_link:
            line += f" (written to {change.target}, where the link points; the link is kept)"
        if change.backup:
            line += f"; the previous file is {change.backup}"
        print(line + (". Restart the client to use it." if action == "install" else ""))
    if claude:
        print(f"The same with Claude Code's own command: {claude}")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    if args.print_config:
        command, cmd_args, env = _command(args, args.project)
        print(install.snippet(args.print_config, command, cmd_args, env))
        where = install.config_path(args.print_config)
        print(f"Add it to {install.CLIENTS[args.print_config].title}'s {where}, or run: vodou mcp install"
              f" {args.print_config}", file=sys.stderr)
        return 0
    from vodou_desktop.mcp.server import run_stdio  # the SDK only when serving

    code = run_stdio(args.vault, pinned=clean_project(args.project))
    # End now: tearing down the interpreter (the model's libraries) takes seconds, and a client that
    # closed stdin expects the process gone. The vault is closed (or safe in SQLite's WAL); logs flushed.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)
