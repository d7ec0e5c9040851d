"""What the request handlers and the security middleware share: one object on the app."""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from vodou_desktop.bridge.events import EventHub
from vodou_desktop.bridge.pairing import PairingCodes
from vodou_desktop.bridge.tokens import TokenStore

MAX_BODY_BYTES = 2 * 1024 * 1024
BAD_TOKENS_PER_MINUTE = 20
BACKOFF_DELAY_S = 1.0
# The write budget of each paired token: this many state-changing requests per window, then 429.
WRITE_BUDGET = 60
WRITE_WINDOW_S = 10.0


@dataclass
class BridgeContext:
    tokens: TokenStore
    pairing: PairingCodes
    hub: EventHub
    services: Any  # bridge.services.Services (kept loose: tests build partial ones)
    port: int | None = None
    max_body: int = MAX_BODY_BYTES
    bad_token_times: deque[float] = field(default_factory=deque)
    write_budget: int = WRITE_BUDGET
    write_window_s: float = WRITE_WINDOW_S
    write_times: dict[str, deque[float]] = field(default_factory=dict)

    def allowed_hosts(self) -> frozenset[str]:
        if self.port is None:
            return frozenset()
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}", f"[::1]:{self.port}"})

    def note_bad_token(self) -> int:
        """Record one failed authentication; returns the failures of the last minute."""
        now = time.monotonic()
        self.bad_token_times.append(now)
        while self.bad_token_times and now - self.bad_token_times[0] > 60:
            self.bad_token_times.popleft()
        return len(self.bad_token_times)

    def spend_write(self, who: str) -> int | None:
        """Count one write of token ``who``; over budget, the whole seconds to wait (nothing is counted)."""
        now = time.monotonic()
        times = self.write_times.setdefault(who, deque())
        while times and now - times[0] >= self.write_window_s:
            times.popleft()
        if len(times) >= self.write_budget:
            return max(1, math.ceil(self.write_window_s - (now - times[0])))
        times.append(now)
        return None


CONTEXT = web.AppKey("vodou_bridge_context", BridgeContext)


def context_of(request: web.Request) -> BridgeContext:
    return request.app[CONTEXT]
