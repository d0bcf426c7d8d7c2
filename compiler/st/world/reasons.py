"""The words and details of one traced world info decision (the lorebook debugger's ``why``).

Internal: used by :mod:`compiler.st.world.report`, only when a report's records are
asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compiler.inputs.lorebook import SelectiveLogic, WorldEntry
from compiler.st.world.trace import (
    BUDGET,
    CHARACTER_FILTER,
    CONSTANT,
    COOLDOWN,
    DECORATOR,
    DELAY,
    DISABLED,
    DONT_ACTIVATE,
    GROUP_LOST,
    KEY,
    MIN_ACTIVATIONS,
    NO_KEYS,
    NO_MATCH,
    NOT_CHECKED,
    PROBABILITY,
    RECURSION,
    RECURSION_DELAYED,
    RECURSION_EXCLUDED,
    SECONDARY_FAILED,
    STICKY,
    ScanTrace,
)

_CUT = 200  # the longest key or comment carried
_SHOWN = 60  # the longest key quoted in the text

Detail = dict[str, Any]


def _cut(text: str, size: int = _CUT) -> str:
    return text if len(text) <= size else text[: size - 3] + "..."


def _name(entry: WorldEntry) -> dict[str, Any]:
    return {"world": entry.world, "uid": entry.uid, "comment": _cut(entry.comment)}


def _source(trace: ScanTrace, kind: str, index: int) -> tuple[str, Detail]:
    if kind == "message":
        back = trace.messages - 1 - index
        when = "the newest" if back == 0 else f"{back} before the newest"
        return f"chat message #{index} ({when})", {"kind": "message", "index": index}
    if kind == "injected":
        name = trace.injected[index] if index < len(trace.injected) else ""
        what = {"persona": "the persona description", "authors_note": "the Author's Note"}
        text = what.get(name, "the Character's Note" if name == "characters_note" else name)
        return text or "an in-chat prompt", {"kind": name or "injected"}
    if kind == "recursion":
        return f"the recursion text of pass {index}", {"kind": "recursion", "pass": index}
    return "the scanned text", {"kind": "unknown"}


def _pass(trace: ScanTrace, entry: WorldEntry) -> Detail:
    n = trace.activated_in.get(id(entry))
    if n is None or not 0 < n <= len(trace.passes):
        return {}
    kind, depth, _ = trace.passes[n - 1]
    return {"pass": n, "passKind": kind, "scanDepth": _depth(entry, depth)}


def _depth(entry: WorldEntry, depth: int) -> int:
    return entry.scan_depth if entry.scan_depth is not None else depth


def _key(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
    first, second, kind, index = trace.hits.get(id(entry), (0, -1, "", -1))
    key = entry.keys[first] if first < len(entry.keys) else ""
    where, source = _source(trace, kind, index)
    detail: Detail = {"key": _cut(key), "keyIndex": first, "source": source}
    text = f"key {_cut(key, _SHOWN)!r}"
    if entry.selective and entry.secondary_keys:
        logic = SelectiveLogic(entry.selective_logic).name
        detail["logic"] = logic
        if 0 <= second < len(entry.secondary_keys):
            secondary = entry.secondary_keys[second]
            detail["secondaryKey"] = _cut(secondary)
            verb = "matched" if logic == "AND_ANY" else "absent"
            text += f" + secondary {_cut(secondary, _SHOWN)!r} {verb} ({logic})"
        else:
            text += f" + secondary keys ({logic})"
    detail |= _pass(trace, entry)
    text += f" in {where}"
    if code == MIN_ACTIVATIONS:
        text += f" (min activations pass, depth {detail.get('scanDepth')})"
    elif detail.get("pass", 1) > 1 and kind != "recursion":
        text += f" (pass {detail['pass']})"
    return text, detail


def _no_match(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
    depth = max((d for _, d, _ in trace.passes), default=0)
    depth = _depth(entry, depth)
    recursed = any(kind == RECURSION for kind, _, _ in trace.passes)
    text = f"no key matched within scan depth {depth}"
    if recursed:
        text += " nor in the recursion text"
    detail: Detail = {"scanDepth": depth, "passes": len(trace.passes), "keys": len(entry.keys)}
    if code == SECONDARY_FAILED:
        logic = SelectiveLogic(entry.selective_logic).name
        text = f"a primary key matched, but the secondary keys failed {logic}"
        detail = {"logic": logic, "secondaryKeys": [_cut(k) for k in entry.secondary_keys[:20]]}
    return text, detail


def _group(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
    group, how, other = trace.groups.get(id(entry), ("", "", None))
    detail: Detail = {"group": group, "how": how}
    text = f"inclusion group {group!r} "
    if isinstance(other, WorldEntry):
        detail["winner"] = _name(other)
        who = f"{other.uid!r}" + (f" ({_cut(other.comment, 40)})" if other.comment else "")
        text += {
            "sticky": f"kept its sticky member {who}",
            "taken": f"already had {who} activated",
            "override": f"lost to {who} (group override, higher order)",
        }.get(how, f"lost to {who} (weighted roll)")
    elif how == "score" and isinstance(other, tuple):
        detail |= {"score": other[0], "best": other[1]}
        text += f"kept the best key score ({other[1]}; this entry {other[0]})"
    else:
        text += "left out the member on cooldown or delay"
    return text, detail


def _probability(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
    roll = round(trace.rolls.get(id(entry), 0.0), 2)
    text = f"probability roll {roll:g} > {entry.probability:g}"
    return text, {"roll": roll, "probability": entry.probability}


def _budget(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
    used, budget = trace.budget or (0, 0)
    text = f"world info budget reached ({used:,} of {budget:,} tokens): the scan stopped"
    return text, {"tokens": used, "budget": budget}


def _timed(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
    if code == DELAY:
        return (
            f"delay: waits for message {entry.delay} (the chat has {trace.messages})",
            {"delay": entry.delay, "messages": trace.messages},
        )
    end = trace.cooldowns.get(id(entry))
    if end is None:
        return "on cooldown", {}
    shown = int(end) if float(end).is_integer() else end
    return f"on cooldown until message {shown}", {"until": shown}


def _filter(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
    flt = entry.character_filter
    if flt is None:
        return "character filter", {}
    names, tags = flt.names[:20], flt.tags[:20]
    which = "excludes" if flt.is_exclude else "is only for"
    what = ", ".join([*names, *(f"#{t}" for t in tags)])
    return (
        f"character filter {which} {_cut(what, _SHOWN)}",
        {"names": names, "tags": tags, "isExclude": flt.is_exclude},
    )


def _plain(text: str) -> Callable[[ScanTrace, WorldEntry, str], tuple[str, Detail]]:
    def make(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
        return text, _pass(trace, entry) if code in (CONSTANT, STICKY, DECORATOR) else {}

    return make


def _delayed(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
    level = entry.delay_until_recursion
    text = f"delayUntilRecursion {level}: no recursion pass at level {level} matched it"
    return text, {"level": level}


_DESCRIBE: dict[str, Callable[[ScanTrace, WorldEntry, str], tuple[str, Detail]]] = {
    CONSTANT: _plain("constant"),
    STICKY: _plain("sticky (still active from an earlier message)"),
    DECORATOR: _plain("@@activate"),
    KEY: _key,
    MIN_ACTIVATIONS: _key,
    DISABLED: _plain("disabled"),
    CHARACTER_FILTER: _filter,
    DELAY: _timed,
    COOLDOWN: _timed,
    DONT_ACTIVATE: _plain("@@dont_activate"),
    NO_KEYS: _plain("no keys, and not constant"),
    NO_MATCH: _no_match,
    SECONDARY_FAILED: _no_match,
    RECURSION_DELAYED: _delayed,
    RECURSION_EXCLUDED: _plain(
        "not activated by the chat, and excluded from recursion passes (excludeRecursion)"
    ),
    GROUP_LOST: _group,
    PROBABILITY: _probability,
    BUDGET: _budget,
    NOT_CHECKED: _plain("not checked: the scan stopped at its pass limit"),
}


def describe(trace: ScanTrace, entry: WorldEntry, code: str) -> tuple[str, Detail]:
    """The text and the details of ``entry``'s reason ``code``."""
    make = _DESCRIBE.get(code)
    return make(trace, entry, code) if make is not None else (code or "unknown", {})
