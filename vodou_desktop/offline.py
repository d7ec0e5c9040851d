"""Nothing leaves the machine (DATA-6): the switches that keep every dependency off the network.

``apply`` runs from the package's ``__init__``, so it comes before any dependency is imported in
every entry point: the ``vodou`` script, ``python -m vodou_desktop``, the bundle, the MCP server,
the ONNX export's child process (it inherits the environment) and the test suite. Several
libraries read these variables once, at import (ONNX Runtime's telemetry switch among them:
calling ``disable_telemetry_events()`` afterwards did not stop it), so setting them later is too late.

Two kinds of switch:

- ``FORCED`` are written over whatever the environment holds. They turn off telemetry and any
  download from a model hub. Vodou never needs either (the model ships inside a package; another
  model is a folder), and a value left in a person's shell by other work (``HF_HUB_OFFLINE=0``,
  ``ORT_DISABLE_TELEMETRY=0`` for a notebook) must not quietly turn them back on here; with the
  hub online, a mistyped model folder would even be taken for a hub name and downloaded.
- ``DEFAULTS`` only fill in what is unset: where a library writes its caches. A person may point
  them elsewhere; they stay on this machine either way.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

FORCED: dict[str, str] = {
    # ONNX Runtime: a device id and queued events under ~/.cache/Microsoft/, sent to Microsoft.
    "ORT_DISABLE_TELEMETRY": "1",
    # Hugging Face hub (used by transformers and sentence-transformers): no downloads, no
    # telemetry, no update checks, and never a stored hub token sent anywhere.
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_UPDATE_CHECK": "1",
    "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
    # The cross-tool convention (https://donottrack.sh), read by the hub and others.
    "DO_NOT_TRACK": "1",
    "DISABLE_TELEMETRY": "1",
}


def defaults() -> dict[str, str]:
    """Cache folders of dependencies, inside Vodou's own cache folder (removed with it)."""
    from vodou_desktop import paths

    cache = paths.cache_dir()
    return {
        # torch makes /tmp/torchinductor_USER at import (transformers imports torch._dynamo).
        "TORCHINDUCTOR_CACHE_DIR": str(cache / "torch"),
        # tldextract: Vodou reads the bundled public-suffix snapshot and never caches, but a
        # stray default extractor would write ~/.cache/python-tldextract/.
        "TLDEXTRACT_CACHE": str(cache / "tldextract"),
    }


def apply(environ: MutableMapping[str, str] | None = None) -> None:
    env = os.environ if environ is None else environ
    env.update(FORCED)
    for name, value in defaults().items():
        env.setdefault(name, value)
