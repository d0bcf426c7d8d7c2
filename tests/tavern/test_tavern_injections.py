"""In-chat injections at depth, as SillyTavern's populationInjectionPrompts places them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import compiler
from compiler.tavern.injections import ExtensionPrompt, apply_injections
from compiler.tavern.preset import PresetPrompt

HISTORY = ["m1", "m2", "m3"]


def inj(ident: str, content: str, depth: int, **kw: Any) -> PresetPrompt:
    return PresetPrompt(
        identifier=ident, content=content, injection_position=1, injection_depth=depth, **kw
    )


def make(role: str, content: str, sources: list[PresetPrompt]) -> str:
    return f"{role}:{content}"


def run(*prompts: PresetPrompt, history: list[str] = HISTORY, **kw: Any) -> list[str]:
    return apply_injections(history, list(prompts), make, **kw)


def test_depths_count_from_the_end() -> None:
    assert run(inj("a", "X", 0)) == ["m1", "m2", "m3", "system:X"]
    assert run(inj("a", "X", 1)) == ["m1", "m2", "system:X", "m3"]
    assert run(inj("a", "X", 2)) == ["m1", "system:X", "m2", "m3"]
    assert run(inj("a", "X", 9)) == ["system:X", "m1", "m2", "m3"]
    assert run(inj("a", "X", 4), history=[]) == ["system:X"]


def test_injected_messages_do_not_shift_other_depths() -> None:
    got = run(inj("a", "A", 0), inj("b", "B", 1), inj("c", "C", 2))
    assert got == ["m1", "system:C", "m2", "system:B", "m3", "system:A"]


def test_same_depth_groups_by_order_then_role() -> None:
    got = run(
        inj("u", "user low", 0, role="user", injection_order=10),
        inj("s1", "sys high", 0, injection_order=200),
        inj("a", "asst high", 0, role="assistant", injection_order=200),
        inj("s2", "sys default", 0),
        inj("s3", "sys high 2", 0, injection_order=200),
    )
    # SillyTavern builds [200: system, assistant; 100: system; 10: user] newest-first,
    # so in the oldest-first history they appear reversed.
    assert got == [
        *HISTORY,
        "user:user low",
        "system:sys default",
        "assistant:asst high",
        "system:sys high\nsys high 2",
    ]


def test_sources_are_passed_to_make_message() -> None:
    seen: list[tuple[str, list[str]]] = []

    def record(role: str, content: str, sources: list[PresetPrompt]) -> str:
        seen.append((content, [p.identifier for p in sources]))
        return content

    apply_injections(["m"], [inj("a", "A", 0), inj("b", "B", 0)], record)
    assert seen == [("A\nB", ["a", "b"])]


def test_ignored_entries() -> None:
    relative = PresetPrompt(identifier="main", content="main text")
    disabled = inj("d", "D", 0, enabled=False)
    blank = inj("b", "  \n ", 0)
    empty = inj("e", "", 0)
    assert run(relative, disabled, blank, empty) == HISTORY


def test_injection_trigger_limits_generation_types() -> None:
    only_continue = inj("c", "C", 0, injection_trigger=["continue"])
    assert run(only_continue) == HISTORY
    assert run(only_continue, generation_type="continue") == [*HISTORY, "system:C"]


def test_history_is_not_modified() -> None:
    history = list(HISTORY)
    run(inj("a", "A", 1), history=history)
    assert history == HISTORY


def test_injections_stand_in_an_empty_chat(tmp_path: Path) -> None:
    """One forward pass: the history is finished (injections in) before the frame decides it
    is empty, so an empty chat still carries the preset's in-chat injections."""
    preset = {
        "prompts": [
            {"identifier": "main", "content": "Main."},
            {"identifier": "chatHistory", "marker": True},
            {
                "identifier": "note",
                "role": "system",
                "content": "Remember the river.",
                "injection_position": 1,
                "injection_depth": 0,
            },
        ]
    }
    (tmp_path / "p.json").write_text(json.dumps(preset))
    result = compiler.compile(tmp_path / "p.json", context={"chat": []}, mode="legacy")
    assert [m["content"] for m in result.request["messages"]] == [
        "Main.",
        "[Start a new Chat]",
        "Remember the river.",
    ]


def ext(key: str, content: str, depth: int, role: str = "system") -> ExtensionPrompt:
    return ExtensionPrompt(key, role, depth, content)  # type: ignore[arg-type]


def test_extension_prompts_follow_the_entries_sorted_by_key() -> None:
    """getExtensionPrompt: sorted by key (2_floating_prompt, DEPTH_PROMPT,
    PERSONA_DESCRIPTION, customDepthWI-...), each trimmed, after the preset's entries."""
    got = run(
        inj("a", " A ", 0),
        extensions=[
            ext("customDepthWI-0-0", "WI", 0),
            ext("DEPTH_PROMPT", "  CN\n", 0),
            ext("2_floating_prompt", "AN", 0),
            ext("PERSONA_DESCRIPTION", "P", 0, "user"),
        ],
    )
    assert got == [*HISTORY, "user:P", "system:A\nAN\nCN\nWI"]


def test_extension_prompts_alone_and_out_of_range() -> None:
    assert run(extensions=[ext("DEPTH_PROMPT", "CN", 1)]) == ["m1", "m2", "system:CN", "m3"]
    assert run(extensions=[ext("DEPTH_PROMPT", "CN", 1001)]) == HISTORY  # MAX_INJECTION_DEPTH
    assert run(extensions=[ext("DEPTH_PROMPT", "CN", -1)]) == HISTORY
    assert run(extensions=[ext("DEPTH_PROMPT", " \n", 0)]) == HISTORY
    assert run(extensions=[ext("DEPTH_PROMPT", "CN", 1000)]) == ["system:CN", *HISTORY]


def test_extension_prompts_join_the_order_100_group() -> None:
    got = run(
        inj("hi", "HIGH", 0, injection_order=200),
        inj("lo", "LOW", 0, injection_order=10),
        extensions=[ext("2_floating_prompt", "AN", 0)],
    )
    assert got == [*HISTORY, "system:LOW", "system:AN", "system:HIGH"]


def test_extension_sources_are_passed_to_make_message() -> None:
    seen: list[list[str]] = []

    def record(role: str, content: str, sources: list[Any]) -> str:
        seen.append([getattr(s, "identifier", getattr(s, "key", "")) for s in sources])
        return content

    apply_injections(["m"], [inj("a", "A", 0)], record, extensions=[ext("K", "B", 0)])
    assert seen == [["a", "K"]]


def test_many_depths_take_time_in_proportion() -> None:
    """A preset with thousands of injections, each at a depth of its own, and extension
    prompts: each is looked at once, not once per depth."""
    prompts = [inj(f"p{i}", "x", i) for i in range(10_000)]
    notes = [ExtensionPrompt(f"k{i}", "user", i % 1000, "n") for i in range(10_000)]
    got = run(*prompts, history=["m"] * 20_000, extensions=notes)
    assert len(got) == 20_000 + 1001 + 1000  # depths past 1000 are not injected


def test_an_entry_deeper_than_sillytavern_injects_is_left_out_and_reported(
    tmp_path: Path,
) -> None:
    """populationInjectionPrompts injects depths 0 to 1000 only: an in-chat entry at 1001 is
    not in SillyTavern's prompt, so not here either (it is reported, not sent at the top)."""
    assert run(inj("a", "A", 1000), inj("b", "B", 1001)) == ["system:A", *HISTORY]
    prompts = [
        {"identifier": "chatHistory", "marker": True},
        {
            "identifier": "deep",
            "content": "Deep.",
            "injection_position": 1,
            "injection_depth": 5000,
        },
    ]
    (tmp_path / "p.json").write_text(json.dumps({"prompts": prompts}))
    chat = [{"role": "user", "content": "hi"}]
    result = compiler.compile(tmp_path / "p.json", context={"chat": chat}, mode="legacy")
    assert "Deep." not in [m["content"] for m in result.request["messages"]]
    assert [w.code for w in result.warnings] == ["context.note_unplaced"]
    assert "'deep'" in result.warnings[0].message and "5000" in result.warnings[0].message


def test_world_info_deeper_than_sillytavern_injects_is_reported() -> None:
    """An ``@D`` entry at depth 1001 is never injected (populationInjectionPrompts stops at
    1000): it is reported, not silently dropped; one at 1000 goes to the top."""
    preset = json.dumps({"prompts": [{"identifier": "chatHistory", "marker": True}]})
    entries = [
        {"content": "AT-1000", "position": 4, "depth": 1000, "uid": 1},
        {"content": "AT-5000", "position": 4, "depth": 5000, "uid": 2, "comment": "deep"},
    ]
    context = {"chat": [{"role": "user", "content": "hi"}], "worldInfo": entries}
    result = compiler.compile_string(preset, kind="preset", context=context, mode="legacy")
    assert [m["content"] for m in result.request["messages"]][-2:] == ["AT-1000", "hi"]
    assert [w.code for w in result.warnings] == ["world.position_unsupported"]
    assert "2 (deep)" in result.warnings[0].message and "5000" in result.warnings[0].message
