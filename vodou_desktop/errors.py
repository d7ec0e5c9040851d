"""Error taxonomy.

``KnownError`` is the environment or the person's input (locked vault, bad host, unknown id):
it carries a message meant for a person and is shown as such (CLI: one line, exit 2; bridge:
JSON body with a status; UI: a message box). Anything else is our bug and crashes loudly.
"""

from __future__ import annotations


class VodouError(Exception):
    """Base of every error Vodou raises on purpose."""


class KnownError(VodouError):
    """A problem with the environment or the input, explained in ``str(self)``."""

    status = 400  # HTTP status the bridge maps this to


class NotFound(KnownError):
    status = 404


class InvalidInput(KnownError):
    status = 400


class Conflict(KnownError):
    status = 409


class PolicyRefused(KnownError):
    """A site mode (or pause) forbids the operation. The bridge answers 403."""

    status = 403


class VaultUnavailable(KnownError):
    """The vault cannot be opened or written: locked, corrupt, read-only, missing folder."""

    status = 503


class BugError(VodouError):
    """An invariant of our own code broke. Never shown as a friendly message."""
