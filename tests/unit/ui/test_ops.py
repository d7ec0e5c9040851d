"""Ops: work off the GUI thread, results and every object the work held released on the GUI thread.

A Qt object whose last Python reference drops on a worker thread is destroyed there, and Qt crashes
on that (seen as a segfault in a worker at the end of a job). So whatever an op captured — the
work, its callbacks, the widgets they reference, the result or the exception — must be released on
the GUI thread, whichever thread finishes last.
"""

from __future__ import annotations

import threading
import time

import pytest

from vodou_desktop.ui.messages import MessageBridge
from vodou_desktop.ui.ops import Ops


class Probe:
    """Records the thread it is released on."""

    def __init__(self, released: list[str], role: str) -> None:
        self.released, self.role = released, role

    def __del__(self) -> None:
        self.released.append(f"{self.role} on {threading.current_thread().name}")


@pytest.fixture
def ops(qtbot):  # type: ignore[no-untyped-def]
    ops = Ops(MessageBridge())
    yield ops
    ops.shutdown()


def _submit(ops: Ops, released: list[str], *, fail: bool, got: list[object]) -> None:
    """Each probe is held only by the op: the work's closure, the callbacks, the result."""
    roles = ("work", "success", "failure", "result")
    in_work, in_success, in_failure, in_result = (Probe(released, role) for role in roles)

    def work() -> object:
        time.sleep(0.02)
        assert in_work is not None
        if fail:
            raise RuntimeError("planned")
        return in_result

    ops.run(work, lambda value: got.append(in_success is not None and value is not None),
            on_failure=lambda exc: got.append(in_failure is not None and exc is not None))


@pytest.mark.parametrize("fail", [False, True], ids=["success", "failure"])
def test_everything_an_op_held_is_released_on_the_gui_thread(qtbot, ops, fail):  # type: ignore[no-untyped-def]
    released: list[str] = []
    got: list[object] = []
    for _ in range(5):
        _submit(ops, released, fail=fail, got=got)
    qtbot.waitUntil(lambda: ops.pending == 0 and len(got) == 5, timeout=5_000)
    # The workers drop their last hold right after handing the result over: give them that moment.
    time.sleep(0.1)
    qtbot.wait(50)
    assert got == [True] * 5
    assert len(released) == 20
    gui = threading.main_thread().name
    assert [r for r in released if not r.endswith(f" on {gui}")] == []
