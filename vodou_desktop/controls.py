"""Text that came in as data goes out as data: control characters escaped, Markdown made literal.

A memory's text is whatever a page, a file or a tool gave Vodou. Printed raw, ESC, BEL or CR drive
the terminal (change its title, clear the screen, rewrite a line); written raw into Markdown, a line
of it opens a heading, a list or an HTML block. Every C0 and C1 control character and DEL (the
line break and the tab aside) is shown as a JSON-style escape (``\\u001b``): the same spelling in
text and in JSON output, so JSON stays exact JSON that decodes to the very same text.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import Any

_C0_C1 = "\x00-\x08\x0b-\x1f\x7f-\x9f"  # every C0 and C1 control and DEL, but tab (\x09) and line feed (\x0a)
CONTROL = re.compile(f"[{_C0_C1}]")
CONTROL_OR_BREAK = re.compile(f"[{_C0_C1}\t\n]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escape_controls(text: str, *, single_line: bool = False) -> str:
    """``text`` with each control character written ``\\u00XX``; ``single_line``: line feed and tab too."""
    return (CONTROL_OR_BREAK if single_line else CONTROL).sub(_escaped, text)


# -- the terminal ------------------------------------------------------------------------------

class TerminalSafe(io.TextIOBase):
    """A text stream that writes through to ``raw`` with every control character escaped
    (``controls.escape_controls``): whatever a memory holds, what a command prints cannot drive the
    terminal. JSON passes through exact (the escapes are JSON's own ``\\u00XX``)."""

    def __init__(self, raw: Any) -> None:
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(escape_controls(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return bool(self.raw.isatty())

    def fileno(self) -> int:
        return int(self.raw.fileno())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.raw, "encoding", "utf-8"))

    def writable(self) -> bool:
        return True


@contextlib.contextmanager
def terminal_safe_stdout() -> Iterator[None]:
    """While a command runs, everything it prints on standard output goes through ``TerminalSafe``."""
    raw = sys.stdout
    sys.stdout = TerminalSafe(raw)  # type: ignore[assignment]
    try:
        yield
    finally:
        with contextlib.suppress(BrokenPipeError, ValueError):
            sys.stdout.flush()
        sys.stdout = raw


# -- Markdown ------------------------------------------------------------------------------------

_INLINE = re.compile(r"([\\`*_\[\]<>|~&!#])")  # what CommonMark gives a meaning to inside a line
_BLOCK_START = re.compile(r"^(\d{0,9})([-+=.)])")  # bullet and ordered list items, setext underlines


def markdown_inline(text: str) -> str:
    """``text`` as one line of literal Markdown: every character with a meaning escaped, breaks shown."""
    return _INLINE.sub(r"\\\1", escape_controls(text, single_line=True))


def markdown_lines(text: str, indent: str = "") -> str:
    """``text`` as literal Markdown lines: each line's characters escaped, a line that would open a
    block (a list item, a heading, a quote, a setext underline) escaped at its start, and every line
    after the first indented by ``indent`` (a list item's continuation: it cannot leave the item)."""
    lines = []
    for line in escape_controls(text).split("\n"):
        line = _INLINE.sub(r"\\\1", line.strip())
        line = _BLOCK_START.sub(r"\1\\\2", line)
        lines.append(line)
    return ("\n" + indent).join(lines)
