"""The intent agents' instructions and the one tool each is made to call (forced tool use):
the inferrer (explicit intents from text), the verifier (speech act, felicity, entropy, and an
enriched description for a vague intent), the reconciler (create / update / expire against the
member's active intents) and the indexer (how well an intent fits a network)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .verification import SPEECH_ACTS

INTENT_TYPES = ("seeking", "offering")
MAX_PROMPT_TEXT = 8000

INFERRER_SYSTEM = (
    "You read what a member of a community wrote and extract their explicit intents: things they "
    "are looking for (seeking) or can give (offering). Only intents the text states; never invent "
    "one. Each description is one self-contained sentence in the member's voice."
)

VERIFIER_SYSTEM = (
    "You check one intent of a community member with speech-act theory. Classify its speech act "
    "(COMMISSIVE: the speaker commits to offer something; DIRECTIVE: the speaker asks for something; "
    "DECLARATION: the speaker establishes a state of affairs; ASSERTIVE: a statement of belief; "
    "EXPRESSIVE: a feeling). Score the felicity conditions 0-100: authority (does the speaker have "
    "standing for it), sincerity (is it genuine), clarity (is it specific enough to act on); and the "
    "semantic entropy 0-1 (how many different things it could mean). When the intent is vague "
    "(entropy above 0.75 or clarity below 40), write a more specific description grounded only in "
    "the member's profile."
)

RECONCILER_SYSTEM = (
    "You keep a community member's list of active intents current. Compare the new intents with the "
    "active ones and decide for each: create a new intent, update an active one (same goal, new "
    "wording or detail), or expire an active one the new text makes stale. A new intent that only "
    "repeats an active one needs no action."
)

INDEXER_SYSTEM = (
    "You decide whether a member's intent belongs in a network of a community. Score 0-1 how well "
    "the intent fits the network's purpose (indexScore, from the network's prompt) and how well it "
    "fits what the member said they want from this network (memberScore, from the member's prompt). "
    "Score only against the prompts you are given."
)

INFER_TOOL: dict[str, Any] = {
    "name": "record_intents",
    "description": "Record the explicit intents the text states (an empty list when it states none).",
    "input_schema": {
        "type": "object",
        "properties": {
            "intents": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "description": {"type": "string", "description": "the intent, one sentence"},
                        "type": {"type": "string", "enum": list(INTENT_TYPES)},
                        "confidence": {"type": "number", "description": "0-1"},
                        "reasoning": {"type": "string"},
                    },
                    "required": ["description", "type"],
                },
            }
        },
        "required": ["intents"],
    },
}

VERIFY_TOOL: dict[str, Any] = {
    "name": "verify_intent",
    "description": "Record the verification of the intent.",
    "input_schema": {
        "type": "object",
        "properties": {
            "speechAct": {"type": "string", "enum": list(SPEECH_ACTS)},
            "felicity": {
                "type": "object",
                "properties": {
                    "authority": {"type": "integer", "minimum": 0, "maximum": 100},
                    "sincerity": {"type": "integer", "minimum": 0, "maximum": 100},
                    "clarity": {"type": "integer", "minimum": 0, "maximum": 100},
                },
                "required": ["authority", "sincerity", "clarity"],
            },
            "entropy": {"type": "number", "minimum": 0, "maximum": 1},
            "reasoning": {"type": "string"},
            "enrichedDescription": {
                "type": "string",
                "description": "only for a vague intent: a more specific description from the profile",
            },
        },
        "required": ["speechAct", "felicity", "entropy"],
    },
}

RECONCILE_TOOL: dict[str, Any] = {
    "name": "reconcile_intents",
    "description": "Record the actions that bring the member's active intents up to date.",
    "input_schema": {
        "type": "object",
        "properties": {
            "actions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["create", "update", "expire"]},
                        "intentId": {"type": "string", "description": "the active intent (update, expire)"},
                        "candidate": {"type": "integer", "description": "the new intent's number (create, update)"},
                        "reasoning": {"type": "string"},
                    },
                    "required": ["action"],
                },
            }
        },
        "required": ["actions"],
    },
}

INDEX_TOOL: dict[str, Any] = {
    "name": "score_intent_network",
    "description": "Record how well the intent fits the network.",
    "input_schema": {
        "type": "object",
        "properties": {
            "indexScore": {"type": "number", "minimum": 0, "maximum": 1},
            "memberScore": {"type": "number", "minimum": 0, "maximum": 1},
            "reasoning": {"type": "string"},
        },
        "required": ["indexScore", "memberScore"],
    },
}


def _clip(text: str) -> str:
    return text if len(text) <= MAX_PROMPT_TEXT else text[:MAX_PROMPT_TEXT] + "…"


def profile_block(profile: Mapping[str, Any] | None) -> str:
    """The member's profile as the agents see it."""
    if not profile:
        return "<profile>(no profile)</profile>"
    lines = [f"{key}: {profile[key]}" for key in ("name", "bio", "location", "narrative") if profile.get(key)]
    for key in ("skills", "interests"):
        if profile.get(key):
            lines.append(f"{key}: {', '.join(map(str, profile[key]))}")
    return "<profile>\n" + _clip("\n".join(lines)) + "\n</profile>"


def infer_prompt(content: str, profile: Mapping[str, Any] | None) -> str:
    return f"""{profile_block(profile)}

The member wrote:
<text>
{_clip(content)}
</text>

Call record_intents with every explicit intent this text states."""


def verify_prompt(description: str, intent_type: str, profile: Mapping[str, Any] | None) -> str:
    return f"""{profile_block(profile)}

<intent type="{intent_type}">
{_clip(description)}
</intent>

Call verify_intent for this intent."""


def reconcile_prompt(candidates: Sequence[Mapping[str, Any]], active: Sequence[Mapping[str, Any]]) -> str:
    new = "\n".join(f'<new n="{i}" type="{c["type"]}">{c["description"]}</new>' for i, c in enumerate(candidates))
    old = "\n".join(
        f'<active intentId="{a["intentId"]}" type="{a["type"]}">{a["description"]}</active>' for a in active
    )
    return f"""New intents:
{_clip(new) or "(none)"}

Active intents:
{_clip(old) or "(none)"}

Call reconcile_intents with one action per change (create names the new intent's n; update names
both the active intentId and the new intent's n; expire names the active intentId)."""


def index_prompt(description: str, intent_type: str, network_prompt: str | None, member_prompt: str | None) -> str:
    parts = [f'<intent type="{intent_type}">\n{_clip(description)}\n</intent>']
    if network_prompt:
        parts.append(f"<network-prompt>\n{_clip(network_prompt)}\n</network-prompt>")
    if member_prompt:
        parts.append(f"<member-prompt>\n{_clip(member_prompt)}\n</member-prompt>")
    parts.append("Call score_intent_network for this intent.")
    return "\n\n".join(parts)
