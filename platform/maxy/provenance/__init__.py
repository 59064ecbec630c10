"""Process provenance: what the actions of a conversation, or the tasks of one kind, produced.

``queries`` holds the guarded queries over ``(Conversation)<-[:RAISED_DURING]-(Task)-[:PRODUCED]->(entity)``;
``audit_trail`` the paged reads of the ToolCall audit trail; ``cli`` the ``maxy audit ...``
commands. The Task model itself is :mod:`maxy.tasks`.
"""

from .audit_trail import list_tool_calls, tool_calls_touching
from .queries import produced_by_conversation, produced_ids, tasks_by_kind

__all__ = ["list_tool_calls", "produced_by_conversation", "produced_ids", "tasks_by_kind", "tool_calls_touching"]
