"""The settings file (JSON in the config dir). Qt-free; the UI edits it through ``save``.

Only settings that live outside the vault are here (the vault path must be known before the vault
is open, the embedder before the search service starts). Site modes and the global default live in
the vault, so the CLI and the app always agree.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from vodou_desktop import paths
from vodou_desktop.errors import InvalidInput, KnownError
from vodou_desktop.shortcuts import DEFAULT_QUICK_SHORTCUT, validate_shortcut

DEFAULT_BRIDGE_PORT = 47653


@dataclass
class Settings:
    # "default" (bge-small-en-v1.5, bundled), "minilm" (all-MiniLM-L6-v2, bundled), "none", or a model folder
    embedder: str = "default"
    bridge_port: int = DEFAULT_BRIDGE_PORT
    model_base_url: str = ""  # optional OpenAI-compatible endpoint; empty = none
    model_name: str = ""
    # distil imported and captured conversations with that model (off: the rules do it, nothing is sent)
    distil_with_model: bool = False
    backups_enabled: bool = True  # rolling daily backups of the vault, made by the app
    backups_keep: int = 7
    backups_folder: str = ""  # empty = the "backups" folder beside the profile's vault
    mcp_max_chars: int = 20_000  # the most characters one MCP answer carries (previews, then "left out")
    quick_shortcut: str = DEFAULT_QUICK_SHORTCUT  # opens the quick-access box from any app; "" = none
    extra: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> Settings:
        if not isinstance(self.embedder, str) or not self.embedder.strip():
            raise InvalidInput("embedder must be 'default', 'minilm', 'none' or a model folder")
        if self.embedder not in ("default", "minilm", "none") and not Path(self.embedder).expanduser().is_dir():
            raise InvalidInput(f"embedder model folder does not exist: {self.embedder}")
        if not isinstance(self.bridge_port, int) or not 1024 <= self.bridge_port <= 65535:
            raise InvalidInput("bridge port must be a number between 1024 and 65535")
        if self.model_base_url and not self.model_base_url.startswith(("http://", "https://")):
            raise InvalidInput("model endpoint must be an http(s) URL")
        if not isinstance(self.distil_with_model, bool):
            raise InvalidInput("distil_with_model must be true or false")
        if self.distil_with_model and not self.model_base_url:
            raise InvalidInput("distilling with a model needs a model endpoint (model_base_url)")
        if not isinstance(self.backups_enabled, bool):
            raise InvalidInput("backups_enabled must be true or false")
        if not isinstance(self.backups_keep, int) or not 1 <= self.backups_keep <= 365:
            raise InvalidInput("the number of backups to keep must be between 1 and 365")
        if not isinstance(self.backups_folder, str):
            raise InvalidInput("the backups folder must be a path")
        if isinstance(self.mcp_max_chars, bool) or not isinstance(self.mcp_max_chars, int) \
                or not 4_000 <= self.mcp_max_chars <= 1_000_000:
            raise InvalidInput("mcp_max_chars must be a number of characters between 4000 and 1000000")
        if not isinstance(self.quick_shortcut, str):
            raise InvalidInput(f"the quick-access shortcut must be text such as {DEFAULT_QUICK_SHORTCUT}")
        self.quick_shortcut = validate_shortcut(self.quick_shortcut)
        return self


def load(path: Path | None = None) -> Settings:
    """Read settings; a missing file gives the defaults; a broken one is a clear error."""
    path = path or paths.config_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raw = {}
    except (OSError, ValueError) as exc:
        raise KnownError(f"Cannot read the settings file {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise KnownError(f"The settings file {path} is not a JSON object")
    known = {f.name for f in fields(Settings)} - {"extra"}
    settings = Settings(**{k: v for k, v in raw.items() if k in known})
    settings.extra = {k: v for k, v in raw.items() if k not in known}
    try:
        return settings.validate()
    except InvalidInput as exc:
        raise KnownError(f"The settings file {path} has a bad value: {exc}") from exc


_saving = threading.RLock()  # one save (or update) at a time in this process: two never share a temp file


def save(settings: Settings, path: Path | None = None) -> None:
    """Validate, then write atomically (temp file + rename) so a crash never leaves half a file."""
    settings.validate()
    path = path or paths.config_file()
    data = asdict(settings)
    data.update(data.pop("extra"))
    with _saving:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)


def update(change: Callable[[Settings], Settings], path: Path | None = None) -> Settings:
    """Read the file, apply ``change``, write it back, as one step: two parts of the app each changing
    their own setting (the first-run answers) never lose the other's."""
    with _saving:
        settings = change(load(path))
        save(settings, path)
        return settings


def embedder_choice(settings: Settings) -> str:
    """``VODOU_EMBEDDER`` in the environment overrides the file."""
    return os.environ.get("VODOU_EMBEDDER", "").strip() or settings.embedder
