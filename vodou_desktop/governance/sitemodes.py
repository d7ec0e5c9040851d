"""Site modes (GOV-1..3): what Vodou may do on a host — ``off``, ``suggest`` or ``collect``.

Resolution order: pause > user rule > sensitive default > global default. A rule covers its
subdomains and the most specific rule wins. Every resolution carries its reason, so the person
(and the tests) can see why a page is off. The app decides; the extension only asks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from vodou_desktop.errors import InvalidInput, VaultUnavailable
from vodou_desktop.governance.sensitive import SensitiveLists, default_lists
from vodou_desktop.pages import site_host
from vodou_desktop.vault import Vault, settings_store, site_rules

MODES = ("off", "suggest", "collect")
DEFAULT_MODE = "collect"
GLOBAL_DEFAULT_KEY = "site_modes.global_default"
PAUSED_KEY = "site_modes.paused"


@dataclass(frozen=True)
class Resolution:
    """The effective mode of one host and why."""

    host: str
    mode: str
    reason: str
    rule_host: str | None = None
    category: str | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise InvalidInput(f"unknown site mode {mode!r}; use one of {', '.join(MODES)}")
    return mode


def _parents(host: str) -> list[str]:
    """``a.b.example.com`` → itself and every parent, most specific first (no bare TLD)."""
    labels = host.split(".")
    if ":" in host or len(labels) < 2:  # IPv6 literal or a single label like localhost
        return [host]
    return [".".join(labels[i:]) for i in range(len(labels) - 1)]


def _decide(host: str, rules: dict[str, str], default: str | None, paused: bool,
            sensitive: SensitiveLists) -> Resolution:
    category = sensitive.category_of(host)
    if paused:
        return Resolution(host, "off", "paused", None, category)
    for candidate in _parents(host):  # most specific first
        if candidate in rules:
            return Resolution(host, rules[candidate], f"user rule on {candidate}", candidate, category)
    if category:
        return Resolution(host, "off", f"sensitive default: {category}", None, category)
    return Resolution(host, default if default in MODES else DEFAULT_MODE, "global default", None, None)


class SiteModes:
    """The one place a host's mode is decided. Rules and settings live in the vault; with none made yet
    (``vault=None``, a fresh install) only the sensitive lists and the global default decide."""

    def __init__(self, vault: Vault | None, sensitive: SensitiveLists | None = None) -> None:
        self._vault = vault
        self.sensitive = sensitive or default_lists()

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            raise VaultUnavailable("no vault yet: the first memory you add, or the first site rule, makes it")
        return self._vault

    def resolve(self, url_or_host: str) -> Resolution:
        """Mode and reason for a URL or a bare host; ``InvalidInput`` for non-web URLs or bad hosts."""
        host = site_host(url_or_host)
        candidates = _parents(host)
        if self._vault is None:
            return _decide(host, {}, None, False, self.sensitive)
        rules, default, paused = self.vault.read(lambda c: (
            site_rules.rules_for_hosts(c, candidates),
            settings_store.get_setting(c, GLOBAL_DEFAULT_KEY),
            settings_store.get_setting(c, PAUSED_KEY),
        ))
        return _decide(host, rules, default, paused == "1", self.sensitive)

    def set_rule(self, host: str, mode: str) -> Resolution:
        """Set (or replace) the user rule for ``host`` and its subdomains; returns the new resolution."""
        check_mode(mode)
        host = site_host(host)
        self.vault.write(lambda c, ch: site_rules.upsert_rule(c, ch, host, mode))
        return self.resolve(host)

    def clear_rule(self, host: str) -> bool:
        """Remove the rule set exactly on ``host``; True when there was one."""
        host = site_host(host)
        return bool(self.vault.write(lambda c, ch: site_rules.delete_rule(c, ch, host)))

    def rules(self) -> list[dict[str, Any]]:
        """Every user rule: host, mode, created_at, updated_at (sorted by host)."""
        return self.vault.read(site_rules.all_rules)

    @property
    def global_default(self) -> str:
        value = self.vault.read(lambda c: settings_store.get_setting(c, GLOBAL_DEFAULT_KEY))
        return value if value in MODES else DEFAULT_MODE

    def set_global_default(self, mode: str) -> None:
        check_mode(mode)
        self.vault.write(lambda c, ch: settings_store.set_setting(c, ch, GLOBAL_DEFAULT_KEY, mode))

    @property
    def paused(self) -> bool:
        return self.vault.read(lambda c: settings_store.get_setting(c, PAUSED_KEY)) == "1"

    def set_paused(self, paused: bool) -> None:
        """While paused every host resolves to ``off`` (reason ``paused``): nothing read, nothing written."""
        value = "1" if paused else "0"
        self.vault.write(lambda c, ch: settings_store.set_setting(c, ch, PAUSED_KEY, value))
