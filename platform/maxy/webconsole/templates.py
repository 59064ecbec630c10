"""The console's Jinja templates (``resources/console/templates``), every value escaped.

Autoescaping is on for every template whatever its name, and undefined names fail loudly. No
template marks data safe: values are turned into plain strings in Python (``present``)."""

from __future__ import annotations

from functools import cache
from typing import Any

from . import present


@cache
def _environment() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("maxy", "resources/console/templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(present.FILTERS)
    env.globals["nav"] = present.NAV
    return env


def render(template: str, **values: Any) -> str:
    values.setdefault("view", None)
    values.setdefault("csrf", "")
    return str(_environment().get_template(template).render(**values))
