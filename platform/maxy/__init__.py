"""Maxy: a knowledge-graph memory for AI agents, on Neo4j."""

__version__ = "0.1.0"
