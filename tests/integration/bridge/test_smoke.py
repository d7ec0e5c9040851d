"""The server starts, answers ping, and stamps its headers."""

from __future__ import annotations

from tests.integration.bridge.helpers import Bridge


def test_ping_without_token(bridge: Bridge) -> None:
    reply = bridge.get("/api/ping", token=None)
    assert reply.status == 200
    assert reply.json["api"] == "1.0" and reply.json["app"] == "vodou-desktop" and reply.json["paired"] is False
    assert reply.headers["X-Vodou-API"] == "1.0"
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert reply.headers["Cache-Control"] == "no-store"
    assert "frame-ancestors 'none'" in reply.headers["Content-Security-Policy"]
    assert reply.headers["Vary"] == "Origin"
    assert "Access-Control-Allow-Origin" not in reply.headers
    assert "Set-Cookie" not in reply.headers


def test_ping_knows_a_valid_token(bridge: Bridge) -> None:
    assert bridge.get("/api/ping").json["paired"] is True
