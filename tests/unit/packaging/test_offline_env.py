"""DATA-6: the switches ``vodou_desktop.offline`` sets before any dependency is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from vodou_desktop import offline, paths

ROOT = Path(__file__).resolve().parents[3]


def test_telemetry_and_hub_switches_win_over_the_environment() -> None:
    env = {name: "0" for name in offline.FORCED}
    offline.apply(env)
    assert env == {**offline.FORCED, **offline.defaults()}
    assert env["ORT_DISABLE_TELEMETRY"] == "1" and env["HF_HUB_OFFLINE"] == "1"


def test_cache_locations_follow_a_person_who_sets_them(vodou_home: Path) -> None:
    env = {"TORCHINDUCTOR_CACHE_DIR": "/elsewhere/torch"}
    offline.apply(env)
    assert env["TORCHINDUCTOR_CACHE_DIR"] == "/elsewhere/torch"
    assert env["TLDEXTRACT_CACHE"] == str(paths.cache_dir() / "tldextract")
    assert paths.cache_dir() == vodou_home / "cache"


def test_importing_the_package_sets_them_first(tmp_path: Path) -> None:
    """A fresh interpreter whose environment turns telemetry on: importing ``vodou_desktop`` (what
    every entry point does first) turns it off before anything else can be imported."""
    hostile = {name: "0" for name in offline.FORCED}
    keep = {k: v for k, v in os.environ.items() if k not in offline.FORCED and k not in offline.defaults()}
    code = ("import os, sys, json; import vodou_desktop; "
            "print(json.dumps({'env': {k: os.environ.get(k) for k in sys.argv[1:]}, "
            "'loaded': sorted(m for m in sys.modules if m.split('.')[0] in "
            "('onnxruntime', 'torch', 'transformers', 'huggingface_hub', 'sentence_transformers'))}))")
    out = subprocess.run([sys.executable, "-c", code, *offline.FORCED, "TORCHINDUCTOR_CACHE_DIR"],
                         env={**keep, **hostile, "VODOU_HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, check=True, timeout=120).stdout
    got = json.loads(out)
    assert got["loaded"] == []
    assert got["env"] == {**offline.FORCED, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache" / "torch")}
