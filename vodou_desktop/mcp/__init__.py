"""``vodou mcp``: the vault served to AI tools over the Model Context Protocol (MCP-1). Qt-free.

- ``schemas``: the five tools, their JSON input schemas (with limits) and argument checking;
- ``results``: how a memory is shown to a model: provenance, age, the fallible label, page text
  marked as data;
- ``tools``: the tools themselves, a thin adapter over the services the CLI and bridge use;
- ``projects``: which project a call is in (argument, client roots, working folder);
- ``server``: the official SDK's low-level server on stdio;
- ``client_config``: the snippets ``vodou mcp --print-config CLIENT`` prints.
"""
