"""Search operators typed in a query: ``project:``, ``kind:``, ``site:``, ``before:`` and ``after:``.

``project:birds`` keeps the memories of project birds only (``project:birds+global`` adds the global
ones, ``project:global`` keeps the global ones alone); ``kind:preference`` one kind (several ``kind:``
mean any of them); ``site:example.com`` a site and its subdomains; ``after:2024-05-01`` and
``before:2024`` bound the memory's age (when it was true or said, else when it was saved): a date
(a year, a month, a day, a time) or a span back from now (``7d``, ``12h``). A value with spaces goes in
quotes (``project:"home office"``). Anything else, ``foo:bar`` and URLs included, stays a search word.

Operators only narrow: ``Query.narrow`` applies them on top of the caller's filter, through the query
builder's own ``within`` for projects, so an operator never reaches past the wall (``project:x`` in
an MCP session walled into another project is refused, in words). A contradiction with the caller's
filter (``kind:note`` while the list shows decisions) is refused too, never widened. Only what a
person or an AI tool types as a search is read for operators (``SearchService.search(...,
operators=True)``); page text never is (it is data, PAGE-1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from vodou_desktop.errors import InvalidInput
from vodou_desktop.pages import site_host
from vodou_desktop.vault import FactFilter
from vodou_desktop.vault.clock import since_time
from vodou_desktop.vault.query import Scope, within
from vodou_desktop.words import GLOBAL, LIST_KINDS

KEYS = ("project", "kind", "site", "before", "after")
_TOKEN = re.compile(r'(?<!\S)(project|kind|site|before|after):(?:"([^"]*)"|(\S+))', re.IGNORECASE)
_YEAR = re.compile(r"\d{4}")
_MONTH = re.compile(r"\d{4}-\d{2}")


@dataclass(frozen=True)
class Query:
    """A query split into its words and its operators."""

    words: str  # what is left to search for
    project: str | None = None
    scope: Scope | None = None  # with ``project``: only it, or with the global ones; GLOBAL_ONLY alone
    kinds: tuple[str, ...] = ()
    site: str | None = None
    after: str | None = None  # ISO time
    before: str | None = None
    operators: tuple[str, ...] = ()  # as typed

    @property
    def only_operators(self) -> bool:
        """Operators and no words: a list of what they let through, newest first."""
        return bool(self.operators) and not self.words

    def narrow(self, f: FactFilter) -> FactFilter:
        """``f`` with these operators applied on top: never more than ``f`` lets through."""
        if self.scope is not None:
            f = within(f, self.project, self.scope)
        if self.kinds:
            kinds = tuple(k for k in self.kinds if not f.kinds or k in f.kinds)
            if not kinds:
                raise InvalidInput(f"kind:{' kind:'.join(self.kinds)} and the kinds chosen ({', '.join(f.kinds)})"
                                   " leave nothing to search")
            f = replace(f, kinds=kinds)
        if self.site:
            f = replace(f, host=_narrower_site(f.host, self.site))
        if self.after:
            f = replace(f, after=max(self.after, f.after) if f.after else self.after)
        if self.before:
            f = replace(f, before=min(self.before, f.before) if f.before else self.before)
        return f


def parse(text: str) -> Query:
    """Split ``text`` into words and operators; a malformed operator value is refused in words."""
    text = text or ""
    found: dict[str, list[str]] = {k: [] for k in KEYS}
    typed: list[str] = []
    for match in _TOKEN.finditer(text):
        key, value = match.group(1).lower(), match.group(2) if match.group(2) is not None else match.group(3)
        found[key].append(value.strip())
        typed.append(match.group(0))
    words = " ".join(_TOKEN.sub(" ", text).split())
    if not typed:
        return Query(words)
    project, scope = _project(found["project"])
    return Query(words, project, scope, _kinds(found["kind"]), _site(found["site"]),
                 _bound(found["after"], "after:", latest=True), _bound(found["before"], "before:", latest=False),
                 tuple(typed))


def _project(values: list[str]) -> tuple[str | None, Scope | None]:
    if not values:
        return None, None
    if len(set(values)) > 1:
        raise InvalidInput(f"one project at a time: project:{' and project:'.join(sorted(set(values)))}")
    value = values[0]
    if not value:
        raise InvalidInput("project: needs a name (project:birds, project:global)")
    if value.casefold() == GLOBAL:
        return None, Scope.GLOBAL_ONLY
    if value.casefold().endswith("+" + GLOBAL):
        return value[: -len(GLOBAL) - 1], Scope.PROJECT_AND_GLOBAL
    return value, Scope.PROJECT_ONLY


def _kinds(values: list[str]) -> tuple[str, ...]:
    kinds = tuple(dict.fromkeys(v.lower() for v in values))
    unknown = [k for k in kinds if k not in LIST_KINDS]
    if unknown:
        raise InvalidInput(f"kind:{unknown[0]} is not a kind of memory; one of {', '.join(LIST_KINDS)}")
    return kinds


def _site(values: list[str]) -> str | None:
    hosts = list(dict.fromkeys(site_host(v) for v in values))
    if len(hosts) > 1:
        raise InvalidInput(f"one site at a time: site:{' and site:'.join(hosts)}")
    return hosts[0] if hosts else None


def _narrower_site(current: str | None, wanted: str) -> str:
    if current is None or wanted == current or wanted.endswith("." + current):
        return wanted
    if current.endswith("." + wanted):
        return current
    raise InvalidInput(f"site:{wanted} is outside the site chosen ({current}): nothing to search")


def _bound(values: list[str], name: str, *, latest: bool) -> str | None:
    """The narrowest of several bounds of one kind: the latest ``after:``, the earliest ``before:``."""
    times = [_when(v, name) for v in values]
    if not times:
        return None
    return max(times) if latest else min(times)


def _when(value: str, name: str) -> str:
    """A date, a time or a span back from now; a year or a month means its first day."""
    if _YEAR.fullmatch(value):
        value = f"{value}-01-01"
    elif _MONTH.fullmatch(value):
        value = f"{value}-01"
    return since_time(value, name)
