"""``vodou mcp``: the vault served to AI tools over the Model Context Protocol (MCP-1). Qt-free.

- ``schemas``: the tools, their JSON input schemas (with limits) and argument checking;
- ``results``: how a memory is shown to a model (preview, provenance, age, the fallible label, page
  text marked as data) and the size budget of an answer;
- ``tools``: the tools themselves, a thin adapter over the services the CLI and bridge use;
- ``offers``: the prompts and resources;
- ``projects``: which project a call is in (pin, argument, client roots, working folder, default);
- ``transport``: stdio, each line checked before the SDK sees it (JSON-RPC errors for the rest);
- ``server``: the official SDK's low-level server;
- ``install`` and ``client_config``: ``vodou mcp install / uninstall / --print-config CLIENT``.
"""
