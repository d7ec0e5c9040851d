"""The prompts and resources a client shows beside the tools (SDK-free, over ``MemoryTools``).

Prompts: ``recall`` (the bounded memory block, as ``vodou recall`` prints it, for the project the
call is in) and ``remember-this-conversation`` (asks the model to save what the person stated,
one ``remember`` call each). Resources: the operator-memory block, and one summary per project
(how many memories of each kind, the newest few as previews). Both read through the same project
choice and query builder as the tools, so a pinned server offers only its project.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from vodou_desktop.errors import InvalidInput, NotFound
from vodou_desktop.governance.opm import OperatorMemory
from vodou_desktop.governance.recall import render_recall_block
from vodou_desktop.mcp.results import FALLIBLE, fact_result
from vodou_desktop.mcp.tools import Caller, MemoryTools
from vodou_desktop.vault import ALL_PROJECTS, FactFilter
from vodou_desktop.vault import query as q
from vodou_desktop.vault.projects_store import all_projects
from vodou_desktop.words import FACT_KINDS, LIST_KINDS

OPERATOR_URI = "vodou://operator-memory"
PROJECT_URI = "vodou://projects/{name}/summary"
RECENT = 5


@dataclass(frozen=True)
class PromptSpec:
    name: str
    title: str
    description: str
    arguments: tuple[tuple[str, str], ...]


PROMPTS = (
    PromptSpec("recall", "Recall memory",
               "The person's standing preferences and pinned notes, plus memories relevant to a topic"
               " (bounded: at most 8 entries and 4,096 characters).",
               (("topic", "Optional: what the conversation is about."),
                ("project", "Optional: the project (default: this client's project)."))),
    PromptSpec("remember-this-conversation", "Remember this conversation",
               "Ask the model to save what the person stated in this conversation, one memory each.",
               (("project", "Optional: the project to save into (default: this client's project)."),)),
)
PROMPTS_BY_NAME = {p.name: p for p in PROMPTS}


def get_prompt(tools: MemoryTools, name: str, arguments: dict[str, str] | None, caller: Caller) -> tuple[str, str]:
    """``(description, user message)`` of prompt ``name``."""
    spec = PROMPTS_BY_NAME.get(name)
    if spec is None:
        raise NotFound(f"no prompt {name[:60]!r}; the prompts are {', '.join(PROMPTS_BY_NAME)}")
    args = dict(arguments or {})
    unknown = set(args) - {a for a, _ in spec.arguments}
    if unknown:
        raise InvalidInput(f"unknown argument {sorted(unknown)[0][:60]!r} for prompt {name}")
    project = {"project": args["project"]} if args.get("project") else {}
    if name == "recall":
        data = tools.call("recall", {**project, **({"query": args["topic"]} if args.get("topic") else {})}, caller)
        return f"Recalled memory (project: {data['project'] or 'global only'})", data["text"]
    where = tools.project(project, caller)
    kinds = ", ".join(FACT_KINDS)
    text = (f"Look back over this conversation and save what the person stated that is worth keeping: facts about"
            f" them or their work, preferences, decisions and plans. Call the remember tool once for each, in the"
            f" person's own words, short and self-contained, with kind one of: {kinds}"
            + (f", and project {where.project!r}" if where.project else " (no project: global memories)")
            + ". Do not save secrets, passwords or keys, text copied from web pages, or guesses; skip what is"
              " already in memory (search_memory first when unsure). Then tell the person what you saved.")
    return f"Save this conversation's memories ({where.reason})", text


def list_resources(tools: MemoryTools, caller: Caller) -> list[dict[str, Any]]:
    """``{uri, name, title, description, mime_type}`` of every resource offered."""
    out = [{"uri": OPERATOR_URI, "name": "operator-memory", "title": "Standing preferences and pinned notes",
            "description": "The person's operator memory, as recall puts it first in every block",
            "mime_type": "text/plain"}]
    for name in _project_names(tools):
        out.append({"uri": PROJECT_URI.format(name=quote(name, safe="")), "name": f"project-{name}",
                    "title": f"Project {name}", "description": f"How many memories project {name} holds, and the"
                                                               " newest", "mime_type": "application/json"})
    return out


def read_resource(tools: MemoryTools, uri: str, caller: Caller) -> tuple[str, str]:
    """``(text, mime type)`` of resource ``uri``."""
    tools.runtime.vault.poll_external()
    if uri == OPERATOR_URI:
        return render_recall_block(OperatorMemory(tools.runtime.vault).recall(), []).text, "text/plain"
    prefix, suffix = PROJECT_URI.split("{name}")
    if not (uri.startswith(prefix) and uri.endswith(suffix)):
        raise NotFound(f"no resource {uri[:100]!r}")
    name = unquote(uri[len(prefix):-len(suffix)])
    if name not in _project_names(tools):
        raise NotFound(f"no project {name[:60]!r} here")
    where = tools.project({"project": name}, caller)
    filt = FactFilter(project=name)

    def read(c: Any) -> tuple[Any, ...]:
        own = {k: n for k in LIST_KINDS if (n := q.count_facts_by_project(  # this project's own, by kind
            c, FactFilter(project=ALL_PROJECTS, kinds=(k,))).get(name, 0))}
        total = q.count_facts_by_project(c, FactFilter(project=ALL_PROJECTS)).get(name, 0)
        newest = q.list_facts(c, filt, limit=RECENT * 20)  # the project's own among its newest and global ones
        return own, total, [f for f in newest if f.project == name][:RECENT]

    by_kind, total, recent = tools.runtime.vault.read(read)
    data = {"label": FALLIBLE, "project": name, "project_reason": where.reason, "memories": total,
            "by_kind": by_kind, "recent": [fact_result(f, preview=200) for f in recent]}
    return json.dumps(data, ensure_ascii=False, indent=1), "application/json"


def _project_names(tools: MemoryTools) -> list[str]:
    if tools.pinned is not None:
        return [tools.pinned]

    def read(c: Any) -> set[str]:
        return {n for n, _ in all_projects(c)} | set(q.count_facts_by_project(c, FactFilter(project=ALL_PROJECTS)))

    return sorted(tools.runtime.vault.read(read))
