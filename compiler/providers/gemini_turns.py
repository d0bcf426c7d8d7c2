"""Gemini's rules for the turns of a request that depend on the model: thought signatures
(Gemini 3) and a final model turn (refused from Gemini 3.6 Flash and 3.5 Flash-Lite on).

Internal: used by :mod:`compiler.providers.gemini`.

- Thought signatures (ai.google.dev/gemini-api/docs/thought-signatures): Gemini 3 models
  answer 400 when a function call of the current turn (the model turns after the last user
  turn with text) lacks the ``thoughtSignature`` the model returned with it; in each such
  step the first ``functionCall`` part carries it (parallel calls: only the first). A call's
  signature from the run context is sent back as received, on every turn; a current-turn
  step whose first call has none gets Google's documented placeholder
  :data:`SKIP_SIGNATURE` (``lower.missing_thought_signature``).
- A final ``model`` turn (a prefill): "Starting with Gemini 3.6 Flash and Gemini 3.5
  Flash-Lite, ... Prefilling model turns is no longer supported" for these models and all
  later releases (ai.google.dev/gemini-api/docs/latest-model; a 400, "Requests ending with a
  model turn are not supported"). For those models, and for a name that gives no version,
  the prefill's text moves into the last user turn, tagged ``[Begin your reply with this
  text]`` (``lower.prefill_unsupported``).
"""

from __future__ import annotations

import re
from typing import Any

from compiler.providers.conversation import PREFILL_NOTE

#: The dummy signature Google documents for a function call whose signature is unknown (a
#: history written by another model, or by hand): the validator skips it.
SKIP_SIGNATURE = "skip_thought_signature_validator"
#: gemini-<major>[.<minor>]-<family...>
VERSION_RE = re.compile(r"gemini-(\d+)(?:\.(\d+))?(?:-([a-z-]+))?")
#: The first models that refuse a final model turn, by family: Flash-Lite from 3.5, every
#: other from 3.6 (3.6 Flash; "all future Gemini model releases").
NO_PREFILL_FROM = (3, 6)
NO_PREFILL_FROM_LITE = (3, 5)

Content = dict[str, Any]


def gemini_version(model: str) -> tuple[tuple[int, int], str] | None:
    """((major, minor), family) of a Gemini model name (``gemini-3.6-flash`` is ((3, 6),
    "flash"), ``gemini-3-pro-preview`` ((3, 0), "pro-preview")), or None."""
    m = VERSION_RE.match(model.split("/")[-1])
    if m is None:
        return None
    return (int(m.group(1)), int(m.group(2) or 0)), m.group(3) or ""


def needs_signatures(model: str) -> bool:
    """Whether ``model`` refuses a current-turn function call without its signature
    (Gemini 3 and later; a name that gives no version: assumed so)."""
    version = gemini_version(model)
    return version is None or version[0] >= (3, 0)


def refuses_prefill(model: str) -> bool:
    """Whether ``model`` refuses a request that ends with a model turn."""
    version = gemini_version(model)
    if version is None:
        return True
    number, family = version
    lite = family.startswith("flash-lite")
    return number >= (NO_PREFILL_FROM_LITE if lite else NO_PREFILL_FROM)


def sign_current_turn(contents: list[Content]) -> list[str]:
    """Give the first function call of each current-turn step that has no signature the
    placeholder :data:`SKIP_SIGNATURE`; return the names of the calls given one."""
    start = 0
    for i, content in enumerate(contents):
        if content["role"] == "user" and any("text" in p for p in content["parts"]):
            start = i
    placed: list[str] = []
    for content in contents[start:]:
        if content["role"] != "model":
            continue
        first = next((p for p in content["parts"] if "functionCall" in p), None)
        if first is not None and "thoughtSignature" not in first:
            first["thoughtSignature"] = SKIP_SIGNATURE
            placed.append(str(first["functionCall"].get("name", "")))
    return placed


def move_prefill(contents: list[Content]) -> bool:
    """Move a final model turn's text into the user turn before it, tagged
    :data:`~compiler.providers.conversation.PREFILL_NOTE`; True when one was moved."""
    if len(contents) < 2 or contents[-1]["role"] != "model":
        return False
    prefill = contents.pop()
    text = "\n\n".join(p["text"] for p in prefill["parts"] if "text" in p)
    contents[-1]["parts"].append({"text": PREFILL_NOTE + text})
    return True
