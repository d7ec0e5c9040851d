"""The vault: the only package that speaks SQL. Qt-free."""

from vodou_desktop.vault.core import Vault
from vodou_desktop.vault.query import ALL_PROJECTS, FactFilter
from vodou_desktop.vault.records import Document, Fact
from vodou_desktop.vault.writer import Change

__all__ = ["ALL_PROJECTS", "Change", "Document", "Fact", "FactFilter", "Vault"]
