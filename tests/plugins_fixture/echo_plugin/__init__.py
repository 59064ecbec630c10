"""Test plugin: its tools live in ``tools.py`` (the platform imports that submodule itself)."""
