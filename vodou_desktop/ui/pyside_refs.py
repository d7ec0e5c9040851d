"""Keep ``None``, ``True`` and ``False`` alive under PySide6 wheels built for Python ≥ 3.12.

PySide6 6.12's wheels use the stable ABI and were built where ``None``/``True``/``False`` are
immortal (Python 3.12+), so their bindings return them without taking a reference. On Python 3.11
every void call (``setText``, ``processEvents``…), every ``Signal.emit`` (which returns ``True``)
and every model ``data()`` override that answers ``None`` drops one reference, and after a few
minutes of use Python frees ``None`` and aborts ("none_dealloc" / "bool_dealloc").
``pin_singletons`` gives the three objects a reference count no session can exhaust — what 3.12's
immortality does — and is a no-op on 3.12+.
"""

from __future__ import annotations

import ctypes
import sys

PIN = 1 << 40


def pin_singletons() -> bool:
    """Returns True when it pinned (Python < 3.12); idempotent enough (adds 2**40 each call)."""
    if sys.version_info >= (3, 12):
        return False
    for obj in (None, True, False):
        refcount = ctypes.c_ssize_t.from_address(id(obj))  # ob_refcnt is the first field of every object
        if refcount.value < PIN:
            refcount.value += PIN
    return True
