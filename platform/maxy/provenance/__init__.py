"""Process provenance: what the actions of a conversation, or the tasks of one kind, produced.

``queries`` holds the guarded queries over ``(Conversation)<-[:RAISED_DURING]-(Task)-[:PRODUCED]->(entity)``;
``cli`` the ``maxy audit ...`` commands. The Task model itself is :mod:`maxy.tasks`.
"""

from .queries import produced_by_conversation, produced_ids, tasks_by_kind

__all__ = ["produced_by_conversation", "produced_ids", "tasks_by_kind"]
