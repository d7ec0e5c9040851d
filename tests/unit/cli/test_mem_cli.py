"""`vodou mem …` end to end in-process: output shapes, errors, manual page links."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import run_cli


@pytest.fixture
def vault_arg(tmp_path: Path) -> list[str]:
    return ["--vault", str(tmp_path / "v.sqlite")]


def test_add_show_list_json(vault_arg: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    added = run_cli(*vault_arg, "mem", "add", "Ferns like shade", "--project", "garden", "--scope", "home",
                    "--url", "https://plants.example/ferns", "--title", "Ferns", "--json")
    assert added.code == 0, added.err
    fact = json.loads(added.out)
    assert (fact["project"], fact["scope"], fact["source_host"], fact["title"]) == (
        "garden", "home", "plants.example", "Ferns")
    shown = json.loads(run_cli(*vault_arg, "mem", "show", str(fact["id"]), "--json").out)
    assert shown["text"] == "Ferns like shade"
    listed = json.loads(run_cli(*vault_arg, "mem", "list", "--host", "example", "--json").out)
    assert [f["id"] for f in listed] == [fact["id"]]  # a rule on the parent covers subdomains
    listed = json.loads(run_cli(*vault_arg, "mem", "list", "--host", "plants.example", "--json").out)
    assert [f["id"] for f in listed] == [fact["id"]]


@pytest.mark.parametrize("argv, message", [
    (["mem", "show", "999"], "no memory with id 999"),
    (["mem", "add", "   "], "text is empty"),
    (["mem", "add", "x", "--url", "javascript:alert(1)"], "not a web page URL"),
    (["mem", "search", "x", "-k", "0"], "-k must be at least 1"),
    (["mem", "page-link", "5", "https://x.example"], "no memory with id 5"),
    (["mem", "page-link", "1", "file:///etc/passwd"], "not a web page URL"),
])
def test_errors_are_one_line_exit_2(vault_arg: list[str], argv: list[str], message: str,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    run_cli(*vault_arg, "mem", "add", "first fact")
    result = run_cli(*vault_arg, *argv)
    assert result.code == 2
    assert message in result.err and result.err.count("\n") == 1 and "Traceback" not in result.err


def test_page_link_cli_is_manual_and_survives_reindex(vault_arg: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    run_cli(*vault_arg, "mem", "add", "notes from page: https://a.example/one")
    linked = json.loads(run_cli(*vault_arg, "mem", "page-link", "1", "https://b.example/two", "--json").out)
    assert (linked["page_url"], linked["page_set_by"]) == ("https://b.example/two", "manual")


def test_version_and_real_process_exit_code(vault_arg: list[str]) -> None:
    assert run_cli("--version").out.startswith("vodou ")
    proc = subprocess.run([sys.executable, "-m", "vodou_desktop", *vault_arg, "mem", "show", "42"],
                          capture_output=True, text=True, env={"VODOU_EMBEDDER": "none", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.startswith("vodou: error:")


def test_add_with_a_url_obeys_the_site_mode(vault_arg: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    refused = run_cli(*vault_arg, "mem", "add", "balance is 1200", "--url", "https://www.chase.com/acct")
    assert refused.code == 2 and "sensitive default: bank" in refused.err and "vodou sites set" in refused.err
    assert json.loads(run_cli(*vault_arg, "mem", "list", "--json").out) == []
    assert run_cli(*vault_arg, "sites", "set", "chase.com", "collect").code == 0
    assert run_cli(*vault_arg, "mem", "add", "balance is 1200", "--url", "https://www.chase.com/acct").code == 0
    run_cli(*vault_arg, "sites", "set", "wiki.example", "suggest")
    linked = run_cli(*vault_arg, "mem", "page-link", "1", "https://wiki.example/a")
    assert linked.code == 2 and "suggest" in linked.err


def test_tray_app_without_a_display_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    result = run_cli()
    assert result.code == 2 and "vodou serve" in result.err and "Traceback" not in result.err
