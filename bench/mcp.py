"""MCP round trip: ``search_memory`` through a real ``vodou mcp`` process and the SDK's stdio client,
against an in-process ``SearchService.search`` of the same queries on the same vault, in the same run.

Both sides embed the query (the figure a person feels), search under a project filter and return
the top 8. The MCP figure adds what the protocol costs: JSON-RPC over pipes, argument checks, the
project lookup, rendering each memory with its provenance. Target: MCP p50 <= 1.5x in-process p50.

    python -m bench.mcp [--size 10000] [--queries 100] [--no-model]

Both processes get the same number of torch/BLAS threads (``OMP_NUM_THREADS``, default 1 here): on an
oversubscribed machine two threads per process made one query's embedding 10-20x slower, which
would compare scheduling luck rather than the protocol.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before numpy or torch load, here and in the server
os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["OMP_NUM_THREADS"])

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from bench import measure  # noqa: E402
from bench.build import build  # noqa: E402
from bench.corpus import PROJECTS, queries  # noqa: E402
from vodou_desktop.runtime import Runtime  # noqa: E402
from vodou_desktop.search.embedder import Embedder, EmbedderState  # noqa: E402
from vodou_desktop.vault import FactFilter, Vault  # noqa: E402

K = 8
TARGET = 1.5


def build_vault(path: Path, size: int, model: Embedder | None) -> None:
    with Vault.open(path) as vault:
        build(vault, size, model, real=min(size, 1_000))


def in_process(path: Path, items: list[tuple[str, str]], embedder: Embedder | str) -> measure.Latency:
    with Runtime.open(path, embedder=embedder) as rt:
        if rt.embedder.wait(600) is EmbedderState.FAILED:
            raise SystemExit(f"model failed: {rt.embedder.error}")
        seconds = measure.samples(lambda it: rt.search.search(it[0], FactFilter(project=it[1]), k=K), items)
    return measure.Latency.of(seconds)


async def over_mcp(path: Path, items: list[tuple[str, str]], model: bool) -> measure.Latency:
    script = Path(sys.executable).parent / "vodou"
    command, args = (str(script), []) if script.exists() else (sys.executable, ["-m", "vodou_desktop"])
    env = {**os.environ, "VODOU_EMBEDDER": "default" if model else "none"}
    params = StdioServerParameters(command=command, args=[*args, "--vault", str(path), "mcp"], env=env)
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write), ClientSession(
                read, write, client_info=types.Implementation(name="bench", version="1")) as session:
            await session.initialize()
            first = await session.call_tool("search_memory", {"query": items[0][0], "project": items[0][1]})
            while model and first.structured_content and first.structured_content["search"] != "meaning and keyword":
                await anyio.sleep(0.5)  # the server's model is still loading: wait, do not time it
                first = await session.call_tool("search_memory", {"query": items[0][0], "project": items[0][1]})
            for query, project in items[:3]:  # warm-up, as in-process
                await session.call_tool("search_memory", {"query": query, "project": project, "k": K})
            seconds = []
            for query, project in items:
                t0 = time.perf_counter()
                result = await session.call_tool("search_memory", {"query": query, "project": project, "k": K})
                seconds.append(time.perf_counter() - t0)
                assert not result.is_error, result.content
    return measure.Latency.of(seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mcp", description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="facts in the vault (default 10000)")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--no-model", action="store_true", help="keyword search only, on both sides")
    args = parser.parse_args(argv)
    model = None if args.no_model else Embedder("default").start()
    if model is not None and model.wait(600) is not EmbedderState.READY:
        raise SystemExit(f"model failed: {model.error}")
    items = [(q, PROJECTS[i % 6]) for i, q in enumerate(queries(args.queries))]
    with tempfile.TemporaryDirectory(prefix="vodou-bench-mcp-") as folder:
        os.environ["VODOU_HOME"] = folder  # the server's settings, logs and runtime files stay here
        path = Path(folder) / "vault.sqlite"
        t0 = time.perf_counter()
        build_vault(path, args.size, model)
        built = time.perf_counter() - t0
        local = in_process(path, items, model if model is not None else "none")
        remote = anyio.run(over_mcp, path, items, model is not None)
    report: dict[str, Any] = {
        "size": args.size, "queries": len(items), "model": model is not None, "threads": os.environ["OMP_NUM_THREADS"],
        "build_s": round(built, 1),
        "in_process_p50_ms": round(local.p50, 2), "in_process_p95_ms": round(local.p95, 2),
        "mcp_p50_ms": round(remote.p50, 2), "mcp_p95_ms": round(remote.p95, 2),
        "ratio_p50": round(remote.p50 / local.p50, 2), "target_ratio": TARGET,
        "load_average": [round(x, 2) for x in os.getloadavg()], "date_utc": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                          time.gmtime()),
    }
    width = max(map(len, report))
    for key, value in report.items():
        print(f"{key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
