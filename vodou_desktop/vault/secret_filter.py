"""Secrets are never stored as written (DATA-8): every text the vault keeps passes ``scrub`` first.

The detector is ``detect-secrets`` (Yelp's maintained library): its format detectors (GitHub, AWS,
Slack, Stripe, PEM private keys, JSON Web Tokens, URLs with a password, ...) and its keyword
detector (``password = "..."``, quotes required), each found value checked by its false-positive
filters (sequences, UUIDs, ``{templates}``, ``$variables``, indirect references) and, for a keyword
value made of letters only, by its gibberish filter (``your_api_key_here`` reads as words; a value
with a digit or a symbol is never excused that way). Only its pure string matchers run: never a
plugin's ``verify`` (which would send the secret to its service), never a scan of files or git, no
settings file, no plugin loaded from elsewhere. bench/notes/secret-filter.md has the measured false
positives and cost.

Each secret is replaced by ``[secret removed: KIND]``. A found value is widened to the whole token
it is part of (a 40-character token the library matched in its first 36 leaves no tail), and a
private key's header to its whole block, up to its END line (or, without one, over the base64
lines that follow).

Not used, and why: the two entropy detectors (they flag commit hashes, checksums, long ids and
base64 data, which are ordinary in what people remember) and the public IPv4 detector (an address
is not a secret). ``EXCLUDED`` names them; ``tests/unit/vault/test_secrets.py`` checks that every
detector of the installed library is either used or excluded with its reason.

Where it runs: in the vault's write path (``facts.insert_fact`` and ``insert_document``, the capture
buffer, operator memory, messages and parked approvals), inside the write job, so on the vault's
writer thread, never on the GUI thread. What was removed is added to the write's ``Change``
(``secrets_removed``), so every door can say so. A setting turns it off per source kind
(``secret_filter.KIND = off``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import apsw

from vodou_desktop.errors import InvalidInput
from vodou_desktop.vault.writer import Change

MARK = "[secret removed: {kind}]"
SETTING_PREFIX = "secret_filter."
OFF = "off"

# detect-secrets' detector classes, by module and name, that run on every text.
DETECTORS: tuple[tuple[str, str], ...] = (
    ("artifactory", "ArtifactoryDetector"),
    ("aws", "AWSKeyDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("basic_auth", "BasicAuthDetector"),
    ("cloudant", "CloudantDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("ibm_cloud_iam", "IbmCloudIamDetector"),
    ("ibm_cos_hmac", "IbmCosHmacDetector"),
    ("jwt", "JwtTokenDetector"),
    ("keyword", "KeywordDetector"),
    ("mailchimp", "MailchimpDetector"),
    ("npm", "NpmDetector"),
    ("openai", "OpenAIDetector"),
    ("private_key", "PrivateKeyDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"),
    ("softlayer", "SoftlayerDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)
EXCLUDED: dict[str, str] = {
    "Base64HighEntropyString": "flags base64 data, checksums and long ids that people keep on purpose",
    "HexHighEntropyString": "flags commit hashes, digests and hex ids",
    "IPPublicDetector": "an IP address is not a secret",
}
# detect-secrets' own false-positive filters for a found value (each takes what it names).
FILTERS = ("is_sequential_string", "is_potential_uuid", "is_likely_id_string", "is_templated_secret",
           "is_prefixed_with_dollar_sign", "is_indirect_reference", "is_not_alphanumeric_string")

# A text can hold a secret only if it has one of these (every pattern of every detector used needs one:
# a keyword-context detector its keyword, a URL with a password its "://", a private key its header, a
# token a run of token characters that is not a plain word). A text with none is returned at once,
# without loading the library (its import is most of a short command's cost); ``might_hold_secret``'s
# test checks every detector's samples and every memory of the benchmark set against ``find``.
_HINT = re.compile(r"key|pass|pwd|pw|token|secret|contrase|xox|://|putty|softlayer|cloudant", re.IGNORECASE)
_RUN = re.compile(r"[A-Za-z0-9_\-+/=.]{11,}")
_WORDS_ONLY = re.compile(r"[A-Za-z_\- ]+")
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-+/=]")
_PEM_BEGIN = re.compile(r"-{3,}\s*BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?\s*-{3,}|PuTTY-User-Key-File-\d")
_PEM_END = re.compile(r"-{3,}\s*END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?\s*-{3,}|Private-MAC:\s*[0-9a-fA-F]+")
_KEY_BODY = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:\s.*|Private-Lines:\s*\d+)?[ \t]*\r?\n?")


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class Scrubbed:
    text: str
    kinds: tuple[str, ...]  # one per secret removed, in the order they appeared


@dataclass(frozen=True)
class _Loaded:
    plugins: list[Any]
    filters: list[Any]
    keyword_hint: re.Pattern[str]  # the keyword detector's own keywords: a line without one cannot match


class _Detector:
    """The library's detector objects and filters, loaded once (its import takes ~0.5 s)."""

    _lock = threading.Lock()
    _loaded: _Loaded | None = None

    @classmethod
    def get(cls) -> _Loaded:
        with cls._lock:
            if cls._loaded is None:
                import importlib

                from detect_secrets.filters import gibberish, heuristic
                from detect_secrets.plugins import keyword

                gibberish.initialize()  # the model shipped inside detect-secrets (rfc.model)
                plugins = [getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)()
                           for module, name in DETECTORS]
                cls._loaded = _Loaded(plugins, [getattr(heuristic, name) for name in FILTERS],
                                      re.compile(keyword.DENYLIST_REGEX, re.IGNORECASE))
            return cls._loaded


def warm_up() -> None:
    """Load the detector now (a long-running app calls this from a worker at start)."""
    _Detector.get()


def might_hold_secret(text: str) -> bool:
    """False only for a text no detector used can find anything in (then ``find`` is not needed)."""
    if _HINT.search(text):
        return True
    for match in _RUN.finditer(text):
        run = match.group()
        if any(c.isdigit() or c in "_-+/=" for c in run) or any(c.isupper() for c in run[1:]):
            return True
    return False


def find(text: str) -> list[Found]:
    """Every secret in ``text``, as non-overlapping spans in order.

    The format detectors run once over the whole text; the keyword detector runs only on the lines
    that hold one of its own keywords and a quote (every pattern it tries needs both, and it is most
    of the cost)."""
    loaded = _Detector.get()
    spans: list[Found] = []
    for plugin in loaded.plugins:
        if plugin.secret_type == "Secret Keyword":
            for start, line in _keyword_lines(text, loaded.keyword_hint):
                spans += _occurrences(loaded, plugin, line, start, set(plugin.analyze_string(line)), text)
        else:
            spans += _occurrences(loaded, plugin, text, 0, set(plugin.analyze_string(text)), text)
    return _merge(spans)


def _keyword_lines(text: str, hint: re.Pattern[str]) -> list[tuple[int, str]]:
    lines: dict[int, str] = {}
    for match in hint.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if start not in lines:
            end = text.find("\n", match.end())
            line = text[start:len(text) if end < 0 else end].rstrip("\r")
            if '"' in line or "'" in line:
                lines[start] = line
    return sorted(lines.items())


def _occurrences(loaded: _Loaded, plugin: Any, where: str, offset: int, values: set[str], text: str) -> list[Found]:
    """Each place a found value occurs in ``where`` (which starts at ``offset`` of ``text``), unless a
    filter says the value on its line is no secret."""
    out = []
    for value in values:
        if not value:
            continue
        for match in re.finditer(re.escape(value), where):
            at = offset + match.start()
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            line = text[line_start:len(text) if line_end < 0 else line_end].rstrip("\r")
            if not _filtered(loaded.filters, value, line, plugin):
                out.append(_widen(text, at, at + len(value), plugin.secret_type))
    return out


def _filtered(filters: list[Any], value: str, line: str, plugin: Any) -> bool:
    if plugin.secret_type == "Secret Keyword" and _WORDS_ONLY.fullmatch(value) and _words(value, plugin):
        return True
    args = {"secret": value, "line": line, "plugin": plugin}
    for fn in filters:
        names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
        if fn(**{n: args[n] for n in names}):
            return True
    return False


def _words(value: str, plugin: Any) -> bool:
    """The library's gibberish filter: the value reads as words (``your_api_key_here``), not a secret."""
    from detect_secrets.filters import gibberish

    return bool(gibberish.should_exclude_secret(value, plugin))


def _widen(text: str, start: int, end: int, kind: str) -> Found:
    if kind == "Private Key":
        return _key_block(text, start, end, kind)
    while start > 0 and _TOKEN_CHAR.match(text[start - 1]):
        start -= 1
    while end < len(text) and (_TOKEN_CHAR.match(text[end]) or
                               (text[end] == "." and end + 1 < len(text) and _TOKEN_CHAR.match(text[end + 1]))):
        end += 1
    return Found(start, end, kind)


def _key_block(text: str, start: int, end: int, kind: str) -> Found:
    """A private key's whole block: from its BEGIN line to its END line, else over the body that follows."""
    line_start = text.rfind("\n", 0, start) + 1
    begin = _PEM_BEGIN.search(text, line_start)
    if begin is not None and begin.start() <= start:
        start = begin.start()
    closing = _PEM_END.search(text, end)
    if closing is not None:
        return Found(start, closing.end(), kind)
    # No END line: the rest of this line's base64, then every following line of key body.
    pos = end
    while pos < len(text) and text[pos] not in "\r\n":
        pos += 1
    tail = text[end:pos]
    words = list(re.finditer(r"[A-Za-z0-9+/=-]{8,}", tail))
    stop = end + (words[-1].end() if words else 0)
    pos = pos + (1 if text.startswith("\n", pos) else 2 if text.startswith("\r\n", pos) else 0)
    while pos < len(text):
        body = _KEY_BODY.match(text, pos)
        if body is None or body.end() == pos or not body.group().strip():
            break
        stop, pos = pos + len(body.group().rstrip("\r\n")), body.end()
    return Found(start, max(stop, end), kind)


def _merge(spans: Iterable[Found]) -> list[Found]:
    out: list[Found] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if out and span.start < out[-1].end:
            last = out[-1]
            out[-1] = Found(last.start, max(last.end, span.end), last.kind)
        else:
            out.append(span)
    return out


def scrub_text(text: str) -> Scrubbed:
    """``text`` with each secret replaced by ``[secret removed: KIND]``."""
    if not text or not might_hold_secret(text):
        return Scrubbed(text, ())
    spans = find(text)
    if not spans:
        return Scrubbed(text, ())
    parts, at = [], 0
    for span in spans:
        parts += [text[at:span.start], MARK.format(kind=span.kind)]
        at = span.end
    parts.append(text[at:])
    return Scrubbed("".join(parts), tuple(s.kind for s in spans))


# -- the write path ------------------------------------------------------------------------------

def filter_on(conn: apsw.Connection, source: str) -> bool:
    """Whether secrets are removed from what ``source`` (a source kind) writes: on unless set off."""
    row = conn.execute("SELECT value FROM settings WHERE key = ?", (SETTING_PREFIX + source,)).fetchone()
    return row is None or row[0] != OFF


def set_filter(conn: apsw.Connection, change: Change, source: str, on: bool) -> None:
    """Turn the filter on (the default: no setting kept) or off for one source kind."""
    from vodou_desktop.vault.sources import KINDS

    if source not in KINDS:
        raise InvalidInput(f"unknown source {source[:40]!r}; the sources are {', '.join(sorted(KINDS))}")
    if on:
        conn.execute("DELETE FROM settings WHERE key = ?", (SETTING_PREFIX + source,))
    else:
        conn.execute("INSERT INTO settings(key, value) VALUES (?, ?)"
                     " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (SETTING_PREFIX + source, OFF))
    change.touch("settings")


def filter_states(conn: apsw.Connection) -> dict[str, bool]:
    """Every source kind and whether secrets are removed from what it writes."""
    from vodou_desktop.vault.sources import KINDS

    return {kind: filter_on(conn, kind) for kind in sorted(KINDS)}


def scrub(conn: apsw.Connection, change: Change, text: str, source: str) -> str:
    """Inside a write job: ``text`` as it may be stored for ``source``; what was removed is added to
    ``change.secrets_removed``."""
    if not filter_on(conn, source):
        return text
    result = scrub_text(text)
    change.secrets_removed.extend(result.kinds)
    return result.text


def scrub_for_source(conn: apsw.Connection, change: Change, text: str, source_id: int) -> str:
    """``scrub`` for a text written under the source row ``source_id`` (its kind decides)."""
    row = conn.execute("SELECT kind FROM memory_sources WHERE id = ?", (source_id,)).fetchone()
    return scrub(conn, change, text, str(row[0]) if row else "")


def scrub_document(conn: apsw.Connection, change: Change, title: str | None, chunks: Sequence[str], source_id: int,
                   split: Callable[[str], list[str]]) -> tuple[str | None, Sequence[str]]:
    """A document's title and chunks as they may be stored. The whole text is scrubbed (a key can run
    across a chunk's edge) and, when anything was removed, split again. A title that is its source's
    (already scrubbed, and counted, when the source was stamped) is not counted twice."""
    row = conn.execute("SELECT kind, title FROM memory_sources WHERE id = ?", (source_id,)).fetchone()
    kind, source_title = (str(row[0]), row[1]) if row else ("", None)
    if title:
        counted = len(change.secrets_removed)
        title = scrub(conn, change, title, kind)
        if title == source_title:
            del change.secrets_removed[counted:]
    whole = "\n\n".join(chunks)
    clean = scrub(conn, change, whole, kind)
    return title, (chunks if clean == whole else split(clean))


def scrub_value(conn: apsw.Connection, change: Change, value: Any, source: str) -> Any:
    """``scrub`` applied to every string inside a JSON-like value (a parked tool call's arguments)."""
    if isinstance(value, str):
        return scrub(conn, change, value, source)
    if isinstance(value, dict):
        return {k: scrub_value(conn, change, v, source) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_value(conn, change, v, source) for v in value]
    return value


def removed_note(kinds: Iterable[str]) -> str | None:
    """What the answer says: "2 secrets removed before saving (GitHub Token, Private Key)"."""
    kinds = list(kinds)
    if not kinds:
        return None
    names = ", ".join(dict.fromkeys(kinds))
    return f"{len(kinds)} {'secret' if len(kinds) == 1 else 'secrets'} removed before saving ({names})"
