"""The memory agent's rules, as the memory-agent plugin serves them over MCP.

The three prompts are Markdown files of the plugin (``maxy_plugins/memory_agent/prompts``),
listed in its PLUGIN.md; the MCP server registers them as prompts and the agent reads them
here through the same manifest, so one edit changes what every client and the agent follow.
"""

from __future__ import annotations

from ..plugins.discovery import plugin_folder
from ..plugins.manifest import MANIFEST_FILE, ManifestError, load_manifest, read_prompts

PLUGIN = "memory-agent"
PROMPT_NAMES = ("entry_capture_prompt", "summary_prompt", "context_prompt")


def load_prompts() -> dict[str, str]:
    """Prompt name -> its text, for each of ``PROMPT_NAMES``."""
    manifest = load_manifest(plugin_folder(PLUGIN) / MANIFEST_FILE)
    texts = read_prompts(manifest)
    missing = [name for name in PROMPT_NAMES if name not in texts]
    if missing:
        raise ManifestError(f"{manifest.path}: key 'prompts' lacks {', '.join(missing)}; the memory agent needs them")
    return {name: texts[name] for name in PROMPT_NAMES}
