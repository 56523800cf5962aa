"""Content-Type headers, and text decoding that counts what it replaced. Leaf: stdlib only."""

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


#: Labels that mean windows-1252 on the web (WHATWG), whatever they literally say.
WINDOWS_1252_LABELS = frozenset(
    {"iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "ascii", "us-ascii"}
    | {"windows-1252", "cp1252"}
)


def decode_counting(data: bytes, encoding: str) -> tuple[str, int]:
    """``data`` decoded with U+FFFD for each bad byte sequence, and how many there were."""
    try:
        return data.decode(encoding), 0
    except UnicodeDecodeError:
        text = data.decode(encoding, "replace")
    bad = text.count("\ufffd") - data.decode(encoding, "ignore").count("\ufffd")
    return text, max(bad, 1)
