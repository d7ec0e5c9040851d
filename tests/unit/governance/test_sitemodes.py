"""GOV-1..3: resolution order, reasons, host normalisation, look-alikes, sensitive defaults."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance import sensitive
from vodou_desktop.governance.sensitive import CATEGORIES, SensitiveLists, default_lists, registrable_domain
from vodou_desktop.governance.sitemodes import MODES, SiteModes
from vodou_desktop.resources import resource_path


def test_sensitive_default_names_its_category(sites: SiteModes) -> None:
    res = sites.resolve("www.chase.com")
    assert (res.mode, res.reason, res.category) == ("off", "sensitive default: bank", "bank")
    assert sites.resolve("https://www.nhs.uk/conditions/").reason == "sensitive default: health"
    assert sites.resolve("www.irs.gov").reason == "sensitive default: tax"
    assert sites.resolve("accounts.google.com").reason == "sensitive default: sign-in"


def test_user_rule_beats_sensitive_default_and_covers_subdomains(sites: SiteModes) -> None:
    sites.set_rule("chase.com", "collect")
    res = sites.resolve("online.chase.com")
    assert (res.mode, res.reason, res.rule_host) == ("collect", "user rule on chase.com", "chase.com")
    assert sites.resolve("chase.com").mode == "collect"


def test_most_specific_rule_wins(sites: SiteModes) -> None:
    sites.set_rule("example.com", "off")
    sites.set_rule("docs.example.com", "suggest")
    assert sites.resolve("a.docs.example.com").reason == "user rule on docs.example.com"
    assert sites.resolve("a.docs.example.com").mode == "suggest"
    assert sites.resolve("www.example.com").mode == "off"
    assert sites.resolve("notexample.com").reason == "global default"


def test_global_default_and_its_setting(sites: SiteModes) -> None:
    assert sites.global_default == "collect"
    assert sites.resolve("example.org").mode == "collect"
    sites.set_global_default("suggest")
    res = sites.resolve("example.org")
    assert (res.mode, res.reason) == ("suggest", "global default")
    assert sites.resolve("www.chase.com").mode == "off"  # sensitive still beats the default
    with pytest.raises(InvalidInput):
        sites.set_global_default("sometimes")


def test_pause_turns_every_site_off_and_resume_restores(sites: SiteModes) -> None:
    sites.set_rule("example.com", "collect")
    sites.set_paused(True)
    assert sites.paused is True
    for host in ("example.com", "example.org", "www.chase.com"):
        res = sites.resolve(host)
        assert (res.mode, res.reason) == ("off", "paused")
    sites.set_paused(False)
    assert sites.resolve("example.com").reason == "user rule on example.com"


@pytest.mark.parametrize("spelling", ["CHASE.COM.", "Chase.Com", "chase.com:443", "https://CHASE.com./login",
                                      "https://user:pw@chase.com:8443/x"])
def test_spellings_of_one_host_resolve_alike(sites: SiteModes, spelling: str) -> None:
    res = sites.resolve(spelling)
    assert (res.host, res.mode, res.category) == ("chase.com", "off", "bank")


@pytest.mark.parametrize(("lookalike", "real_host"), [
    ("chase.com.evil.test", "chase.com.evil.test"),
    ("https://chase.com@evil.test/", "evil.test"),
    ("https://www.chase.com.evil.test/login", "www.chase.com.evil.test"),
    ("xn--chse-mxa.com", "xn--chse-mxa.com"),  # "chåse.com"
    ("ch\u0430se.com", "xn--chse-63d.com"),  # Cyrillic "а"
    ("notchase.com", "notchase.com"),
    ("chase.co", "chase.co"),
])
def test_lookalikes_resolve_for_what_they_are(sites: SiteModes, lookalike: str, real_host: str) -> None:
    sites.set_rule("chase.com", "suggest")
    res = sites.resolve(lookalike)
    assert res.host == real_host
    assert (res.mode, res.reason, res.category) == ("collect", "global default", None)


def test_ip_literals_and_localhost(sites: SiteModes) -> None:
    assert sites.resolve("http://127.0.0.1:8080/").host == "127.0.0.1"
    assert sites.resolve("http://[::1]:3000/").host == "::1"
    assert sites.resolve("localhost:5173").host == "localhost"
    sites.set_rule("127.0.0.1", "off")
    assert sites.resolve("http://127.0.0.1/x").reason == "user rule on 127.0.0.1"
    assert sites.resolve("http://127.0.0.10/x").reason == "global default"


@pytest.mark.parametrize("bad", ["javascript:alert(1)", "data:text/html,hi", "file:///etc/passwd",
                                 "chrome://settings", "about:blank", "", "   ", "exa mple.com", "-bad-.com",
                                 "a..b", "http://", "ftp://example.com/"])
def test_non_web_urls_and_invalid_hosts_are_clear_errors(sites: SiteModes, bad: str) -> None:
    with pytest.raises(InvalidInput) as info:
        sites.resolve(bad)
    assert str(info.value)


def test_rules_list_set_replace_clear(sites: SiteModes) -> None:
    sites.set_rule("Example.COM.", "off")
    sites.set_rule("example.com", "suggest")
    rules = sites.rules()
    assert [(r["host"], r["mode"]) for r in rules] == [("example.com", "suggest")]
    assert set(rules[0]) == {"host", "mode", "created_at", "updated_at"}
    assert sites.clear_rule("EXAMPLE.com") is True
    assert sites.clear_rule("example.com") is False
    assert sites.rules() == []
    with pytest.raises(InvalidInput):
        sites.set_rule("example.com", "maybe")
    with pytest.raises(InvalidInput):
        sites.set_rule("javascript:alert(1)", "off")


def test_rules_and_settings_persist_in_the_vault(vault_path: Path) -> None:
    from vodou_desktop.vault import Vault

    with Vault.open(vault_path) as v:
        SiteModes(v).set_rule("example.com", "off")
        SiteModes(v).set_global_default("suggest")
    with Vault.open(vault_path) as v:
        sites = SiteModes(v)
        assert sites.resolve("a.example.com").mode == "off"
        assert sites.global_default == "suggest"


def test_resolution_json_shape(sites: SiteModes) -> None:
    assert sites.resolve("www.chase.com").as_json() == {
        "host": "www.chase.com", "mode": "off", "reason": "sensitive default: bank", "rule_host": None,
        "category": "bank"}
    assert MODES == ("off", "suggest", "collect")


# -- the sensitive lists ----------------------------------------------------------------------

def test_each_category_file_has_criteria_and_dozens_of_real_domains() -> None:
    lists = default_lists()
    for category in CATEGORIES:
        path = resource_path("sensitive", f"{category}.txt")
        header = path.read_text(encoding="utf-8").splitlines()[:3]
        assert any("Criteria" in line for line in header), path
        count = sum(1 for c in lists.domains.values() if c == category)
        assert count >= 24, (category, count)
    # several countries: country-code suffixes among the listed domains
    suffixes = {d.rsplit(".", 1)[-1] for d in lists.domains}
    assert {"uk", "de", "fr", "au", "ca", "br", "in", "jp"} <= suffixes


def test_every_listed_entry_is_a_normalised_domain_with_a_known_suffix() -> None:
    for domain in default_lists().domains:
        assert domain == domain.lower().strip(".")
        # either under a public suffix, or (like nhs.uk) a listed public-suffix owner itself
        assert registrable_domain(domain) is not None or domain in {"nhs.uk"}, domain


@pytest.mark.parametrize(("host", "category"), [
    ("login.example.org", "sign-in"), ("sso.corp.example.co.uk", "sign-in"), ("auth2.example.com", "sign-in"),
    ("login-eu.example.com", "sign-in"), ("secure.example.net", "sign-in"), ("id.example.com", "sign-in"),
    ("loginator.example.com", None), ("example.com", None), ("login.evil.test", None),
    ("www.hmrc.gov.uk", "tax"), ("www.tax.service.gov.uk", "tax"), ("my.gov.au", "health"),
    ("online.citibank.com", "bank"), ("meine.deutsche-bank.de", "bank"), ("www.itau.com.br", "bank"),
])
def test_patterns_and_registrable_domains(host: str, category: str | None) -> None:
    assert default_lists().category_of(host) == category


def test_the_public_suffix_list_is_the_bundled_snapshot_without_network(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("tldextract tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    sensitive._extractor.cache_clear()
    assert registrable_domain("www.bbc.co.uk") == "bbc.co.uk"
    assert registrable_domain("a.b.example.com.br") == "example.com.br"
    assert registrable_domain("127.0.0.1") is None
    assert registrable_domain("localhost") is None
    extractor = sensitive._extractor()
    assert tuple(extractor.suffix_list_urls) == ()
    assert extractor._cache.enabled is False  # nothing fetched, nothing cached on disk


def test_lists_load_from_a_custom_folder(tmp_path: Path) -> None:
    for category in CATEGORIES:
        (tmp_path / f"{category}.txt").write_text("# Criteria: test\n", encoding="utf-8")
    (tmp_path / "bank.txt").write_text("# Criteria: test\nExample-Bank.COM.  # trailing comment\n")
    (tmp_path / "host-patterns.txt").write_text("vault\n")
    lists = SensitiveLists.load(tmp_path)
    assert lists.category_of("online.example-bank.com") == "bank"
    assert lists.category_of("vault.example.com") == "sign-in"
    assert lists.category_of("login.example.com") is None
