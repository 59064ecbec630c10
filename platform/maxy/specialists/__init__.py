"""Specialists: subagent definitions (``agents/*.md`` of the plugins, and the account's
``specialists/agents/``) and the gate that checks every tool they name against what this install
serves, at every server start and with ``maxy specialists check``.

- ``names``: Claude Code's own tools and the shapes of MCP tool names;
- ``definitions``: finding and reading the definition files (symbolic links kept inside their folder);
- ``catalogue``: the Maxy plugins this install knows and the tools each serves;
- ``classify``: one tool name's class (a pure function);
- ``gate``: the gate, its log lines and each specialist's strip-list and allowed tools;
- ``cli``: ``maxy specialists check|tools``.
"""
