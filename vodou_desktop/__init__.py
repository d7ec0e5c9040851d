"""Vodou Desktop: a person's AI memory in a local SQLite vault."""

__version__ = "0.1.0"
APP_NAME = "Vodou Desktop"
APP_ID = "vodou-desktop"
