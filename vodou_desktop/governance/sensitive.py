"""Sensitive defaults (GOV-3): hosts that are ``off`` until the person says otherwise.

The lists are data (``resources/sensitive/<category>.txt``, one registrable domain a line, the
criteria in each file's header) so they can be reviewed without reading code. A host matches when
it or one of its parent domains is listed; matching compares whole labels from the right, so
``chase.com.evil.test`` and punycode look-alikes never match ``chase.com``.

Sign-in hosts are also recognised by a pattern on their subdomain labels (``login.``, ``sso.`` …,
``resources/sensitive/host-patterns.txt``). Which labels are "subdomain" is decided by the
registrable domain, computed by tldextract from the public-suffix snapshot bundled with the package
(never fetched): ``login.example.co.uk`` matches, ``id.me`` itself does not.
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass
from pathlib import Path

import tldextract

from vodou_desktop.pages import normalize_host
from vodou_desktop.resources import ResourcesMissing, resource_path

CATEGORIES = ("bank", "health", "tax", "sign-in")
PATTERN_FILE = "host-patterns.txt"
PATTERN_CATEGORY = "sign-in"


@functools.lru_cache(maxsize=1)
def _extractor() -> tldextract.TLDExtract:
    # No URLs to fetch and no cache dir: only the snapshot shipped inside the package is used.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


def registrable_domain(host: str) -> str | None:
    """``online.chase.com`` → ``chase.com``; ``www.bbc.co.uk`` → ``bbc.co.uk``; None for IPs,
    ``localhost`` and names under a suffix the public-suffix list does not know."""
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    parts = _extractor().extract_str(host)
    if not parts.suffix or not parts.domain:
        return None
    return f"{parts.domain}.{parts.suffix}"


def _data_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResourcesMissing(f"the sensitive-site list {path} is missing; reinstall Vodou") from None
    lines = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


@dataclass(frozen=True)
class SensitiveLists:
    """Domain → category, and the sign-in label patterns."""

    domains: dict[str, str]
    patterns: frozenset[str]

    @classmethod
    def load(cls, folder: Path | None = None) -> SensitiveLists:
        folder = folder or resource_path("sensitive")
        domains: dict[str, str] = {}
        for category in CATEGORIES:
            for entry in _data_lines(folder / f"{category}.txt"):
                domain = normalize_host(entry)
                if "." not in domain:
                    raise ValueError(f"{category}.txt: {entry!r} is not a domain name")
                domains.setdefault(domain, category)
        patterns = frozenset(p.rstrip(".").lower() for p in _data_lines(folder / PATTERN_FILE))
        return cls(domains, patterns)

    def category_of(self, host: str) -> str | None:
        """The sensitive category of a normalised host, or None."""
        labels = host.split(".")
        for start in range(0, len(labels) - 1):  # the host itself, then each parent of 2+ labels
            found = self.domains.get(".".join(labels[start:]))
            if found:
                return found
        base = registrable_domain(host)
        if base is None:
            return None
        subdomain_labels = labels[: len(labels) - (base.count(".") + 1)]
        if any(_is_signin_label(label, self.patterns) for label in subdomain_labels):
            return PATTERN_CATEGORY
        return None


def _is_signin_label(label: str, patterns: frozenset[str]) -> bool:
    """``login``, ``login2``, ``login-eu`` match the pattern ``login``; ``loginator`` does not."""
    if label in patterns:
        return True
    head = label.rstrip("0123456789")
    if head != label and head in patterns:
        return True
    return label.split("-", 1)[0] in patterns


@functools.lru_cache(maxsize=1)
def default_lists() -> SensitiveLists:
    return SensitiveLists.load()
