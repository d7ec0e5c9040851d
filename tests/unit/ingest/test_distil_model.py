"""ING-5 / ING-6: the optional local model for distilling, against a scripted OpenAI-compatible server on
127.0.0.1 that answers good JSON, malformed JSON, JSON of the wrong shape, slowly, or with HTTP 500.

Every failure falls back to the rules for that window, and is counted with its reason; nothing is lost
and nothing is silent. The server records what it was sent, so the tests also see that only the person's
messages leave, and only to the endpoint set.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.support import closed_port, run_cli
from vodou_desktop import config
from vodou_desktop.errors import BugError, InvalidInput
from vodou_desktop.ingest import window as w
from vodou_desktop.ingest.distil import DistilCounts, ModelDistiller, from_settings, parse_answer
from vodou_desktop.ingest.extract import extract_bullets
from vodou_desktop.ingest.importer import import_export

from .conftest import all_facts
from .test_conversation_memory import chatgpt_export

T0 = 1_710_000_000.0
ONE = "I'm training for the Porto marathon on November 9, can you build me a plan?"
TWO = "We decided to rent a van for the move to Ghent."


def answer(memories: list[dict[str, Any]] | str) -> dict[str, Any]:
    content = memories if isinstance(memories, str) else json.dumps({"memories": memories})
    return {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": content}, "finish_reason": "stop"}]}


GOOD = answer([{"message": 1, "text": "Training for the Porto marathon on November 9.", "kind": "plan",
                "confidence": 0.9},
               {"message": 2, "text": "Renting a van for the move to Ghent.", "kind": "decision"},
               {"message": 2, "text": "Should I rent a van?", "kind": "fact"}])  # a question: never kept


@dataclass
class Script:
    """What the server answers, in turn (the last one repeats), and what it was sent."""

    # ("json", body) | ("raw", text) | ("status", n) | ("slow", seconds)
    replies: list[tuple[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    """A real aiohttp server on 127.0.0.1 (a port of its own), run in a thread with its own loop."""
    script = Script()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, Any] = {}

    async def completions(request: web.Request) -> web.StreamResponse:
        script.paths.append(request.path)
        script.received.append(await request.json())
        kind, value = script.replies[min(len(script.received), len(script.replies)) - 1]
        if kind == "slow":
            await asyncio.sleep(value)
            return web.json_response(GOOD)
        if kind == "status":
            return web.Response(status=value, text="model crashed")
        if kind == "raw":
            return web.Response(text=value, content_type="application/json")
        return web.json_response(value)

    async def start() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", completions)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        holder["runner"] = runner
        holder["port"] = runner.addresses[0][1]
        ready.set()

    def serve() -> None:
        loop.run_until_complete(start())
        loop.run_forever()
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10)
    yield f"http://127.0.0.1:{holder['port']}/v1", script
    asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


@pytest.fixture
def unused_port() -> Iterator[int]:
    """A port this test owns and keeps closed: every connection to it is refused."""
    with closed_port() as port:
        yield port


@pytest.fixture
def export(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.json"
    chat = [("user", ONE, T0), ("assistant", "Sure! Week 1: three easy runs.", T0 + 10), ("user", TWO, T0 + 20)]
    path.write_text(json.dumps(chatgpt_export(chat)), encoding="utf-8")
    return path


def _distilled(vault: Any) -> list[tuple[str, str, float | None]]:
    return [(f.text, f.kind, f.confidence) for f in all_facts(vault)]


def test_a_good_answer_is_validated_and_used(vault, server, export):
    url, script = server
    script.replies = [("json", GOOD)]
    model = ModelDistiller(url, "local-model", timeout=5)
    report = import_export(vault, export, "chatgpt", distil=model)
    assert _distilled(vault) == [("Training for the Porto marathon on November 9.", "plan", 0.9),
                                 ("Renting a van for the move to Ghent.", "decision", None)]
    assert report.model.as_json() == {"windows": 1, "by_model": 1, "fell_back": 0, "reasons": {},
                                      "dropped_questions": 1}
    sent = script.received[0]
    assert script.paths == ["/v1/chat/completions"] and sent["model"] == "local-model"
    assert sent["response_format"] == {"type": "json_object"} and sent["messages"][0]["role"] == "system"
    prompt = sent["messages"][1]["content"]
    assert ONE in prompt and TWO in prompt and "three easy runs" not in prompt  # only the person's words
    assert len(all_facts(vault, turns=True)) == 4  # the person's messages are kept whole whatever distils them


@pytest.mark.parametrize(("reply", "reason"), [
    (("raw", "this is not JSON {"), "malformed JSON"),
    (("json", answer("Sure! Here are the memories: - marathon")), "malformed JSON"),
    (("json", answer([{"message": 1, "text": "Likes running.", "kind": "opinion"}])), "wrong shape"),
    (("json", answer([{"message": 1, "text": "Likes running.", "kind": "fact", "extra": 1}])), "wrong shape"),
    (("json", answer([{"message": 7, "text": "Likes running.", "kind": "fact"}])), "message out of range"),
    (("json", {"choices": []}), "wrong shape"),
    (("status", 500), "http error"),
    (("slow", 3.0), "timeout"),
])
def test_a_failed_window_falls_back_to_the_rules_and_is_counted(vault, server, export, reply, reason):
    url, script = server
    script.replies = [reply]
    model = ModelDistiller(url, "m", timeout=1.0)
    report = import_export(vault, export, "chatgpt", distil=model)  # a slow server answers well, too late
    rules = [(b.text, b.kind, None if b.confidence >= 1 else b.confidence)
             for text in (ONE, TWO) for b in extract_bullets(text)]
    assert _distilled(vault) == rules and rules  # exactly what the rules give: nothing lost
    assert (report.model.windows, report.model.by_model, report.model.fell_back) == (1, 0, 1)
    assert dict(report.model.reasons) == {reason: 1}
    assert "fell back to the rules" in report.model.sentence() and reason in report.model.sentence()


def test_an_unreachable_endpoint_falls_back(vault, export, unused_port):
    model = ModelDistiller(f"http://127.0.0.1:{unused_port}/v1", "m", timeout=2)
    report = import_export(vault, export, "chatgpt", distil=model)
    assert dict(report.model.reasons) == {"unreachable": 1} and len(all_facts(vault)) == 2


def test_windows_are_split_and_each_is_one_prompt(vault, server, tmp_path):
    url, script = server
    script.replies = [("json", answer([{"message": 1, "text": "Part one memory.", "kind": "fact"}])),
                      ("status", 500)]
    chat = [("user", f"I keep bees number {i} in the garden in Ghent.", T0 + i) for i in range(6)]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(chatgpt_export(chat)), encoding="utf-8")
    model = ModelDistiller(url, "m", timeout=5, max_window_chars=150)
    report = import_export(vault, path, "chatgpt", distil=model)
    assert report.model.windows == len(script.received) == 2  # 6 messages of ~43 characters: 3 and 3
    assert (report.model.by_model, report.model.fell_back) == (1, 1)
    texts = [f.text for f in all_facts(vault)]
    assert texts[0] == "Part one memory." and texts[1:] == [f"I keep bees number {i} in the garden in Ghent."
                                                            for i in range(3, 6)]


def test_a_capture_flush_distils_with_the_model_outside_the_write(vault, server):
    url, script = server
    script.replies = [("json", answer([{"message": 1, "text": "Uses Podman for containers.", "kind": "fact"}]))]
    model = ModelDistiller(url, "m", timeout=5)
    w.enqueue(vault, [w.Entry("we use podman for containers, can you give me the flags?", "claude-code")])
    report = w.flush(vault, distil=model)
    assert [f.text for f in all_facts(vault)] == ["Uses Podman for containers."]
    assert len(report.turn_ids) == 1 and model.counts.by_model == 1


def test_no_proxy_from_the_environment_is_used(vault, server, export, monkeypatch, unused_port):
    """Nothing leaves the machine but to the endpoint set: a proxy in the environment is not followed."""
    url, script = server
    script.replies = [("json", GOOD)]
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{unused_port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    report = import_export(vault, export, "chatgpt", distil=ModelDistiller(url, "m", timeout=5))
    assert report.model.by_model == 1 and len(script.received) == 1


def test_off_by_default_and_refused_without_an_endpoint():
    assert config.Settings().distil_with_model is False and from_settings(config.Settings()) is None
    assert from_settings(config.Settings(model_base_url="http://127.0.0.1:1/v1")) is None  # an endpoint alone: off
    on = config.Settings(model_base_url="http://127.0.0.1:1/v1", distil_with_model=True)
    assert isinstance(from_settings(on), ModelDistiller)
    with pytest.raises(InvalidInput, match="needs a model endpoint"):
        config.Settings(distil_with_model=True).validate()
    with pytest.raises(InvalidInput, match="http"):
        ModelDistiller("file:///etc/passwd", "m")


def test_not_called_from_an_event_loop():
    async def inside() -> None:
        ModelDistiller("http://127.0.0.1:9/v1", "m").distil_window(["x"], DistilCounts())

    with pytest.raises(BugError, match="worker thread"):
        asyncio.run(inside())


def test_an_answer_wrapped_in_a_code_fence_is_read():
    fenced = answer("```json\n" + json.dumps({"memories": [{"message": 1, "text": "Keeps bees.", "kind": "fact"}]})
                    + "\n```")
    assert [[b.text for b in m] for m in parse_answer(fenced, 1, DistilCounts())] == [["Keeps bees."]]


def test_the_cli_distils_with_the_model_when_asked(vault_path, server, export, vodou_home):
    url, script = server
    script.replies = [("json", GOOD)]
    config.save(config.Settings(model_base_url=url, model_name="m"))
    res = run_cli("--vault", str(vault_path), "import", "chatgpt", str(export), "--distil", "model")
    assert res.code == 0, res.err
    assert res.out.splitlines()[0].endswith("; the model distilled 1 of 1 windows") and len(script.received) == 1
    res = run_cli("--vault", str(vault_path), "import", "chatgpt", str(export), "--distil", "rules")
    assert res.code == 0 and len(script.received) == 1  # nothing new, and never sent: rules asked for


def test_the_cli_refuses_the_model_without_an_endpoint(vault_path, export):
    res = run_cli("--vault", str(vault_path), "import", "chatgpt", str(export), "--distil", "model")
    assert res.code == 2 and res.err.startswith("vodou: error: --distil model needs a model endpoint")
