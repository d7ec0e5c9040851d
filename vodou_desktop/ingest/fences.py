"""Page text fenced with ``vodou:context`` markers is never memory (PAGE-1).

The panel and the extension send page text in its own ``pageContext`` field, and what is stored is
built only from what the person typed. As a second layer, any text between the markers is removed
by every capture and extraction path before it can become a fact, even if a future client put the
page into the wrong field.
"""

from __future__ import annotations

import re

OPEN = "<vodou:context>"
CLOSE = "</vodou:context>"
_FENCE_TAG = re.compile(r"</?\s*vodou:context\b[^>]*>?", re.IGNORECASE)
_FENCED = re.compile(r"<vodou:context\b[^>]*>.*?(?:</vodou:context>|\Z)", re.DOTALL | re.IGNORECASE)


def fence(page_text: str, kind: str | None = None) -> str:
    """Wrap page text (or recalled memory: ``kind="recall"``) for a model prompt, so that every later
    path can strip it."""
    opening = f'<vodou:context kind="{kind}">' if kind else OPEN
    return f"{opening}\n{_FENCE_TAG.sub('', page_text)}\n{CLOSE}"


def strip_context(text: str) -> str:
    """Remove every fenced span (an unclosed fence runs to the end of the text)."""
    return _FENCED.sub(" ", text).strip()
