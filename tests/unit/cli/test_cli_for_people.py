"""The CLI speaks to people (issue 14, defect 9): stdin, validated kinds, plain words, wrapping,
filters, stats, projects, import hints, exit codes and the model line."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.support import run_cli
from vodou_desktop.ingest.remember import Origin, pin, remember
from vodou_desktop.vault import Vault

CHATGPT = [{"id": "c1", "title": "t", "mapping": {"a": {"id": "a", "message": {
    "id": "m1", "author": {"role": "user"}, "content": {"parts": ["I live in Lyon."]}, "create_time": 1.7e9}}}}]


@pytest.fixture
def vault_arg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("VODOU_EMBEDDER", "none")
    return ["--vault", str(tmp_path / "v.sqlite")]


def _said(text: str) -> str:
    return " ".join(text.split())


def test_mem_add_dash_reads_standard_input(vault_arg, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("The heron nests by the mill\n"))
    added = run_cli(*vault_arg, "mem", "add", "-", "--json")
    assert added.code == 0, added.err
    assert json.loads(added.out)["text"] == "The heron nests by the mill"
    monkeypatch.setattr("sys.stdin", io.StringIO("   \n"))
    empty = run_cli(*vault_arg, "mem", "add", "-")
    assert empty.code == 2 and "nothing on standard input" in empty.err


def test_kind_is_validated_and_a_preference_says_it_stays_global(vault_arg):
    bad = run_cli(*vault_arg, "mem", "add", "x", "--kind", "prefrence")
    assert bad.code == 2 and "invalid choice: 'prefrence'" in bad.err
    pref = run_cli(*vault_arg, "mem", "add", "Likes tea", "--kind", "preference", "--project", "work")
    assert pref.code == 0 and "remembered #1 (global)" in pref.out
    assert "stays global" in pref.err and "--project work" in pref.err


def test_vault_that_is_a_folder_is_an_error(tmp_path):
    for given in (str(tmp_path) + "/", str(tmp_path)):
        res = run_cli("--vault", given, "mem", "list")
        assert res.code == 2 and "is a folder" in res.err
    assert not (tmp_path / "vodou.sqlite").exists() and list(tmp_path.iterdir()) == []


def test_url_and_host_accept_what_sites_set_accepts(vault_arg):
    added = run_cli(*vault_arg, "mem", "add", "Ferns like shade", "--url", "plants.example/ferns", "--json")
    assert added.code == 0, added.err
    assert json.loads(added.out)["source_url"] == "https://plants.example/ferns"
    listed = run_cli(*vault_arg, "mem", "list", "--host", "https://plants.example/other?x=1", "--json")
    assert listed.code == 0, listed.err
    assert [f["text"] for f in json.loads(listed.out)] == ["Ferns like shade"]


def test_projects_list_includes_projects_that_hold_memories(vault_arg):
    run_cli(*vault_arg, "mem", "add", "Thesis chapter two is late", "--project", "thesis")
    run_cli(*vault_arg, "mem", "add", "Coffee before nine", "--kind", "preference")
    listed = run_cli(*vault_arg, "projects", "list")
    assert listed.code == 0 and "thesis\t1 memory (2 with the global ones)\t(no folder)" in listed.out
    assert "global\t1 memory (seen from every project)" in listed.out
    data = json.loads(run_cli(*vault_arg, "projects", "list", "--json").out)
    assert data == [{"name": "thesis", "path": None, "memories": 1, "with_global": 2}]


def test_stats(vault_arg):
    for args in (["A"], ["B", "--project", "thesis"], ["C", "--project", "thesis", "--kind", "decision"]):
        run_cli(*vault_arg, "mem", "add", *args)
    stats = run_cli(*vault_arg, "stats")
    assert stats.code == 0, stats.err
    assert stats.out.splitlines()[0] == "3 memories: 1 global, 2 in thesis"
    assert "kinds: 2 facts, 1 decision" in stats.out
    data = json.loads(run_cli(*vault_arg, "stats", "--json").out)
    assert data["memories"] == 3 and data["projects"] == {"thesis": 2}


def test_mem_list_filters(vault_arg, tmp_path):
    run_cli(*vault_arg, "mem", "add", "old fact")
    run_cli(*vault_arg, "mem", "add", "a decision", "--kind", "decision", "--project", "atlas")
    vault = Vault.open(tmp_path / "v.sqlite")
    pinned = remember(vault, "pinned one", Origin("cli"))
    pin(vault, pinned)
    vault.close()

    def texts(*args: str) -> list[str]:
        res = run_cli(*vault_arg, "mem", "list", *args, "--json")
        assert res.code == 0, res.err
        return [f["text"] for f in json.loads(res.out)]

    assert texts("--kind", "decision") == ["a decision"]
    assert texts("--pinned") == ["pinned one"]
    assert texts("--project", "atlas") == ["pinned one", "a decision", "old fact"]  # with the global ones
    assert len(texts("--since", "1d")) == 3 and texts("--since", "2999-01-01") == []
    bad = run_cli(*vault_arg, "mem", "list", "--since", "last tuesday")
    assert bad.code == 2 and "--since" in bad.err


def test_mem_show_speaks_plain_words_and_text_is_wrapped(vault_arg, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    long = "The grey heron " + "stands very still in the shallow water " * 8
    run_cli(*vault_arg, "mem", "add", long, "--url", "https://birds.example/heron", "--project", "birds")
    shown = run_cli(*vault_arg, "mem", "show", "1")
    assert shown.code == 0, shown.err
    assert shown.out.startswith("Memory #1\n")
    for line in ("Project: birds", "Kind: fact", "Came from: birds.example", "Page: https://birds.example/heron",
                 "Trust: you wrote it"):
        assert line in shown.out
    assert "source_kind" not in shown.out and "page_set_by" not in shown.out
    assert max(len(line) for line in shown.out.splitlines()) <= 60
    listed = run_cli(*vault_arg, "mem", "list")
    assert max(len(line) for line in listed.out.splitlines()) <= 60


def test_import_hints_the_right_importer_and_shows_progress_only_on_a_terminal(vault_arg, tmp_path):
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(CHATGPT))
    wrong = run_cli(*vault_arg, "import", "claude", str(export))
    assert wrong.code == 2 and f"run `vodou import chatgpt {export}`" in wrong.err
    right = run_cli(*vault_arg, "import", "chatgpt", str(export))
    assert right.code == 0, right.err
    assert "importing:" not in right.err  # stderr is not a terminal here


def test_exit_codes_are_in_help():
    res = run_cli("--help")
    assert res.code == 0
    assert "exit codes:" in res.out and "130" in res.out and "one line on stderr" in res.out


def test_import_progress_is_drawn_on_a_terminal(monkeypatch):
    from vodou_desktop.cli import import_

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    import_._progress(3, 3)
    assert terminal.getvalue() == "\rimporting: 3/3 conversations\n"


def test_a_search_that_waits_for_the_model_says_so(vault, tmp_path, capsys):
    from vodou_desktop import config
    from vodou_desktop.cli.output import ensure_embedded
    from vodou_desktop.runtime import Runtime
    from vodou_desktop.search.embedder import Embedder
    from vodou_desktop.search.service import SearchService
    from vodou_desktop.search.vectors import VectorIndex

    embedder = Embedder(str(tmp_path / "no-model-here"))  # real loader, not started yet: still loading
    index = VectorIndex(vault)
    ensure_embedded(Runtime(config.Settings(), vault, embedder, index, SearchService(vault, embedder, index)))
    err = capsys.readouterr().err
    assert err.startswith("vodou: note: ") and err.count("\n") == 1  # one line, said at once
    assert "keyword search only" in err


def _help_texts(parser, path="vodou"):  # type: ignore[no-untyped-def]
    """Every help string of every command and option, with the command it belongs to."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield path, choice.help or ""
            for name, sub in action.choices.items():
                yield from _help_texts(sub, f"{path} {name}")
        elif action.help and action.help is not argparse.SUPPRESS:
            yield path, action.help


def test_every_help_text_says_memories_not_facts():
    """One vocabulary (issue 14, defect 7): 'fact' appears only as the name of a kind."""
    import re

    from vodou_desktop.cli.main import build_parser

    offenders = [(where, text) for where, text in _help_texts(build_parser())
                 if re.search(r"\bfacts?\b", re.sub(r"\bfact \(default\)|\bfact,|'fact'", "", text))]
    assert offenders == []


def test_the_import_summary_counts_memories(vault_arg, tmp_path):
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(CHATGPT))
    res = run_cli(*vault_arg, "import", "chatgpt", str(export))
    assert res.code == 0 and "1 memory distilled" in res.out and "fact" not in res.out


def test_the_vodou_command_starts_without_numpy() -> None:
    """Every ``vodou`` command goes through ``__main__`` (it routes the model export child): loading it
    must not import numpy (~90 ms), which most commands never need."""
    import subprocess
    import sys

    probe = "import sys, vodou_desktop.__main__; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_mem_add_of_a_plain_note_loads_neither_the_secret_detector_nor_the_export_schema(tmp_path) -> None:
    """`vodou mem add` is felt: a note that cannot hold a secret never loads detect-secrets (~0.5-0.9 s),
    and no command but import and export loads the export's schema (pydantic) or the model client."""
    import os
    import subprocess
    import sys

    vault = str(tmp_path / "v.sqlite")
    probe = ("import sys\nfrom vodou_desktop.cli.main import main\ntry:\n"
             f"    main(['--vault', {vault!r}, 'mem', 'add', 'Ana plays the violin on Saturdays.'])\n"
             "except SystemExit:\n    pass\n"
             "print(sorted(m for m in ('detect_secrets', 'pydantic', 'vodou_desktop.ingest.distil',"
             " 'vodou_desktop.data.export_schema') if m in sys.modules))")
    env = {**os.environ, "VODOU_EMBEDDER": "none"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
