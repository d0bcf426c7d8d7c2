"""Speakers whose names collapse when made OpenAI-safe stay apart (issue 12, item 12)."""

from __future__ import annotations

from typing import Any

import compiler


def sent(*speakers: tuple[str, str]) -> list[dict[str, Any]]:
    chat = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text, "name": name}
        for i, (name, text) in enumerate(speakers)
    ]
    result = compiler.compile_string("<<agent.chat.history>>", context={"chat": chat})
    return list(result.request["messages"])


def test_names_that_collapse_together_go_into_the_content() -> None:
    got = sent(("Аня", "hi"), ("Оля", "yo"))
    assert [m["content"] for m in got] == ["Аня: hi", "Оля: yo"]
    assert not any("name" in m for m in got)


def test_a_name_with_nothing_safe_left_goes_into_the_content() -> None:
    got = sent(("Аня", "hi"), ("Bob", "yo"))
    assert got[0] == {"role": "user", "content": "Аня: hi"}
    assert got[1] == {"role": "assistant", "content": "yo", "name": "Bob"}


def test_names_that_stay_distinct_keep_the_name_field() -> None:
    got = sent(("John Smith", "hi"), ("Bob", "yo"), ("John Smith", "again"))
    assert [m.get("name") for m in got] == ["John_Smith", "Bob", "John_Smith"]
    assert [m["content"] for m in got] == ["hi", "yo", "again"]


def test_names_that_differ_only_in_unsafe_characters_are_kept_apart() -> None:
    got = sent(("Jo Jo", "hi"), ("Jo.Jo", "yo"))
    assert [m["content"] for m in got] == ["Jo Jo: hi", "Jo.Jo: yo"]
