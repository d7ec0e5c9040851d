"""Vodou Desktop: a person's AI memory in a local SQLite vault."""

__version__ = "0.1.0"
APP_NAME = "Vodou Desktop"
APP_ID = "vodou-desktop"

# Before any dependency is imported, in every entry point: telemetry off, model hubs offline (DATA-6).
from vodou_desktop import offline as _offline  # noqa: E402

_offline.apply()
