"""Error taxonomy.

``KnownError`` is the environment or the person's input (locked vault, bad host, unknown id):
it carries a message meant for a person and is shown as such (CLI: one line, exit 2; bridge:
JSON body with a status; UI: a message box). Anything else is our bug and crashes loudly.

The words for a vault the environment spoiled (damaged, locked, from a newer Vodou, full disk) are
here, once: SQLite's own text ("btreeInitPage() returns error code 11", table and schema-step
names) never reaches a person; it goes to the log for whoever debugs it.
"""

from __future__ import annotations

import logging

import apsw

log = logging.getLogger(__name__)


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


def damaged_vault(path: object, what: str = "vault", *, or_other: bool = False,
                  found: str = "some of it cannot be read") -> VaultUnavailable:
    """A damaged vault, or a damaged ``copy`` (a backup checked before it is kept, verified or
    restored); ``found``: how the damage showed."""
    other = " (or it is not a Vodou vault)" if or_other else ""
    if what == "copy":
        return VaultUnavailable(
            f"the copy at {path} is damaged{other}: {found}; it was not used and nothing was changed. Keep it "
            "aside (parts of it may be recoverable) and use another backup")
    return VaultUnavailable(
        f"the {what} at {path} is damaged{other}: {found}; nothing was written to it. Move the "
        "file aside (keep it: parts of it may be recoverable) and restore your latest backup (vodou restore FILE), "
        "or start a new vault")


def not_a_vault(path: object) -> VaultUnavailable:
    return VaultUnavailable(f"{path} is not a Vodou vault; it was left untouched")


def newer_vault(path: object, what: str = "vault") -> VaultUnavailable:
    return VaultUnavailable(f"the {what} at {path} was made by a newer version of Vodou; upgrade Vodou to open it"
                            " (it was not changed)")


def locked_vault(path: object) -> VaultUnavailable:
    return VaultUnavailable(f"the vault at {path} is locked by another program; try again in a moment")


def vault_io_error(path: object) -> VaultUnavailable:
    return VaultUnavailable(f"the vault at {path} could not be read or written (an input/output error from the disk);"
                            " check the disk, then try again")


def from_sqlite(exc: BaseException, path: object) -> VaultUnavailable | None:
    """SQLite's environment errors in a person's words (the one translation: the vault's connections
    and the CLI's last resort both use it); ``None`` for anything else, which is our bug."""
    log.info("SQLite error on %s: %s: %s", path, type(exc).__name__, exc)
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return locked_vault(path)
    if isinstance(exc, apsw.CorruptError):
        return damaged_vault(path)
    if isinstance(exc, apsw.NotADBError):
        return damaged_vault(path, or_other=True)
    if isinstance(exc, apsw.ReadOnlyError):
        return VaultUnavailable(f"the vault at {path} is read-only; Vodou needs to write to it")
    if isinstance(exc, apsw.CantOpenError):
        return VaultUnavailable(f"cannot open the vault at {path}: check that its folder exists and is writable")
    if isinstance(exc, apsw.FullError):
        return VaultUnavailable(f"the disk holding the vault at {path} is full; nothing was written")
    if isinstance(exc, apsw.IOError):
        return vault_io_error(path)
    return None
