"""A small real HTTP server speaking the Anthropic Messages API wire format, for tests.

    with FakeAnthropic() as fake:
        anthropic.Anthropic(api_key="k", base_url=fake.url).messages.create(...)

Modes (set ``fake.mode`` at any time):

* ``ok``         200 with a Messages API body whose text is ``reply`` (default: "Summary: " +
                 the first words of the prompt's <text>)
* ``slow``       waits ``delay_s`` before answering (to trip the client's timeout)
* ``500``        500 ``{"type": "error", "error": {"type": "api_error", ...}}``
* ``401``        401 ``{"type": "error", "error": {"type": "authentication_error", ...}}``
* ``malformed``  200 with a body that is not JSON
* ``wrong-tool``  like ``ok``, but a forced tool call names another tool
* ``missing-field`` like ``ok``, but a forced tool call lacks the first field its schema requires

A request whose ``tool_choice`` is ``{"type": "tool", "name": ...}`` gets a ``tool_use`` answer
instead of text, its input built from the prompt: ``add_entry`` from the prompt's last
``<message ...>...</message>`` (``raw_entry`` the text, ``summary`` "Summary: " + its first words,
``tags`` its first word as ``topic``), ``put_context`` from the prompt's ``<conversation>`` block
(``content`` "Context: " + its first words), any other tool a string of the prompt's first
words for each required field. A test answers any tool its own way through
``fake.tool_inputs[name] = lambda request, prompt: {...}`` (the input the tool call carries).

Only 127.0.0.1, on a port the OS picks; every request is recorded in ``fake.requests``
as ``{"path", "headers", "body"}``.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .local_http import LocalServer

MODES = ("ok", "slow", "500", "401", "malformed", "wrong-tool", "missing-field")
WORDS = 12  # words of the prompt an answer echoes


def _error(kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


class FakeAnthropic(LocalServer):
    def __init__(self, mode: str = "ok", delay_s: float = 3.0, reply: str | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode = mode
        self.delay_s = delay_s
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        # tool name -> (request, prompt) -> the input of its forced tool call, ahead of the defaults
        self.tool_inputs: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeAnthropic:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("request-id", f"req_{uuid.uuid4().hex[:12]}")
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with fake._lock:
                    fake.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                    mode = fake.mode
                if self.path.split("?")[0] != "/v1/messages":
                    self._send(404, _error("not_found_error", "Not found"))
                    return
                if mode == "slow":
                    fake._stop.wait(fake.delay_s)
                    if fake._stop.is_set():
                        return
                if mode == "500":
                    self._send(500, _error("api_error", "Internal server error"))
                    return
                if mode == "401":
                    self._send(401, _error("authentication_error", "invalid x-api-key"))
                    return
                if mode == "malformed":
                    self._send(200, b'{"id": "msg_1", "type": "message", "content": [ this is not json')
                    return
                self._send(200, json.dumps(fake.message(body, mode)).encode())

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-anthropic", daemon=True)
        self._thread.start()
        return self

    def message(self, request: dict[str, Any], mode: str = "ok") -> dict[str, Any]:
        prompt = _prompt_text(request)
        choice = request.get("tool_choice") or {}
        if choice.get("type") == "tool":
            content = [_tool_use(request, str(choice.get("name")), prompt, mode, self.tool_inputs)]
            stop = "tool_use"
        else:
            text = self.reply
            if text is None:
                inner = re.search(r"<text>\s*(.*?)\s*</text>", prompt, re.S)
                text = "Summary: " + _first_words(inner.group(1) if inner else prompt)
            content = [{"type": "text", "text": text}]
            stop = "end_turn"
        return {
            "id": f"msg_{uuid.uuid4().hex[:16]}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude-haiku-4-5"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 42, "output_tokens": 17},
        }


def _prompt_text(request: dict[str, Any]) -> str:
    prompt = ""
    for m in request.get("messages") or []:
        content = m.get("content")
        prompt += (
            content
            if isinstance(content, str)
            else " ".join(c.get("text", "") for c in content or [] if isinstance(c, dict))
        )
    return prompt


def _first_words(text: str, n: int = WORDS) -> str:
    return " ".join(text.split()[:n])


def _block(prompt: str, tag: str) -> str:
    """The text of the last ``<tag ...>...</tag>`` block of the prompt (the whole prompt if none)."""
    blocks = re.findall(rf"<{tag}\b[^>]*>\n?(.*?)\n?</{tag}>", prompt, re.S)
    return blocks[-1] if blocks else prompt


def _tool_use(
    request: dict[str, Any],
    name: str,
    prompt: str,
    mode: str,
    answers: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]],
) -> dict[str, Any]:
    tool = next((t for t in request.get("tools") or [] if t.get("name") == name), {})
    required = list((tool.get("input_schema") or {}).get("required") or [])
    if name in answers:
        arguments: dict[str, Any] = dict(answers[name](request, prompt))
    elif name == "add_entry":
        raw = _block(prompt, "message")
        words = raw.split()
        arguments = {
            "summary": "Summary: " + _first_words(raw),
            "raw_entry": raw,
            "tags": {"topic": words[0].strip(".,!?:;").lower() if words else "none"},
        }
    elif name == "put_context":
        arguments = {"content": "Context: " + _first_words(_block(prompt, "conversation"), 40)}
    else:
        arguments = {field: _first_words(prompt) for field in required}
    if mode == "missing-field" and required:
        arguments.pop(required[0], None)
    return {
        "type": "tool_use",
        "id": f"toolu_{uuid.uuid4().hex[:16]}",
        "name": "wrong_tool" if mode == "wrong-tool" else name,
        "input": arguments,
    }


if __name__ == "__main__":  # pragma: no cover - manual poking
    with FakeAnthropic() as server:
        print(server.url)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
