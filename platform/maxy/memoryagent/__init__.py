"""The memory agent: a live conversation turned into durable memory.

The store (this package's ``spaces``, ``entries``, ``contexts`` and ``consistency``): named
memory spaces inside an account, one entry per message, versioned context documents, and a
barrier after which everything written is searchable. The rules the agent follows are the
memory-agent plugin's MCP prompts (``prompts``).
"""

from .consistency import await_consistency
from .contexts import get_context, put_context
from .entries import add_entry, list_entries
from .prompts import PROMPT_NAMES, load_prompts
from .spaces import check_memory

__all__ = [
    "PROMPT_NAMES",
    "add_entry",
    "await_consistency",
    "check_memory",
    "get_context",
    "list_entries",
    "load_prompts",
    "put_context",
]
