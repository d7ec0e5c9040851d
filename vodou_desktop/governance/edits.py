"""Work on memories, one or many at a time, each as one action (UI-7): what the memory browser's
selection, the CLI (``vodou mem forget 3 5 9``) and an AI tool call.

Every method is one write (one transaction), returns what changed (counts, the operation id the
undo journal knows it by, the ids acted on) and is undone as one by ``Journal.undo`` — except erase,
which is final. A memory keeps its id through a correction or a move. Ids are checked first: an
unknown id, or an earlier revision of a memory, refuses the whole action (nothing changes).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from vodou_desktop.errors import InvalidInput
from vodou_desktop.governance.forget import Forgetting
from vodou_desktop.vault import ALL_PROJECTS, FactFilter, Vault
from vodou_desktop.vault import journal_store as js
from vodou_desktop.vault import query as q
from vodou_desktop.vault import retraction as r
from vodou_desktop.words import plural

MAX_AT_ONCE = 100_000  # ids in one action (a whole 20,000-memory import fits five times)


def _ids(ids: Sequence[int] | int) -> list[int]:
    wanted = [ids] if isinstance(ids, int) else list(ids)
    if not wanted:
        raise InvalidInput("no memories selected")
    if len(wanted) > MAX_AT_ONCE:
        raise InvalidInput(f"{plural(len(wanted), 'memory')} at once is more than {MAX_AT_ONCE:,}; act on fewer")
    return wanted


class Edits:
    """The actions on memories of one vault. ``forgetting`` is the app's retraction service (its erase
    rewrites the copies Vodou keeps); by default one of its own."""

    def __init__(self, vault: Vault, forgetting: Forgetting | None = None) -> None:
        self.vault = vault
        self.forgetting = forgetting or Forgetting(vault)

    # -- one memory ---------------------------------------------------------------------------
    def correct(self, fact_id: int, text: str, by: str | None = None) -> dict[str, Any]:
        """Correct a memory's text in place: ``{"op", "id", "revision"}``, ``id`` being the memory's own
        (unchanged). The earlier text stays in its history, never recalled or searched."""
        return self.forgetting.correct_fact(int(fact_id), text, by=by)

    # -- one or many --------------------------------------------------------------------------
    def forget(self, ids: Sequence[int] | int) -> dict[str, Any]:
        """Hide memories (soft, undoable as one): ``{"op", "ids", "facts_hidden", "already_hidden"}``."""
        wanted = _ids(ids)
        if len(wanted) == 1:
            done = self.forgetting.forget_fact(wanted[0])
            return {"op": done["op"], "ids": wanted, "facts_hidden": done["facts_hidden"], "already_hidden": 0}
        return self.forgetting.forget_facts(wanted)

    def erase(self, ids: Sequence[int] | int) -> dict[str, Any]:
        """Delete memories and all their revisions for good (final; the caller has asked once, naming
        the count): ``{"op", "ids", "memories_erased", "facts_erased", "copies_rewritten", …}``."""
        wanted = _ids(ids)
        if len(wanted) == 1:
            done = self.forgetting.erase_fact(wanted[0])
            return {**done, "ids": wanted, "memories_erased": 1}
        return self.forgetting.erase_facts(wanted)

    def move(self, ids: Sequence[int] | int, project: str | None, *, new_project: bool | None = False
             ) -> dict[str, Any]:
        """Move memories to ``project`` (``None``: global); each keeps its id. ``project`` must be one of
        ``projects()`` unless ``new_project`` starts it on purpose. ``{"op", "project", "new_project",
        "moved", "skipped": {"preference", "forgotten", "already_there"}, "ids"}``."""
        wanted = _ids(ids)
        return dict(self.vault.write(lambda c, ch: js.move(c, ch, wanted, project, new_project=new_project)))

    def pin(self, ids: Sequence[int] | int, pinned: bool = True) -> dict[str, Any]:
        """Pin (or unpin) memories: ``{"op", "pinned", "changed", "unchanged", "ids"}``."""
        wanted = _ids(ids)
        return dict(self.vault.write(lambda c, ch: js.pin(c, ch, wanted, pinned)))

    def export(self, ids: Sequence[int] | int, out: IO[str] | Path, fmt: str = "jsonl") -> dict[str, int]:
        """Write the selected memories, with their history (JSON Lines for ``vodou import vodou``, or
        Markdown to read), to ``out`` (a file is written crash-safe). Returns the counts written."""
        from vodou_desktop.data.export import ExportScope, write_export_file, write_jsonl, write_markdown

        if fmt not in ("jsonl", "markdown"):
            raise InvalidInput(f"unknown export format {fmt!r}; jsonl or markdown")
        wanted = _ids(ids)
        lineage = self.vault.read(lambda c: sorted(r.lineage(c, js.memories(c, wanted))))
        scope = ExportScope(include_forgotten=True, ids=tuple(lineage))
        write = write_jsonl if fmt == "jsonl" else write_markdown
        if isinstance(out, Path):
            return write_export_file(out, lambda fh: write(self.vault, scope, fh))
        return write(self.vault, scope, out)

    # -- what the choosers show ---------------------------------------------------------------
    def projects(self) -> list[str]:
        """The projects a move can go to without starting a new one, by name."""
        return sorted(self.vault.read(js.known_projects))

    def counts(self, f: FactFilter | None = None) -> q.ProjectCounts:
        """Each project's count and the global count under ``f`` (the owner's view by default): the
        sidebar shows ``counts.count(name, Scope.PROJECT_ONLY)`` and the other scopes from the same read."""
        filt = f or FactFilter(project=ALL_PROJECTS)
        return self.vault.read(lambda c: q.project_counts(c, filt))
