"""``vodou``: the tray app with no arguments, a command line tool otherwise."""

from __future__ import annotations

import sys

from vodou_desktop.cli.main import main as cli_main
from vodou_desktop.search.onnx_path import CHILD_FLAG, child_main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [CHILD_FLAG]:  # the child process that exports the embedding model (search/onnx_path.py)
        return child_main(argv[1:])
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
