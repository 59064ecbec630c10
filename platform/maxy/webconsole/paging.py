"""Pages of a listing: ``?page=N`` read and checked, and the links to the pages beside it."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, urlencode

from ..errors import ValidationError

PAGE_SIZE = 50
MAX_PAGE = 999_999
_PAGE_RE = re.compile(r"[0-9]{1,6}")  # ASCII digits only: str.isdigit() also takes "²"


def page_of(params: Any) -> tuple[int, int]:
    """(the page number from 1, its offset)."""
    raw = (params.get("page") or "1").strip()
    if not _PAGE_RE.fullmatch(raw) or int(raw) < 1:
        raise ValidationError("page", f"a whole number from 1 to {MAX_PAGE} (got {raw[:20]!r})")
    page = int(raw)
    return page, (page - 1) * PAGE_SIZE


def pager(request: Any, total: int, page: int) -> dict[str, Any]:
    """How many rows and pages, and the previous and next pages' URLs (the same filters)."""
    pages = max(1, -(-total // PAGE_SIZE))

    def url(n: int) -> str:
        query = [(k, v) for k, v in request.query_params.multi_items() if k != "page"] + [("page", str(n))]
        return f"{quote(request.url.path, safe='/')}?{urlencode(query)}"

    return {
        "total": total,
        "page": page,
        "pages": pages,
        "prev": url(page - 1) if page > 1 else None,
        "next": url(page + 1) if page < pages else None,
    }
