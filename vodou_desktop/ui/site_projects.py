"""The project chosen in the tray panel, remembered per site in a small JSON file of the config dir.

It scopes the panel's related matches and is the default project of a memory added from the panel.
"From this page" itself always lists every project (the probe counts them all).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from vodou_desktop import paths

log = logging.getLogger(__name__)


class SiteProjects:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.config_dir() / "site-projects.json"
        self._projects: dict[str, str] = self._load()

    def _load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("the per-site projects file could not be read (%s); starting empty", type(exc).__name__)
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def get(self, host: str | None) -> str | None:
        return self._projects.get(host) if host else None

    def set(self, host: str | None, project: str | None) -> None:
        if not host:
            return
        if project:
            self._projects[host] = project
        else:
            self._projects.pop(host, None)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self._projects, indent=1, sort_keys=True), encoding="utf-8")
