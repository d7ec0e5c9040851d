"""The one policy authority for page operations (GOV-4, GOV-5).

Every method that takes a page URL is decorated with ``@page_operation(access)``. The decorator
resolves the URL's site mode through ``SiteModes`` *before* the body runs:

- ``read`` (page match, probe): ``off`` → the operation's declared empty value; the body — and so
  memory — is never touched. ``suggest`` and ``collect`` run the body.
- ``suggest`` (typing suggestions): needs ``suggest`` or ``collect``; ``off`` → ``PolicyRefused``,
  because the client must ask the mode before sending anything typed on the page.
- ``write`` (note, link, selection, library, page-link): needs ``collect``; else ``PolicyRefused``.

The decorator fills ``PAGE_OPERATIONS``; ``scan_unregistered`` finds any public function that takes
a URL or host and is neither registered nor explicitly exempted, so a new page path cannot bypass
the policy silently (seed 000: N readers and N-1 checks).
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, TypeVar

from vodou_desktop.errors import BugError, InvalidInput, PolicyRefused
from vodou_desktop.governance.sitemodes import Resolution, SiteModes

F = TypeVar("F", bound=Callable[..., Any])
ACCESS = ("read", "suggest", "write")
ALLOWED_MODES = {"read": ("suggest", "collect"), "suggest": ("suggest", "collect"), "write": ("collect",)}
URL_PARAMS = ("url", "page_url")
GOVERNED_PACKAGES = ("vodou_desktop.governance", "vodou_desktop.bridge", "vodou_desktop.ingest", "vodou_desktop.mcp")
# Parameter names that mean "this function is about a page or a site".
PAGE_PARAM_NAMES = frozenset({"url", "page_url", "host", "url_or_host", "source_url", "page_host", "source_host"})

PAGE_OPERATIONS: dict[str, str] = {}
"""Qualified name (``module:Class.method``) → access, filled by ``@page_operation``."""

EXEMPT: dict[str, str] = {
    "vodou_desktop.governance.policy:require": "it is the policy itself",
    "vodou_desktop.governance.sitemodes:SiteModes.resolve": "it is the policy itself",
    "vodou_desktop.governance.sitemodes:SiteModes.set_rule": "the person setting a mode is the policy's input",
    "vodou_desktop.governance.sitemodes:SiteModes.clear_rule": "the person clearing a mode is the policy's input",
    "vodou_desktop.governance.forget:Forgetting.plan": "forget by host is its own policy: the owner retracts",
    "vodou_desktop.governance.forget:Forgetting.forget_host": "forget by host is its own policy: the owner retracts",
    "vodou_desktop.governance.forget:Forgetting.erase_host": "erase by host is its own policy: the owner retracts",
    "vodou_desktop.governance.sensitive:registrable_domain": "pure host arithmetic, reads no memory",
    "vodou_desktop.governance.sensitive:SensitiveLists.category_of": "pure host lookup, reads no memory",
    "vodou_desktop.governance.page_memory:ProbeCache.get": "called only from PageMemory.probe, after the policy",
    # Ingest helpers take a url only to stamp provenance; a caller that attaches a page (the
    # bridge's panel turns) must be a @page_operation("write") or call require() first.
    "vodou_desktop.ingest.window:store_window": "in-transaction helper; url is provenance, caller is governed",
    "vodou_desktop.ingest.window:capture_conversation": "url is provenance; the page caller must call require()",
}

_current: contextvars.ContextVar[Resolution | None] = contextvars.ContextVar("page_resolution", default=None)


def current_resolution() -> Resolution:
    """The resolution of the page operation running now (for bodies that report mode and reason)."""
    resolution = _current.get()
    if resolution is None:
        raise BugError("current_resolution() called outside a @page_operation")
    return resolution


def _qualified(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}:{fn.__qualname__}"


def page_operation(access: str, empty: Callable[[Resolution], Any] | None = None) -> Callable[[F], F]:
    """Decorate a method of an object with a ``sites: SiteModes`` attribute whose signature has
    ``url`` (or ``page_url``). ``empty(resolution)`` is what a ``read`` returns when the site is off."""
    if access not in ACCESS:
        raise BugError(f"unknown page access {access!r}")
    if access == "read" and empty is None:
        raise BugError("a read page operation must declare its empty value")

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        url_param = next((p for p in URL_PARAMS if p in signature.parameters), None)
        if url_param is None:
            raise BugError(f"{fn.__qualname__} is a page operation without a url parameter")

        @functools.wraps(fn)
        def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
            url = signature.bind(self, *args, **kwargs).arguments.get(url_param)
            if not url:
                raise InvalidInput("the page URL is required")
            sites: SiteModes = self.sites
            resolution = sites.resolve(url)
            if resolution.mode not in ALLOWED_MODES[access]:
                if access == "read" and empty is not None:
                    return empty(resolution)
                raise PolicyRefused(_refusal(access, resolution))
            token = _current.set(resolution)
            try:
                return fn(self, *args, **kwargs)
            finally:
                _current.reset(token)

        guarded.__page_operation__ = access  # type: ignore[attr-defined]
        PAGE_OPERATIONS[_qualified(fn)] = access
        return guarded  # type: ignore[return-value]

    return decorate


def require(sites: SiteModes, url: str, access: str) -> Resolution:
    """The same check for a caller that is not a method (a route, a script): returns the
    resolution when ``access`` is allowed, raises ``PolicyRefused`` otherwise (reads included)."""
    if access not in ACCESS:
        raise BugError(f"unknown page access {access!r}")
    if not url:
        raise InvalidInput("the page URL is required")
    resolution = sites.resolve(url)
    if resolution.mode not in ALLOWED_MODES[access]:
        raise PolicyRefused(_refusal(access, resolution))
    return resolution


def _refusal(access: str, resolution: Resolution) -> str:
    what = "saving from" if access == "write" else "suggestions on"
    need = "collect" if access == "write" else "suggest or collect"
    return (f"{what} {resolution.host} is not allowed: the site mode is {resolution.mode}"
            f" ({resolution.reason}); it needs {need}")


# -- the structural check ---------------------------------------------------------------------

def _modules(packages: Iterable[str]) -> list[ModuleType]:
    found = []
    for name in packages:
        package = importlib.import_module(name)
        found.append(package)
        for info in pkgutil.walk_packages(getattr(package, "__path__", []), prefix=f"{name}."):
            found.append(importlib.import_module(info.name))
    return found


def _public_callables(module: ModuleType) -> list[tuple[str, Callable[..., Any]]]:
    out: list[tuple[str, Callable[..., Any]]] = []
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            out.append((name, obj))
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                fn = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
                if inspect.isfunction(fn):
                    out.append((f"{name}.{attr}", fn))
    return out


def _takes_page(fn: Callable[..., Any]) -> bool:
    target = inspect.unwrap(fn)
    return bool(PAGE_PARAM_NAMES & set(inspect.signature(target).parameters))


def scan_unregistered(package: str | ModuleType | Iterable[str] | None = None) -> list[str]:
    """Public functions/methods under the governed packages that take a URL or host and are
    neither ``@page_operation`` nor in ``EXEMPT``. Must be empty (a test asserts it)."""
    if package is None:
        names: Iterable[str] = GOVERNED_PACKAGES
    elif isinstance(package, ModuleType):
        names = [package.__name__]
    elif isinstance(package, str):
        names = [package]
    else:
        names = list(package)
    missing = []
    for module in _modules(names):
        for qualname, fn in _public_callables(module):
            key = f"{module.__name__}:{qualname}"
            if not _takes_page(fn) or key in EXEMPT:
                continue
            if getattr(fn, "__page_operation__", None) is None:
                missing.append(key)
    return sorted(set(missing))
