"""Personal agents' turns over HTTP on ``maxy serve``:

- ``POST /api/agents/{id}/negotiations/pickup``: claim the member's longest-waiting turn
  (200 with the turn, 204 when none waits);
- ``POST /api/agents/{id}/negotiations/{negotiationId}/respond`` with
  ``{action, assessment: {reasoning, suggestedRoles: {ownUser, otherUser}}, message?}``: record it.

The caller authenticates with an API key bound to a member (``maxy mcp key create --member``),
checked as ``/mcp`` checks it. ``{id}`` is the caller's own agent id, its key id: any other id,
like a key without a member, answers 404 exactly as an agent that does not exist. A negotiation
the member cannot see is a 404 too; one whose turn this agent has not claimed, or that kept
changing under every try, is a 409. A turn's
body is read up to :data:`MAX_BODY_BYTES` and no further: a larger Content-Length, or a stream
that runs past it, is a 413 before the rest is read.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request  # at module level: FastAPI reads the route's annotations here

from ...accounts import validate_account
from ...config import Settings
from ...db import Database
from ...errors import ValidationError
from ...httpjson import (
    BodyRefused,
    ClientGone,
    JSONAnswer,
    check_media_type,
    gone,
    json_body,
    parse_json,
    read_within,
    refusal,
)
from ...logs import log_line, short
from .engine import Negotiations
from .parked import TurnConflict, pickup, respond

MAX_BODY_BYTES = 64 * 1024
TURN_EXAMPLE = {
    "action": "accept",
    "assessment": {"reasoning": "Bob builds compilers", "suggestedRoles": {"ownUser": "agent", "otherUser": "patient"}},
    "message": "Glad to work on this",
}
TURN_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["propose", "accept", "reject", "counter", "question"]},
        "assessment": {
            "type": "object",
            "properties": {
                "reasoning": {"type": "string"},
                "suggestedRoles": {
                    "type": "object",
                    "properties": {"ownUser": {"type": "string"}, "otherUser": {"type": "string"}},
                },
            },
        },
        "message": {"type": "string"},
    },
    "required": ["action", "assessment"],
}
NO_AGENT = {"error": "id: no agent with this id; it is your API key's id (mxy_<keyId>_...)"}
TOO_LARGE = {"error": f"body: more than {MAX_BODY_BYTES} bytes; send one turn, its reasoning and message shorter"}


def answer(negotiations: Negotiations, record: Any, negotiation_id: str, raw: bytes) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body) of a respond call: the negotiation after the turn, or the refusal."""
    try:
        payload = parse_json(raw or b"null", "{action, assessment, message?}")
    except BodyRefused as err:
        return err.status, {"error": str(err)}
    try:
        return 200, respond(negotiations, record.member_id, record.key_id, negotiation_id, payload)
    except TurnConflict as err:
        return 409, {"error": str(err)}
    except ValidationError as err:
        if err.field == "negotiationId":
            log_line("negotiation", "http-refused", keyId=record.key_id, negotiation=short(negotiation_id))
            return 404, {"error": str(err)}
        return 400, {"error": str(err)}


async def read_turn(request: Request, key_id: str) -> tuple[bytes, None] | tuple[None, JSONAnswer]:
    """(the turn's raw body, None), or (None, the answer refusing it: 415, 413, or the one for a
    client that hung up)."""
    try:
        check_media_type(request)
        raw = await read_within(request, MAX_BODY_BYTES)
    except BodyRefused as err:
        return None, refusal(err)
    except ClientGone:
        return None, gone()
    if raw is None:
        log_line("negotiation", "http-refused", keyId=key_id, reason="body-too-large")
        return None, JSONAnswer(TOO_LARGE, status_code=413)
    return raw, None


def mount_negotiation_routes(app: Any, settings: Settings, store: Any, db: Database, embedder: Any) -> None:
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import Response

    from ...serving.auth import UsableKeys, presented_key, unauthorized

    keys = UsableKeys(settings, db, embedder)

    async def agent_of(request: Request, agent_id: str) -> tuple[Any, Any]:
        """(the key's record, None) or (None, the response refusing it)."""
        key, problem = presented_key(request.headers)
        record = await run_in_threadpool(store.resolve, key) if key else None
        if record is None:
            return None, unauthorized(problem)
        if await run_in_threadpool(keys.problem, record) is not None:
            return None, unauthorized(None)
        if record.key_id != agent_id or not record.member_id or record.role != "admin":
            log_line("negotiation", "http-refused", keyId=record.key_id, reason="not-this-agent")
            return None, JSONAnswer(NO_AGENT, status_code=404)
        return record, None

    def negotiations_for(record: Any) -> Negotiations:
        account = validate_account(settings.data_root, record.account_id)
        return Negotiations(db, account, settings, embedder=embedder)

    @app.post(
        "/api/agents/{agent_id}/negotiations/pickup",
        responses={
            204: {"description": "no turn is waiting for this agent's member"},
            401: {"description": "no valid API key"},
            404: {"description": "the id is not this key's id, or the key acts for no member"},
        },
    )
    async def negotiation_pickup(request: Request, agent_id: str) -> Any:
        """Claim the oldest turn waiting for the key's member: the turn number, the deadline (6
        hours), the other side's last action, the turns so far, both members' context and the
        evaluator's seed assessment. Answer it with ``.../{negotiationId}/respond``."""
        record, denied = await agent_of(request, agent_id)
        if denied is not None:
            return denied
        turn = await run_in_threadpool(pickup, negotiations_for(record), record.member_id, record.key_id)
        if turn is None:
            return Response(status_code=204)
        return JSONAnswer(turn)

    @app.post(
        "/api/agents/{agent_id}/negotiations/{negotiation_id}/respond",
        responses={
            400: {"description": "a body that is not a turn: the field and the reason"},
            401: {"description": "no valid API key"},
            404: {"description": "the id is not this key's id, or no negotiation the member can see"},
            409: {"description": "the negotiation's turn is not claimed by this agent, or it kept changing"},
            413: {"description": f"a body of more than {MAX_BODY_BYTES} bytes"},
            415: {"description": "a body that is not sent as application/json"},
        },
        openapi_extra={"requestBody": json_body(TURN_SCHEMA, TURN_EXAMPLE)},
    )
    async def negotiation_respond(request: Request, agent_id: str, negotiation_id: str) -> Any:
        """Submit the claimed turn: ``{action, assessment: {reasoning, suggestedRoles: {ownUser,
        otherUser}}, message?}``. Answers the negotiation as it stands after the turn."""
        record, denied = await agent_of(request, agent_id)
        if denied is not None:
            return denied
        raw, refused = await read_turn(request, record.key_id)
        if raw is None:
            return refused
        status, body = await run_in_threadpool(answer, negotiations_for(record), record, negotiation_id, raw)
        return JSONAnswer(body, status_code=status)
