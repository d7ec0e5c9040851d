"""``vodou``: the tray app with no arguments, a command line tool otherwise."""

from __future__ import annotations

import sys

from vodou_desktop.cli.main import main as cli_main


def main(argv: list[str] | None = None) -> int:
    return cli_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
