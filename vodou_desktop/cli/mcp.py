"""``vodou mcp``: serve the vault to AI tools over MCP on stdio; ``--print-config CLIENT`` prints the
snippet to paste into a client's configuration."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from vodou_desktop.mcp.client_config import CLIENTS, client_config, server_command
from vodou_desktop.vault.facts import clean_project


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("mcp", help="serve memory to AI tools (Model Context Protocol, stdio)",
                       description="Serve the vault to MCP clients (Claude Desktop, Claude Code, Cursor, VS Code, …)"
                                   " over stdio. Started by the client, not by hand.")
    p.add_argument("--print-config", metavar="CLIENT", choices=sorted(CLIENTS),
                   help=f"print the configuration snippet for a client: {', '.join(sorted(CLIENTS))}")
    p.add_argument("--project", metavar="NAME",
                   help="pin this server to one project: every call searches it (and global memories) only")
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    if args.print_config:
        command, cmd_args = server_command(vault=args.vault)
        json.dump(client_config(args.print_config, command, cmd_args), sys.stdout, indent=2)
        sys.stdout.write("\n")
        print(f"Paste into {CLIENTS[args.print_config]}.", file=sys.stderr)
        return 0
    from vodou_desktop.mcp.server import run_stdio  # the SDK only when serving

    code = run_stdio(args.vault, pinned=clean_project(args.project))
    # End now: tearing down the interpreter (the model's libraries) takes seconds, and a client that
    # closed stdin expects the process gone. The vault is closed (or safe in SQLite's WAL); logs flushed.
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)
