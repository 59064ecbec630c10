"""The discovery agents' instructions and forced tools: the lens inferrer (1-5 search lenses,
each aimed at the profiles or the intents corpus), the HyDE generator (one hypothetical document
per lens, in its corpus's voice) and the opportunity evaluator (a score, reasoning and the
candidate's valency role for each pair)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..intents.prompts import profile_block
from .ranking import ROLES

CORPORA = ("profiles", "intents")
MAX_LENSES = 5
MAX_TEXT = 4000

LENS_SYSTEM = (
    "You plan a search for people in a community who could match what a member is looking for or "
    "offering. Infer 1-5 lenses: specific kinds of counterpart (domain, stage, place when the profile "
    "gives one), each aimed at one corpus: 'profiles' (who the person is) or 'intents' (what the "
    "person wants or offers right now)."
)

HYDE_SYSTEM = (
    "You write a short hypothetical document (2-4 sentences) that an ideal counterpart would have in "
    "a community's records, so that a search by meaning finds the real ones. Concrete and plausible; "
    "no names."
)

EVALUATOR_SYSTEM = (
    "You judge, as a neutral third party, whether two members of a community should meet. For each "
    "candidate score 0-100 (90-100: must meet, a near-perfect fit; 70-89: should meet, strong overlap; "
    "below 70: no opportunity), explain why in two or three sentences, and give the candidate's role: "
    "agent (the candidate can do something for the source), patient (the candidate needs something the "
    "source has) or peer (symmetric collaboration)."
)

LENS_TOOL: dict[str, Any] = {
    "name": "record_lenses",
    "description": "Record the search lenses.",
    "input_schema": {
        "type": "object",
        "properties": {
            "lenses": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_LENSES,
                "items": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string", "description": "the kind of counterpart, a few words"},
                        "corpus": {"type": "string", "enum": list(CORPORA)},
                        "reasoning": {"type": "string"},
                    },
                    "required": ["label", "corpus"],
                },
            }
        },
        "required": ["lenses"],
    },
}

HYDE_TOOL: dict[str, Any] = {
    "name": "write_hypothetical_document",
    "description": "Record the hypothetical document.",
    "input_schema": {
        "type": "object",
        "properties": {"document": {"type": "string"}},
        "required": ["document"],
    },
}

EVALUATE_TOOL: dict[str, Any] = {
    "name": "evaluate_opportunities",
    "description": "Record an evaluation for each candidate.",
    "input_schema": {
        "type": "object",
        "properties": {
            "evaluations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "candidate": {"type": "integer", "description": "the candidate's number"},
                        "score": {"type": "integer", "minimum": 0, "maximum": 100},
                        "reasoning": {"type": "string"},
                        "role": {"type": "string", "enum": list(ROLES)},
                    },
                    "required": ["candidate", "score", "reasoning", "role"],
                },
            }
        },
        "required": ["evaluations"],
    },
}


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def lens_prompt(source_text: str, profile: Mapping[str, Any] | None) -> str:
    return f"""{profile_block(profile)}

The member is looking for matches for:
<source>
{_clip(source_text)}
</source>

Call record_lenses with 1-{MAX_LENSES} lenses."""


def hyde_prompt(source_text: str, label: str, corpus: str) -> str:
    if corpus == "profiles":
        ask = (
            "Write the professional biography of someone who could fulfil this need, with the "
            f"expertise this lens names: {label}."
        )
    else:
        ask = (
            f"Write the goal or offer, in the first person, of someone who is: {label}, whose own "
            "needs would complement the source."
        )
    return f"""<source>
{_clip(source_text)}
</source>

{ask} Call write_hypothetical_document with it."""


def evaluate_prompt(
    source_text: str, source_profile: Mapping[str, Any] | None, candidates: Sequence[Mapping[str, Any]]
) -> str:
    blocks = []
    for i, c in enumerate(candidates):
        intents = "\n".join(f"- ({it['type']}) {it['description']}" for it in c.get("intents") or [])
        blocks.append(
            f'<candidate n="{i}">\n{profile_block(c.get("profile"))}\n<intents>\n{intents or "(none)"}\n'
            f"</intents>\n</candidate>"
        )
    return f"""The source member:
{profile_block(source_profile)}
<source>
{_clip(source_text)}
</source>

{_clip(chr(10).join(blocks))}

Call evaluate_opportunities with one evaluation per candidate (its n)."""
