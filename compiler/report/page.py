"""The page shell: the JSON document embedded where no input can end it, the stylesheet and
the scripts inline, and a Content-Security-Policy that lets only those run and fetches
nothing.

Internal: the API is :mod:`compiler.report`.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from importlib import resources
from typing import Any, Literal

#: The scripts of each page, in order, by name (``assets/NAME.js``; ``common`` first: the
#: helpers the others use).
SCRIPTS: dict[str, tuple[str, ...]] = {
    "explain": ("common", "explain"),
    "bench": ("common", "chart", "bench"),
}
#: The id of the ``<script type="application/json">`` element that holds the document.
DATA_ID = "apc-data"

_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
#: A lone surrogate (a file name of bytes that are not UTF-8, read by the file system's
#: ``surrogateescape``): it has no UTF-8 form, so the page could not be written.
_SURROGATE = re.compile("[\ud800-\udfff]")


def asset(name: str) -> str:
    """The text of one of the package's stylesheet or script files."""
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


def embed_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element: no ``<``, ``>`` or
    ``&`` (so no ``</script>`` or ``<!--`` an input carries can end or bend the element),
    no line separators, and no lone surrogate (escaped, so the page is valid UTF-8);
    ``JSON.parse`` reads it back unchanged."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escape in _ESCAPES.items():
        text = text.replace(char, escape)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def _text(text: str) -> str:
    """``text`` as HTML text, valid UTF-8: a lone surrogate is U+FFFD."""
    return html.escape(_SURROGATE.sub("\ufffd", text))


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def render_page(kind: Literal["explain", "bench"], title: str, payload: Any) -> str:
    """One self-contained HTML page: ``payload`` (JSON-ready) in a data element, drawn by
    the page's scripts. Only those scripts and that stylesheet may run (their hashes are the
    policy); the page may fetch nothing, not even an image."""
    style = asset("report.css")
    script = "\n".join(asset(f"{name}.js") for name in SCRIPTS[kind])
    policy = (
        "default-src 'none'; "
        f"script-src {_digest(script)}; style-src {_digest(style)}; "
        "img-src 'none'; base-uri 'none'; form-action 'none'"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_text(title)}</title>\n"
        f"<style>{style}</style>\n</head>\n"
        f'<body data-report="{kind}">\n'
        f"<noscript><p>This report is drawn by JavaScript: allow scripts for this file, or "
        f"read the same figures with <code>apc {kind} --format json</code>.</p></noscript>\n"
        '<main id="app"></main>\n'
        f'<script type="application/json" id="{DATA_ID}">{embed_json(payload)}</script>\n'
        f"<script>{script}</script>\n"
        "</body>\n</html>\n"
    )
