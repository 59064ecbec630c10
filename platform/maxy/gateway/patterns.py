"""The local prompt-injection vocabulary: a few named regular expressions over a normalised
message, shared by every channel. They run on every message, with or without the model: a short
message meets only these, a long one meets both (``screen.py`` combines them).

The vocabulary is written for recall on known payloads without flagging ordinary requests that
share their words ("ignore my previous email", "what is your system for refunds", "act as my
guide"); ``benchmarks/gateway_patterns.py`` measures both on a public corpus."""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern[str]


def _p(name: str, *alternatives: str, case_sensitive: bool = False) -> Pattern:
    flags = 0 if case_sensitive else re.IGNORECASE
    return Pattern(name, re.compile("|".join(f"(?:{a})" for a in alternatives), flags))


_IGNORE = r"ignore|disregard|forget|skip|bypass|override|overlook|neglect|drop|abandon"
_EARLIER = r"previous|prior|above|earlier|preceding|initial|original|old|former|foregoing|existing"
_RULES = (
    r"instructions?|prompts?|directions?|directives?|rules|guidelines|commands|programming|constraints|restrictions"
)

PATTERNS: tuple[Pattern, ...] = (
    _p(
        "ignore-instructions",
        # "ignore all previous instructions", "disregard prior directives", "forget your rules"
        rf"\b(?:{_IGNORE})\b(?:\s+(?:all|any|of|the|your|my|these|those|every|everything|and|following|(?:{_EARLIER}))){{0,4}}\s+(?:{_RULES})\b",
        rf"\b(?:{_IGNORE})\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the|that|everything|what(?:ever)?\s+(?:you\s+were|was))\s+(?:above|before|said\s+before|told\s+before)",
        rf"\b(?:{_IGNORE})\s+(?:everything|all)\s+(?:you\s+(?:were|have\s+been)\s+told|(?:said|written)\s+(?:above|before))",
        # es, fr, de, pt, it, nl
        r"\b(?:ignora|olvida|omite)\w*\s+(?:todas?\s+)?(?:las\s+|tus\s+|sus\s+)?instrucciones",
        r"\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes\s+)?(?:les\s+|tes\s+|vos\s+)?(?:instructions|consignes|règles)",
        r"\b(?:ignorier\w*|vergiss|vergessen\s+sie)\s+(?:alle\s+)?(?:\w+\s+)?(?:anweisungen|instruktionen|regeln|vorgaben)",
        r"\b(?:ignore|ignora|esque[çc]a)\w*\s+(?:todas\s+)?(?:as\s+)?(?:suas\s+)?instru[çc][õo]es",
        r"\b(?:ignora|dimentica)\w*\s+(?:tutte\s+)?(?:le\s+)?(?:tue\s+)?istruzioni",
        r"\b(?:negeer|vergeet)\s+(?:alle\s+)?(?:\w+\s+)?(?:instructies|regels)",
    ),
    _p(
        "prompt-disclosure",
        r"\bsystem\s*[-_]?\s*prompt\b|\bsystemprompt\b|\bsysteemprompt\b|\bprompt\s+(?:del|de|di)\s+sistema\b|\bprompt\s+syst[eè]me\b",
        # "reveal / print / repeat your (hidden) instructions", "what was written at the beginning"
        r"\b(?:reveal|show|print|display|output|repeat|recite|dump|leak|list|spell\s+out|write\s+out|tell\s+me)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?(?:your|the)\s+(?:full\s+|exact\s+|hidden\s+|secret\s+|initial\s+|original\s+|internal\s+|confidential\s+)*(?:instructions|prompt|rules|guidelines|configuration|directives)\b(?!\s+(?:for|of|on|about)\b)",
        r"\b(?:instructions|rules|prompt)\s+(?:you\s+(?:were|have\s+been)\s+given|(?:were|was)\s+you\s+given|given\s+to\s+you)\b",
        r"\b(?:what|which)\s+(?:are|were)\s+(?:the\s+|your\s+)?(?:initial|original|hidden|secret)\s+instructions\b",
        r"\b(?:repeat|print|output|recite)\s+(?:back\s+)?(?:the\s+|all\s+(?:the\s+)?)?(?:text|words|everything|prompt)\s+(?:above|before|so\s+far)\b",
        r"\brepeat\s+everything\s+(?:above|before)\b|\bwritten\s+at\s+the\s+beginning\s+of\s+the\s+document\b",
        # gaps bounded: an unbounded ".*" rescans the rest of the line from every "verbatim"
        r"\b(?:verbatim|word\s+for\s+word)\b.{0,200}?\b(?:instructions|rules|prompt)\b|\b(?:instructions|rules|prompt)\b.{0,200}?\b(?:verbatim|word\s+for\s+word)\b",
    ),
    _p(
        "role-override",
        r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:a|an|in|my|the|free|unrestricted|unfiltered|dan|jailbroken|going\s+to|called)\b",
        r"\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|shall)\s+(?:going\s+to\s+)?(?:act|be|respond|answer|pretend|ignore|behave)",
        r"\b(?:act|behave|respond|answer)\s+as\s+(?:an?\s+|my\s+)?(?:unrestricted|unfiltered|uncensored|evil|jailbroken|rogue|different|new)\b",
        r"\b(?:pretend|imagine)\s+(?:that\s+)?you\s+(?:are|have|were)\s+(?:an?\s+)?(?:\w+\s+){0,3}(?:no|without|unrestricted|unfiltered|evil|free\s+of)\b",
        r"\bact\s+as\s+my\s+(?:deceased|late|dead)\s+(?:grand(?:ma|mother|pa|father)|mother|father)\b",
        r"\b(?:an?\s+)?(?:ai|assistant|bot|model)\s+(?:without|with\s+no)\s+(?:any\s+)?(?:rules|restrictions|limits|filters|guidelines)\b",
        r"\b(?:your|the)\s+new\s+(?:task|instructions|role|persona|rules|objective)\s+(?:is|are)\b|\bnew\s+instructions\s*:",
        r"\b(?:respond|answer|reply|act)\s+as\s+an?\s+(?:evil|unrestricted|unfiltered)\s+(?:ai|assistant|bot)\b",
        r"\b(?:stay|remain)\s+in\s+character\b",
        # es, fr, de, pt, it
        r"\bahora\s+eres\b|\beres\s+ahora\b|\btu\s+es\s+maintenant\b|\bdu\s+bist\s+(?:jetzt|nun|ab\s+sofort)\b|\bagora\s+voc[eê]\s+[eé]\b|\bora\s+sei\b",
    ),
    _p(
        "jailbreak-mode",
        r"\b(?:developer|dev|god|sudo|admin|maintenance|debug|unrestricted|jailbreak|opposite)\s+mode\b",
        r"\bmodo\s+(?:desarrollador|desenvolvedor|sviluppatore)\b|\bmode\s+d[ée]veloppeur\b|\bentwicklermodus\b",
        r"\bjail\s*-?\s*br(?:eak|oken)\b(?!\s+(?:my|your|an?|the)\s+(?:own\s+)?(?:phone|iphone|ipad|device|console|kindle|tablet)\b)",
        r"\bdo\s+anything\s+now\b",
        r"\b(?:bypass|disable|turn\s+off|switch\s+off|override|circumvent|ignore|deactivate)\s+(?:all\s+)?(?:your\s+|the\s+|any\s+)?(?:safety|content|security|ethical|moral)\s*(?:filters?|settings|guardrails?|restrictions|policies|policy|guidelines|checks|rules)?\b",
        r"\b(?:bypass|disable|turn\s+off|circumvent)\s+(?:all\s+)?(?:your\s+)?(?:filters|guardrails|safeguards|restrictions|censorship)\b",
        r"\b(?:system|admin|security)\s+override\b|\boverride\s+(?:code|protocol|mode)\b",
        r"\bcontent\s+polic(?:y|ies)\s+(?:is|are)\s+(?:disabled|off|lifted|suspended)\b|\bno\s+content\s+policy\b",
        r"\bi\s+have\s+been\s+pwned\b|\bhaha\s+pwned\b",
        r"\bstop\s+everything\b.{0,40}?\bjust\s+(?:print|say|output)\b",
    ),
    _p(
        "jailbreak-mode",
        r"\bDANs?\b",  # the "Do Anything Now" persona; "Dan" the name stays ordinary
        case_sensitive=True,
    ),
    _p(
        "delimiter",
        r"<\|\s*(?:im_start|im_end|endoftext|system|user|assistant|eot_id|start_header_id)\s*\|>",
        r"\[/?inst\]|<</?sys>>",
        r"</?\s*(?:system|sys|instructions?|admin)\s*>",
        r"\[system\]\s*\(#",
        r"(?:^|\n)\s*#{2,}\s*(?:system|instruction|instructions|new\s+instructions)\b",
        r"\b(?:end|begin)\s+of\s+(?:the\s+)?(?:system\s+prompt|prompt|user\s+input|conversation|instructions)\b",
        r"\bbegin\s+(?:system|admin)\s+(?:prompt|message|instructions)\b",
        r"%%%\s*end\b|\[\[\s*end\s+of\b",
    ),
    _p(
        "secret-probe",
        r"\b(?:the|your|secret|hidden)\s+(?:secret\s+)?(?:password|passphrase|secret\s+word)\s+(?:spelled\s+)?(?:backwards|reversed|in\s+reverse|letter\s+by\s+letter|with\s+a\s+dash|in\s+base64)",
        r"\b(?:password|secret\s+word|passphrase)\s+you\s+(?:are|were)\s+(?:protecting|guarding|given|told)\b",
        r"\bsecret\s+word\s+you\s+were\s+given\b|\bwrite\s+the\s+secret\s+password\b|\bspelled\s+backwards\b",
        r"\bauthori[sz]ed\s+to\s+know\s+the\s+password\b",
    ),
    _p(
        "exfiltration",
        # each part stops at its own delimiter, so no part can backtrack into the next
        r"!\[[^\]]{0,200}\]\(\s*https?://[^)\s?]{0,300}\?[^)\s=]{0,300}=",
        r"\b(?:send|forward|post|upload|email|e-mail|exfiltrate|leak)\s+(?:all\s+)?(?:of\s+)?(?:the\s+|this\s+|their\s+|the\s+user'?s\s+|user'?s\s+)?(?:conversation|chat\s+history|emails|inbox|thread|credentials|api\s+keys?|passwords|user\s+data|customer\s+data)\b.{0,40}?\bto\b",
        r"\bnote\s+to\s+(?:the\s+)?(?:ai|llm|assistant|model)\b|\b(?:ai|llm)\s+assistants?\s+reading\s+this\b|\binstructions\s+for\s+the\s+(?:ai|assistant|model)\b",
    ),
)

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")


def normalise(text: str) -> str:
    """NFKC (full-width and compatibility forms fold to ASCII), format characters removed."""
    # invisible format characters (zero-width space, joiners, BOM, word joiner) go, so
    # "I<ZWSP>g<ZWSP>n<ZWSP>o<ZWSP>r<ZWSP>e" reads as "Ignore"
    folded = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")


def _decoded_runs(text: str) -> list[str]:
    """Base64 runs that decode to readable text (a payload hidden from the other patterns)."""
    found = []
    for run in _BASE64_RUN.findall(text):
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if " " in decoded and sum(ch.isprintable() for ch in decoded) >= 0.95 * len(decoded):
            found.append(decoded)
    return found


def local_hits(text: str) -> tuple[str, ...]:
    """The names of the patterns the message meets, each once, in vocabulary order; base64
    text that decodes to a message meeting one adds ``encoded-payload``."""
    plain = normalise(text)
    hits = [p.name for p in PATTERNS if p.regex.search(plain)]
    if any(any(p.regex.search(normalise(d)) for p in PATTERNS) for d in _decoded_runs(plain)):
        hits.append("encoded-payload")
    return tuple(dict.fromkeys(hits))
