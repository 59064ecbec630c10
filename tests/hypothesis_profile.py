"""Hypothesis profiles: ``ci`` (the default, what ``installer/test.sh`` runs) draws each property
test's full number of examples; ``dev`` (``MAXY_HYPOTHESIS=dev``, the fast lane) a tenth of them,
at least ten, for a quick check before a commit. Neither has a deadline: a slow example on a
busy machine is not a failure."""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE = os.environ.get("MAXY_HYPOTHESIS", "ci")
if PROFILE not in ("ci", "dev"):
    raise SystemExit(f"MAXY_HYPOTHESIS: 'ci' or 'dev', not {PROFILE!r}")

settings.register_profile("ci", deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=10)
settings.load_profile(PROFILE)


def examples(full: int) -> int:
    """How many examples a property test that asks for ``full`` draws under this profile."""
    return full if PROFILE == "ci" else max(10, full // 10)
