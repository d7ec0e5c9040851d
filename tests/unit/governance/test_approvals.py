"""The approval gate: an erase a model proposed and the person approved leaves no trace of the site,
in the approvals table or anywhere else in the vault's files."""

from __future__ import annotations

from pathlib import Path

from tests.support import total_hits
from vodou_desktop.governance.approvals import ApprovalGate, ToolBox, Turn
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.governance.sitemodes import SiteModes
from vodou_desktop.ingest.remember import Origin, remember
from vodou_desktop.vault import Vault

HOST = "clinic-zq7.example"


def test_an_approved_erase_keeps_no_name_of_the_site(vault_path: Path) -> None:
    with Vault.open(vault_path) as vault:
        remember(vault, "appointment on Tuesday", Origin(kind="note", url=f"https://{HOST}/booking"))
        gate = ApprovalGate(vault, ToolBox(vault, SiteModes(vault), None, None, Forgetting(vault)))
        parked = gate.submit("erase", {"host": HOST}, Turn(None, has_page_content=False))
        assert parked["status"] == "pending"  # an erase always asks
        decided = gate.resolve(parked["approval"]["id"], "approve")
        assert decided["status"] == "approved", decided
        assert HOST not in repr(gate.approvals(pending_only=False))
        vault.write(lambda c, ch: c.execute("PRAGMA wal_checkpoint(TRUNCATE)"), transaction=False)
    assert total_hits(vault_path, HOST) == 0
    assert total_hits(vault_path, "appointment on Tuesday") == 0
