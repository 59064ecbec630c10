"""Test plugin that cannot be imported (a missing dependency): the CLI must keep working without it."""

import maxy_test_dependency_that_is_not_installed  # noqa: F401
from maxy.plugins import ToolContext, tool


@tool("broken-ping", description="Never loads.", read_only=True)
def broken_ping(ctx: ToolContext) -> str:
    return "pong"
