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
_FENCED = re.compile(r"<vodou:context\b[^>]*>.*?(?:</vodou:context>|\Z)", re.DOTALL | re.IGNORECASE)


def fence(page_text: str) -> str:
    """Wrap page text for a model prompt, so that every later path can strip it."""
    return f"{OPEN}\n{page_text.replace(CLOSE, '')}\n{CLOSE}"


def strip_context(text: str) -> str:
    """Remove every fenced span (an unclosed fence runs to the end of the text)."""
    return _FENCED.sub(" ", text).strip()
