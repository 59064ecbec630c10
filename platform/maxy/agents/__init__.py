"""Public agents: their directories under the account (config and texts), ``maxy agent ...``."""

from .store import (
    AgentConfig,
    create_agent,
    delete_agent,
    list_agents,
    read_agent,
    update_agent,
)

__all__ = ["AgentConfig", "create_agent", "delete_agent", "list_agents", "read_agent", "update_agent"]
