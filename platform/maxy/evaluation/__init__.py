"""Retrieval-quality evaluation on public benchmark data (BEIR folders, conversations)."""
