"""The localhost bridge to the paired browser extension (aiohttp, Qt-free).

``docs/bridge-protocol.md`` is the contract; ``openapi.py`` describes the same routes for machines.
"""

API_VERSION = "1.0"
API_HEADER = "X-Vodou-API"
CLIENT_HEADER = "X-Vodou-Client"
