"""The admin plugin's tools: ``public-hostname``, the host name a published site is reached at
(``maxy.sites.hostname``: the tunnel's ingress rules, else the alias domains)."""

from __future__ import annotations

from typing import Any, Literal

from maxy.plugins import ToolContext, ToolOutput, tool, tool_errors
from maxy.sites.hostname import public_hostname
from pydantic import Field


class PublicHostnameAnswer(ToolOutput):
    hostname: str | None = Field(description="The public host name, or null when the install has none.")
    isApex: bool | None = Field(
        default=None, description="True for a registrable name (example.com, or www.example.com); absent on a miss."
    )
    source: Literal["cloudflared-config.yml", "alias-domains.json"] | None = Field(
        description="The file the host name was read from; null on a miss."
    )
    reason: Literal["no-tunnel"] | None = Field(
        default=None, description="Why there is no host name: no-tunnel (neither file names one)."
    )


@tool(
    "public-hostname",
    description="""
The host name this install is reached at from outside, for the URL of a published site:
https://<hostname>/sites/<path>/. Read from cloudflared/config.yml's ingress rules, else from
alias-domains.json, in the configuration folder; an apex name wins over a subdomain. Answers
{hostname, isApex, source}, or {hostname: null, source: null, reason: "no-tunnel"}.
""",
    title="Resolve the public hostname",
    output=PublicHostnameAnswer,
    read_only=True,
    idempotent=True,
)
@tool_errors
def public_hostname_tool(ctx: ToolContext) -> dict[str, Any]:
    return public_hostname().as_dict()
