"""The intent pipeline as a plain state machine: prep -> inference -> verification ->
reconciliation -> execution (create and update), prep -> execution (delete), and prep ->
inference -> verification (propose: a dry run that stores nothing).

Every model step degrades: explicit intents given as arguments skip inference; without a working
verifier they are stored as written with ``verified: false``; without a working reconciler each
new intent is created unless an active one already says the same (update mode: in place). Text
without explicit intents needs the inferrer: without it nothing is stored, and the answer says
why. One ``[intents] op=...`` line per operation; the steps are trace events.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...config import Settings
from ...errors import ValidationError
from ...graph.write import GraphWriter
from ...llm import LLMUnavailable
from ...logs import log_line
from .. import trace
from ..members import get_profile, require_member
from ..view import MemberView, unknown_network
from . import assignment
from .model import ask
from .prompts import (
    INFER_TOOL,
    INFERRER_SYSTEM,
    INTENT_TYPES,
    RECONCILE_TOOL,
    RECONCILER_SYSTEM,
    VERIFIER_SYSTEM,
    VERIFY_TOOL,
    infer_prompt,
    reconcile_prompt,
    verify_prompt,
)
from .reconcile import Action, checked_actions, rule_actions
from .store import (
    check_description,
    check_type,
    expire_intent,
    get_intent,
    new_intent_id,
    read_intents,
    unknown_intent,
    write_intent,
)
from .verification import Verdict, verdict_from

MAX_CONTENT = 20_000
MAX_INTENTS = 10
MODES = ("create", "update", "delete", "propose")


@dataclass
class Candidate:
    description: str
    type: str
    source: str  # explicit | inferred
    verdict: Verdict | None = None
    enriched_from: str | None = None

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"description": self.description, "type": self.type, "source": self.source}
        out["verified"] = self.verdict is not None
        if self.verdict is not None:
            out |= self.verdict.properties() | {"reasoning": self.verdict.reasoning}
        if self.enriched_from is not None:
            out["enrichedFrom"] = self.enriched_from
        return out

    def properties(self) -> dict[str, Any]:
        props: dict[str, Any] = {
            "description": self.description,
            "type": self.type,
            "status": "active",
            "source": self.source,
            "verified": self.verdict is not None,
            "enrichedFrom": self.enriched_from,
        }
        return props | (self.verdict.properties() if self.verdict is not None else {})


@dataclass
class State:
    """What the pipeline carries from step to step (the answer is built from it)."""

    mode: str
    member_id: str
    profile: dict[str, Any] | None = None
    active: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    created: list[dict[str, Any]] = field(default_factory=list)
    updated: list[dict[str, Any]] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)  # "step: reason"

    def degrade(self, step: str, err: LLMUnavailable) -> None:
        self.degraded.append(f"{step}: {err.reason}")

    def answer(self) -> dict[str, Any]:
        out: dict[str, Any] = {"memberId": self.member_id, "mode": self.mode}
        if self.mode == "propose":
            out["proposed"] = [c.public() for c in self.candidates]
        else:
            out |= {"created": self.created, "updated": self.updated, "expired": self.expired}
        out["dropped"] = self.dropped
        out["degraded"] = bool(self.degraded)
        out["reason"] = "; ".join(self.degraded) or None
        return out


def _member(writer: GraphWriter, view: MemberView, member_id: str | None) -> str:
    member = view.resolve(member_id)
    if member is None:
        raise ValidationError("memberId", "the account's admin acts for one member: name it with memberId")
    return require_member(writer.db, view, member)


def explicit_candidates(intents: Sequence[Mapping[str, Any]]) -> list[Candidate]:
    """Intents given as arguments, checked field by field."""
    if len(intents) > MAX_INTENTS:
        raise ValidationError("intents", f"at most {MAX_INTENTS} intents in one call")
    out = []
    for i, item in enumerate(intents):
        if not isinstance(item, Mapping):
            raise ValidationError(f"intents[{i}]", "an object {description, type}")
        description = check_description(item.get("description"), f"intents[{i}].description")
        out.append(Candidate(description, check_type(item.get("type"), f"intents[{i}].type"), "explicit"))
    return out


def _check_content(content: object) -> str:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError("content", "give the text to read intents from, or the intents themselves (intents)")
    if len(content) > MAX_CONTENT:
        raise ValidationError("content", f"at most {MAX_CONTENT} characters")
    return content


# -- the steps ------------------------------------------------------------------------------


def infer(settings: Settings, state: State, content: str) -> None:
    try:
        answer = ask(
            settings,
            "intent-inferrer",
            system=INFERRER_SYSTEM,
            prompt=infer_prompt(content, state.profile),
            tool=INFER_TOOL,
        )
    except LLMUnavailable as err:
        state.degrade("inference", err)
        return
    raw = answer.get("intents")
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, Mapping) or item.get("type") not in INTENT_TYPES:
            continue
        if isinstance(item.get("description"), str) and item["description"].strip():
            text = " ".join(item["description"].split())[:2000]
            state.candidates.append(Candidate(text, str(item["type"]), "inferred"))
    state.candidates = state.candidates[:MAX_INTENTS]


def _verdict(settings: Settings, candidate: Candidate, description: str, profile: dict[str, Any] | None) -> Verdict:
    answer = ask(
        settings,
        "intent-verifier",
        system=VERIFIER_SYSTEM,
        prompt=verify_prompt(description, candidate.type, profile),
        tool=VERIFY_TOOL,
    )
    return verdict_from(answer)


def verify(settings: Settings, state: State) -> None:
    """Keep the candidates whose speech act commits, directs or declares; enrich a vague one from
    the profile and verify it again. A failing verifier leaves the rest unverified."""
    kept: list[Candidate] = []
    for i, c in enumerate(state.candidates):
        try:
            v = _verdict(settings, c, c.description, state.profile)
            if v.kept and v.vague and v.enriched and v.enriched != c.description:
                again = _verdict(settings, c, v.enriched, state.profile)
                if again.kept:
                    c.enriched_from, c.description, v = c.description, v.enriched, again
        except LLMUnavailable as err:
            state.degrade("verification", err)
            kept.extend(state.candidates[i:])
            break
        if not v.kept:
            state.dropped.append(
                {"description": c.description, "type": c.type, "speechAct": v.speech_act, "reasoning": v.reasoning}
            )
            continue
        c.verdict = v
        kept.append(c)
    state.candidates = kept


def reconcile(settings: Settings, state: State, targets: Sequence[str] = ()) -> None:
    cands = [{"description": c.description, "type": c.type} for c in state.candidates]
    active = [a for a in state.active if a["intentId"] in targets] if targets else state.active
    if not cands:
        return
    if not active or state.degraded:  # nothing to compare with, or a model already failing: the rule
        state.actions = rule_actions(cands, active, targets)
        return
    try:
        answer = ask(
            settings,
            "intent-reconciler",
            system=RECONCILER_SYSTEM,
            prompt=reconcile_prompt(cands, active),
            tool=RECONCILE_TOOL,
        )
    except LLMUnavailable as err:
        state.degrade("reconciliation", err)
        state.actions = rule_actions(cands, active, targets)
        return
    raw = answer.get("actions")
    state.actions, _ = checked_actions(raw if isinstance(raw, list) else [], cands, [a["intentId"] for a in active])
    if targets and not state.actions:  # an update asked for is carried out, in place at least
        state.actions = rule_actions(cands, active, targets)


def execute(
    writer: GraphWriter, settings: Settings, state: State, networks: list[dict[str, Any]], direct: bool
) -> None:
    for action in state.actions:
        if action.action == "expire" and action.intent_id:
            expire_intent(writer, state.member_id, action.intent_id)
            state.expired.append(action.intent_id)
            continue
        c = state.candidates[action.candidate or 0]
        if action.action == "update" and action.intent_id:
            row = write_intent(writer, state.member_id, action.intent_id, c.properties())
            state.updated.append(row)
            continue
        row = write_intent(writer, state.member_id, new_intent_id(), c.properties())
        row["networks"] = assignment.assign(writer, settings, row, networks, direct=direct) if networks else []
        state.created.append(row)


# -- the operations -------------------------------------------------------------------------


def _log(state: State, started: float) -> None:
    log_line(
        "intents",
        op=state.mode,
        member=state.member_id,
        created=len(state.created),
        updated=len(state.updated),
        expired=len(state.expired),
        dropped=len(state.dropped),
        degraded=bool(state.degraded),
        reason=("; ".join(state.degraded) or None),
        ms=int((time.monotonic() - started) * 1000),
    )


def create_intents(
    writer: GraphWriter,
    view: MemberView,
    settings: Settings,
    *,
    member_id: str | None = None,
    content: str | None = None,
    intents: Sequence[Mapping[str, Any]] | None = None,
    network_id: str | None = None,
    propose: bool = False,
) -> dict[str, Any]:
    """Intents from ``content`` (inferred by the model) or given as ``intents`` ({description,
    type}), verified, reconciled with the member's active intents and stored; each new intent is
    assigned to ``network_id`` directly, or else to each of the member's networks that takes it.
    ``propose``: verify only, store nothing."""
    started = time.monotonic()
    member = _member(writer, view, member_id)
    explicit = explicit_candidates(intents) if intents else []
    text = _check_content(content) if content is not None or not explicit else None
    networks = assignment.member_networks(writer.db, view, member, network_id)
    if network_id is not None and not networks:
        raise unknown_network(network_id)
    state = State("propose" if propose else "create", member)
    with trace.graph("intent"):
        state.profile = get_profile(writer.db, view, member)
        state.active = read_intents(writer.db, view, member, limit=200)
        if explicit:
            state.candidates = explicit
        elif text is not None:
            infer(settings, state, text)
        if state.candidates:
            verify(settings, state)
        if not propose:
            reconcile(settings, state)
            execute(writer, settings, state, networks, direct=network_id is not None)
    _log(state, started)
    return state.answer()


def update_intent(
    writer: GraphWriter,
    view: MemberView,
    settings: Settings,
    intent_id: str,
    *,
    content: str | None = None,
    description: str | None = None,
    intent_type: str | None = None,
) -> dict[str, Any]:
    """The member's own intent rewritten: from ``content`` (inferred) or ``description`` (and
    ``type``) as given, verified, then updated in place or expired and replaced, as the
    reconciler decides (without it: in place)."""
    started = time.monotonic()
    current = get_intent(writer.db, view, intent_id, own=view.member_id)
    if current["status"] != "active":
        raise unknown_intent(intent_id)
    state = State("update", current["memberId"])
    explicit = []
    if description is not None or intent_type is not None:
        explicit = [
            Candidate(
                check_description(description if description is not None else current["description"]),
                check_type(intent_type if intent_type is not None else current["type"]),
                "explicit",
            )
        ]
    text = _check_content(content) if content is not None or not explicit else None
    with trace.graph("intent"):
        state.profile = get_profile(writer.db, view, state.member_id)
        state.active = [current]
        if explicit:
            state.candidates = explicit
        elif text is not None:
            infer(settings, state, text)
            state.candidates = state.candidates[:1]
        if state.candidates:
            verify(settings, state)
        reconcile(settings, state, targets=[intent_id])
        networks = [{"networkId": n["networkId"]} for n in current.get("networks") or []]
        execute(writer, settings, state, networks, direct=True)
    _log(state, started)
    return state.answer()


def delete_intent(writer: GraphWriter, view: MemberView, intent_id: str) -> dict[str, Any]:
    """The member's own intent expired (kept in the graph, no longer active or discoverable)."""
    started = time.monotonic()
    current = get_intent(writer.db, view, intent_id, own=view.member_id)
    state = State("delete", current["memberId"])
    with trace.graph("intent"):
        if current["status"] == "active":
            expire_intent(writer, state.member_id, intent_id)
            state.expired.append(intent_id)
    _log(state, started)
    return state.answer()
