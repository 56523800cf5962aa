"""Content-Type headers: the media type and the charset. Leaf module: stdlib only."""

from __future__ import annotations


def parse_content_type(content_type: str | None) -> tuple[str, str | None]:
    """``text/html; charset="UTF-8"`` → (``text/html``, ``UTF-8``): the charset as written."""
    media_type, *params = (content_type or "").split(";")
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'") or None
    return media_type.strip().lower(), charset
