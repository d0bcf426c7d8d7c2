"""A preset's ``send_if_empty`` is a real user message, as SillyTavern makes it: Send pressed
with nothing typed calls ``sendMessageAsUser(send_if_empty.trim())`` (script.js Generate)
before the prompt is built. The text is stored as a typed message is (the regex scripts for
user input, then macros, with the chat as it was), then it is the chat's newest message:
world info scans it, the Author's Note's interval counts it, the prompt's regex scripts see
it at depth 0 and ``{{lastMessage}}`` is it (st-oracle captures synth_send_if_empty_world,
synth_send_if_empty_note_insert, synth_send_if_empty_note_skip)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import compiler

IDS = ["main", "worldInfoBefore", "chatHistory", "jailbreak"]
CARD: dict[str, Any] = {"name": "Aqua", "description": "Goddess."}
CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
BELL = {
    "entries": {
        "0": {"uid": 0, "key": ["bell"], "content": "The bell is brass.", "position": 0},
    }
}


def preset(tmp_path: Path, send: str, **extra: Any) -> Path:
    texts = {"main": "Main.", "jailbreak": "Last: {{lastMessage}} / {{lastUserMessage}}"}
    prompts = [
        {"identifier": i, "role": "system", "content": texts[i]}
        if i in texts
        else {"identifier": i, "marker": True}
        for i in IDS
    ]
    order = [{"character_id": 100001, "order": [{"identifier": i} for i in IDS]}]
    body = {"prompts": prompts, "prompt_order": order, "new_chat_prompt": "", "send_if_empty": send}
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(body | extra), encoding="utf-8")
    return path


def compiled(tmp_path: Path, send: str, preset_extra: Any = None, **ctx: Any) -> list[Any]:
    context: dict[str, Any] = {"character": CARD, "persona": {"name": "Kazuma"}, "chat": CHAT}
    context.update(ctx)
    path = preset(tmp_path, send, **(preset_extra or {}))
    result = compiler.compile(path, context=context, mode="legacy")
    return [(m["role"], m["content"]) for m in result.request["messages"]]


def test_it_is_filled_with_the_chat_before_it_and_read_as_the_newest_message(
    tmp_path: Path,
) -> None:
    got = compiled(tmp_path, "  {{user}} after {{lastMessage}}. \n")
    assert got == [
        ("system", "Main."),
        ("user", "hi"),
        ("assistant", "yo"),
        ("user", "Kazuma after yo."),
        ("system", "Last: Kazuma after yo. / Kazuma after yo."),
    ]


def test_world_info_scans_it(tmp_path: Path) -> None:
    books, bell = {"global": BELL}, ("system", "The bell is brass.")
    assert bell in compiled(tmp_path, "I ring the bell.", lorebooks=books)
    assert bell not in compiled(tmp_path, "I wait.", lorebooks=books)
    # only when it is sent: a chat that ends with the user's message has none
    chat = [*CHAT, {"role": "user", "content": "I wait."}]
    got = compiled(tmp_path, "I ring the bell.", lorebooks=books, chat=chat)
    assert bell not in got
    assert got[-2] == ("user", "I wait.")


def test_the_authors_note_interval_counts_it(tmp_path: Path) -> None:
    """note_interval 2: one user message in the chat, the second is send_if_empty."""
    meta = {"note_prompt": "AN", "note_interval": 2, "note_depth": 0}
    assert ("system", "AN") in compiled(tmp_path, "Go on.", chatMetadata=meta)
    assert ("system", "AN") not in compiled(tmp_path, "", chatMetadata=meta)
    three = [*CHAT, {"role": "user", "content": "u2"}, {"role": "assistant", "content": "a2"}]
    assert ("system", "AN") not in compiled(tmp_path, "Go on.", chatMetadata=meta, chat=three)


def test_a_chat_files_count_hidden_lines_included(tmp_path: Path) -> None:
    lines: list[dict[str, Any]] = [{"user_name": "Kazuma", "character_name": "Aqua"}]
    lines += [
        {"name": "Kazuma", "is_user": True, "mes": "hidden", "is_system": True},
        {"name": "Aqua", "is_user": False, "mes": "a1"},
    ]
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    meta = {"note_prompt": "AN", "note_interval": 2, "note_depth": 0}
    chat = str(tmp_path / "chat.jsonl")
    got = compiled(tmp_path, "Go on.", chatMetadata=meta, chat=chat)
    assert got[-4:-1] == [("assistant", "a1"), ("user", "Go on."), ("system", "AN")]


def test_regex_scripts_store_it_as_typed_then_see_it_at_depth_0(tmp_path: Path) -> None:
    def script(find: str, replace: str, **fields: Any) -> dict[str, Any]:
        base = {"scriptName": find, "findRegex": find, "replaceString": replace}
        return base | {"placement": [1, 2], "promptOnly": False} | fields

    stored = script("/ring/g", "RING")  # stored messages: runs as it is sent
    newest = script("/(yo|RING)/g", "<$1>", promptOnly=True, maxDepth=0)  # the prompt, depth 0
    got = compiled(tmp_path, "I ring.", regexScripts=[stored, newest])
    assert got[1:4] == [("user", "hi"), ("assistant", "yo"), ("user", "I <RING>.")]


def test_names_and_quotes_frame_it_as_the_personas(tmp_path: Path) -> None:
    extra = {"names_behavior": 2, "wrap_in_quotes": True}
    got = compiled(tmp_path, "Go on.", extra)
    assert got[3] == ("user", '"Kazuma: Go on."')


def test_a_session_and_a_long_chat_scan_it_too(tmp_path: Path) -> None:
    """A session's lazily read chat (and a ChatLog) gets the message as a list does."""
    long = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(600)]
    books = {"global": BELL}
    session = compiler.Session(preset(tmp_path, "I ring the bell."), mode="legacy")
    for chat in (long, compiler.ChatLog(long)):
        ctx = {"character": CARD, "persona": {"name": "Kazuma"}, "chat": chat, "lorebooks": books}
        messages = session.compile(ctx).request["messages"]
        assert messages[-2] == {"role": "user", "content": "I ring the bell."}
        assert {"role": "system", "content": "The bell is brass."} in messages
        assert messages[-3] == {"role": "assistant", "content": "m599"}
