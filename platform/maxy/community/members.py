"""Members and their profiles.

A member is a person in the account, known by a ``memberId`` (the id a server's MEMBER_ID or an
API key's ``memberId`` pins). The member's MemberProfile holds identity (name, bio, location),
narrative and attributes (skills, interests); it is embedded, and beside it a ProfileHyde
document says what a good match for this person looks like (written by the model, or by a
template without one), embedded too and regenerated only when the profile's text changes.

The profile also says who takes the member's turns in a negotiation (``negotiationMode``):
``system`` (the default: the system negotiator, in-process) or ``personal`` (the member's own
agent polls for its turns; one it leaves waiting 24 hours falls back to the system negotiator).
It is not part of the profile's text, so changing it re-embeds nothing.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Iterable
from typing import Any

from ..config import MEMBER_ID_PATTERN, Settings, get_settings
from ..db import Database
from ..errors import ValidationError
from ..graph.write import Edge, GraphWriter, NodeSpec
from ..identifiers import unknown_member
from ..llm import LLMUnavailable, complete
from ..logs import log_line
from . import trace
from .models import model_for
from .view import MemberView, visible_member_clause

MEMBER_ID_RE = re.compile(MEMBER_ID_PATTERN)
PROFILE, PROFILE_HYDE = "MemberProfile", "ProfileHyde"
MAX_NAME, MAX_TEXT, MAX_ATTRIBUTES, MAX_ATTRIBUTE = 200, 4000, 50, 100
_NAMESPACE = uuid.UUID("5b0f7c52-6a0e-4c39-9d8e-3f1c2a7b9e10")
_HYDE_SYSTEM = (
    "You write the short profile of the person who would be a good match for someone in their "
    "community: who could help them, work with them or learn from them. Write it as that person's "
    "own profile, in the third person, 3 to 5 sentences, without naming anyone. Answer with the "
    "profile text only."
)
PROFILE_FIELDS = ("memberId", "name", "bio", "location", "narrative", "skills", "interests", "negotiationMode")
NEGOTIATION_MODES = ("system", "personal")


def check_member_id(value: object, field: str = "memberId") -> str:
    if not isinstance(value, str) or not MEMBER_ID_RE.fullmatch(value):
        raise ValidationError(
            field, f"{value!r} is not a member id: a letter or digit, then letters, digits, '.', '_', '@' or '-'"
        )
    return value


def profile_node_id(account_id: str, member_id: str) -> str:
    """The nodeId of a member's profile (stable: one profile per member of an account)."""
    return f"member-{uuid.uuid5(_NAMESPACE, f'{account_id}/{member_id}')}"


def hyde_node_id(account_id: str, member_id: str) -> str:
    return f"profile-hyde-{uuid.uuid5(_NAMESPACE, f'{account_id}/{member_id}/hyde')}"


def check_negotiation_mode(value: object, field: str = "negotiationMode") -> str:
    if value not in NEGOTIATION_MODES:
        raise ValidationError(
            field,
            f"system (the system negotiator takes the turns) or personal (your own agent polls for them), got {value!r}",
        )
    return str(value)


def _text(value: object, field: str, limit: int, *, required: bool = False) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip() and not required):
        if required:
            raise ValidationError(field, "is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(field, "must be non-empty text")
    if len(value) > limit:
        raise ValidationError(field, f"at most {limit} characters (got {len(value)})")
    return value.strip()


def _attributes(values: Iterable[object], field: str) -> list[str]:
    if isinstance(values, str):
        raise ValidationError(field, "must be a list of short texts, not one string")
    out: list[str] = []
    for i, value in enumerate(values):
        item = _text(value, f"{field}[{i}]", MAX_ATTRIBUTE, required=True)
        if item and item not in out:
            out.append(item)
    if len(out) > MAX_ATTRIBUTES:
        raise ValidationError(field, f"at most {MAX_ATTRIBUTES} entries")
    return out


def profile_text(profile: dict[str, Any]) -> str:
    """The profile as one text: identity, narrative, attributes (what is embedded and matched)."""
    parts = [profile.get("name") or ""]
    for key in ("bio", "location", "narrative"):
        if profile.get(key):
            parts.append(f"{key}: {profile[key]}" if key == "location" else str(profile[key]))
    for key in ("skills", "interests"):
        if profile.get(key):
            parts.append(f"{key}: {', '.join(profile[key])}")
    return "\n".join(p for p in parts if p)


def template_hyde(profile: dict[str, Any]) -> str:
    """What a good match looks like, without a model: the profile's own needs and offers restated."""
    skills, interests = profile.get("skills") or [], profile.get("interests") or []
    parts = [f"Someone who would be a good match for {profile['name']}."]
    if interests:
        parts.append(f"They work on or care about {', '.join(interests)}.")
    if skills:
        parts.append(f"They value or need {', '.join(skills)}, or bring skills that complement them.")
    if profile.get("narrative") or profile.get("bio"):
        parts.append(f"They fit this context: {profile.get('narrative') or profile.get('bio')}")
    if profile.get("location"):
        parts.append(f"Based near {profile['location']} or working remotely.")
    return " ".join(parts)


def _hyde(settings: Settings, profile: dict[str, Any], use_model: bool) -> tuple[str, str, str | None]:
    """(text, generatedBy model|template, degraded reason or None)."""
    if not use_model:
        return template_hyde(profile), "template", None
    setting = model_for(settings, "profile-hyde-generator")
    with trace.agent("profile-hyde-generator") as span:
        try:
            text = complete(
                settings,
                profile_text(profile),
                system=_HYDE_SYSTEM,
                max_tokens=setting.max_tokens,
                timeout=setting.timeout_s,
                model=setting.model,
            ).strip()[:MAX_TEXT]
        except LLMUnavailable as err:
            span.summary = f"template ({err.reason})"
            return template_hyde(profile), "template", err.reason
        span.summary = "model"
        return text, "model", None


def _existing_hyde(db: Database, account_id: str, node_id: str) -> dict[str, Any] | None:
    rows = db.read(
        "MATCH (h:Node {nodeId: $id}) WHERE h.accountId = $acc AND h.deletedAt IS NULL "
        "RETURN h.sourceHash AS sourceHash, h.text AS text, h.generatedBy AS generatedBy",
        id=node_id,
        acc=account_id,
    )
    return rows[0] if rows else None


def upsert_profile(
    writer: GraphWriter,
    member_id: str,
    *,
    name: str,
    bio: str | None = None,
    location: str | None = None,
    narrative: str | None = None,
    skills: Iterable[str] = (),
    interests: Iterable[str] = (),
    negotiation_mode: str | None = None,
    model: bool = True,
    settings: Settings | None = None,
) -> dict[str, Any]:
    """Create or replace ``member_id``'s profile (the member exists from then on) and its HyDE
    document. ``model=False`` (or no working model) writes the HyDE document from a template;
    an unchanged profile keeps the document it has. ``negotiation_mode`` (system|personal) is
    kept as stored when None (system for a new member). ``writer`` is a community writer
    (``view.community_writer``)."""
    started = time.monotonic()
    member_id = check_member_id(member_id)
    mode = None if negotiation_mode is None else check_negotiation_mode(negotiation_mode)
    profile: dict[str, Any] = {
        "memberId": member_id,
        "name": _text(name, "name", MAX_NAME, required=True),
        "bio": _text(bio, "bio", MAX_TEXT),
        "location": _text(location, "location", MAX_NAME),
        "narrative": _text(narrative, "narrative", MAX_TEXT),
        "skills": _attributes(skills, "skills"),
        "interests": _attributes(interests, "interests"),
    }
    text = profile_text(profile)
    source_hash = hashlib.sha256(text.encode()).hexdigest()
    account_id = writer.account.account_id
    pid, hid = profile_node_id(account_id, member_id), hyde_node_id(account_id, member_id)
    with trace.graph("profile"):
        cached = _existing_hyde(writer.db, account_id, hid)
        if cached and cached["sourceHash"] == source_hash and (cached["generatedBy"] == "model" or not model):
            hyde_text, generated_by, reason = cached["text"], cached["generatedBy"], None
            fresh = False
        else:
            hyde_text, generated_by, reason = _hyde(settings or get_settings(), profile, model)
            fresh = True
        stored = {k: (v if v != [] else None) for k, v in profile.items()}
        if mode is not None:
            stored["negotiationMode"] = mode
        specs = [NodeSpec([PROFILE], {**stored, "text": text}, node_id=pid)]
        if fresh:
            hyde = {"memberId": member_id, "text": hyde_text, "sourceHash": source_hash, "generatedBy": generated_by}
            specs.append(NodeSpec([PROFILE_HYDE], hyde, node_id=hid, edges=[Edge("HAS_HYDE", pid, "in")]))
        results = writer.write_many(specs)
    if mode is None:
        mode = negotiation_mode_of(writer.db, MemberView(writer.caller), member_id)
    log_line(
        "community",
        op="profile",
        member=member_id,
        mode=mode,
        created=results[0].created,
        hyde=generated_by,
        cached=not fresh,
        ms=int((time.monotonic() - started) * 1000),
    )
    return {
        **profile,
        "negotiationMode": mode,
        "nodeId": pid,
        "created": results[0].created,
        "embedded": results[0].embedded,
        "hyde": {"text": hyde_text, "generatedBy": generated_by, "cached": not fresh, "degradedReason": reason},
    }


_PROFILE_RETURN = ", ".join(f"n.{f} AS {f}" for f in PROFILE_FIELDS)


def list_profiles(db: Database, viewer: MemberView, member_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The profiles ``viewer`` sees (own, and shared networks' members), by memberId; only the
    named ones when ``member_ids`` is given."""
    guard = visible_member_clause(viewer, "n")
    ids = None if member_ids is None else [check_member_id(m) for m in member_ids]
    rows = db.read(
        f"MATCH (n:{PROFILE}) WHERE {guard.clause} AND ($ids IS NULL OR n.memberId IN $ids) "
        f"RETURN n.nodeId AS nodeId, {_PROFILE_RETURN} ORDER BY n.memberId",
        ids=ids,
        **guard.params,
    )
    return [
        {
            **r,
            "skills": r["skills"] or [],
            "interests": r["interests"] or [],
            "negotiationMode": r["negotiationMode"] or "system",
        }
        for r in rows
    ]


def get_profile(db: Database, viewer: MemberView, member_id: str) -> dict[str, Any] | None:
    """``member_id``'s profile, or None when it does not exist or ``viewer`` may not see it."""
    rows = list_profiles(db, viewer, [member_id])
    return rows[0] if rows else None


def negotiation_mode_of(db: Database, viewer: MemberView, member_id: str) -> str:
    """Who takes ``member_id``'s negotiation turns: ``personal`` when the member's profile says
    their own agent does, else ``system`` (also for a member ``viewer`` cannot see)."""
    profile = get_profile(db, viewer, member_id)
    return "personal" if profile is not None and profile["negotiationMode"] == "personal" else "system"


def require_member(db: Database, viewer: MemberView, member_id: str, field: str = "memberId") -> str:
    """``member_id`` when it names a member ``viewer`` sees; else the unknown-member refusal
    (the same whether the member is absent or hidden)."""
    check_member_id(member_id, field)
    if get_profile(db, viewer, member_id) is None:
        raise unknown_member(member_id, field)
    return member_id
