"""Request bodies: a field *name* holding a lone UTF-16 surrogate is refused like a value holding one
(400 with a JSON error), on every route that takes a body."""

from __future__ import annotations

import json
import logging

import pytest

from tests.integration.bridge.helpers import ORIGIN, Bridge
from tests.integration.bridge.test_hardening import BODY_ROUTES, no_internal_errors
from tests.integration.bridge.test_security import SAMPLE_BODIES, concrete


def test_a_field_name_with_a_lone_surrogate_is_400_on_every_route(bridge: Bridge,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    for method, path in BODY_ROUTES:
        body = {**SAMPLE_BODIES[path.replace("{id}", "1")], "\ud800": "x"}
        pairing = "pair" in path
        reply = bridge.request(method, concrete(method, path), raw=json.dumps(body).encode(),
                               origin=ORIGIN if pairing else None, token=None if pairing else "default")
        assert reply.status == 400 and reply.code == "bad_request", (path, reply.raw)
        assert "a field name holds a lone UTF-16 surrogate" in reply.json["error"]["message"], path
    no_internal_errors(caplog)
