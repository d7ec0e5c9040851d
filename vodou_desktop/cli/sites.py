"""``vodou sites``: see and set what Vodou may do on each site (off / suggest / collect)."""

from __future__ import annotations

import argparse

from vodou_desktop.cli.output import print_json
from vodou_desktop.governance.sitemodes import MODES, Resolution, SiteModes
from vodou_desktop.runtime import Runtime


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sites = sub.add_parser("sites", help="site modes: off, suggest, collect")
    ssub = sites.add_subparsers(dest="sites_command", metavar="ACTION", required=True)

    lst = ssub.add_parser("list", help="your site rules, the global default and the pause")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(func=cmd_list, needs_vault=True)

    get = ssub.add_parser("get", help="the mode of a host or URL, and why")
    get.add_argument("host")
    get.add_argument("--json", action="store_true")
    get.set_defaults(func=cmd_get, needs_vault=True, without_vault=cmd_get_by_default)

    set_ = ssub.add_parser("set", help="set the mode of a host and its subdomains")
    set_.add_argument("host")
    set_.add_argument("mode", choices=MODES)
    set_.add_argument("--json", action="store_true")
    set_.set_defaults(func=cmd_set)

    clear = ssub.add_parser("clear", help="remove your rule for a host")
    clear.add_argument("host")
    clear.set_defaults(func=cmd_clear, needs_vault=True)

    default = ssub.add_parser("default", help="show or set the mode of sites without a rule")
    default.add_argument("mode", nargs="?", choices=MODES)
    default.set_defaults(func=cmd_default, needs_vault=lambda args: args.mode is None)  # showing reads

    pause = ssub.add_parser("pause", help="pause (every site off) or resume")
    pause.add_argument("state", choices=("on", "off"))
    pause.set_defaults(func=cmd_pause)


def _sites(rt: Runtime) -> SiteModes:
    return SiteModes(rt.vault)


def _open(args: argparse.Namespace) -> Runtime:
    return Runtime.open(args.vault, embedder="none")


def cmd_list(args: argparse.Namespace) -> int:
    with _open(args) as rt:
        sites = _sites(rt)
        rules, default, paused = sites.rules(), sites.global_default, sites.paused
    if args.json:
        print_json({"rules": rules, "global_default": default, "paused": paused})
        return 0
    print(f"global default: {default}" + ("  (PAUSED: every site is off)" if paused else ""))
    if not rules:
        print("no site rules")
    for rule in rules:
        print(f"{rule['mode']:8} {rule['host']}")
    return 0


def _print_resolution(args: argparse.Namespace, resolution: Resolution) -> None:
    if args.json:
        print_json(resolution.as_json())
    else:
        print(f"{resolution.host}: {resolution.mode} ({resolution.reason})")


def cmd_get(args: argparse.Namespace) -> int:
    with _open(args) as rt:
        _print_resolution(args, _sites(rt).resolve(args.host))
    return 0


def cmd_get_by_default(args: argparse.Namespace) -> int:
    """No vault yet (a fresh install): no rule exists, so the sensitive lists and the global default decide."""
    _print_resolution(args, SiteModes(None).resolve(args.host))
    return 0


def cmd_set(args: argparse.Namespace) -> int:
    with _open(args) as rt:
        sites = _sites(rt)
        sites.set_rule(args.host, args.mode)
        _print_resolution(args, sites.resolve(args.host))
    return 0


def cmd_clear(args: argparse.Namespace) -> int:
    with _open(args) as rt:
        sites = _sites(rt)
        removed = sites.clear_rule(args.host)
        resolution = sites.resolve(args.host)
    prefix = "rule removed" if removed else "no rule was set on that host"
    print(f"{prefix}; {resolution.host}: {resolution.mode} ({resolution.reason})")
    return 0


def cmd_default(args: argparse.Namespace) -> int:
    with _open(args) as rt:
        sites = _sites(rt)
        if args.mode:
            sites.set_global_default(args.mode)
        print(f"global default: {sites.global_default}")
    return 0


def cmd_pause(args: argparse.Namespace) -> int:
    with _open(args) as rt:
        _sites(rt).set_paused(args.state == "on")
    print("paused: every site is off" if args.state == "on" else "resumed: site modes apply again")
    return 0
