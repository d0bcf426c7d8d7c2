"""The Gemini dialect against SillyTavern 1.12.6's Google (MakerSuite) requests.

SillyTavern builds one chat-completion prompt whatever the source, then its server converts
it for Google (``convertGooglePrompt``, src/prompt-converters.js) and sends it from
``sendMakerSuiteRequest`` (src/endpoints/backends/chat-completions.js). Two yardsticks:

- ``captures/`` holds the prompts SillyTavern assembled for each case
  (``tests/test_st_oracle.py``); :func:`convert_google_prompt`, written from SillyTavern's
  source, converts each one as its server does for ``gemini-1.5-pro``, and this project's
  Gemini request for the same case must equal it (synthetic cases whose budget does not
  cut: the cut is counted with another tokenizer);
- ``gemini/captures/`` holds the generateContent bodies SillyTavern itself sent (st-oracle,
  source ``makersuite``): compared field for field (corpus captures by sha256 and length).

The deliberate differences (docs, SillyTavern presets) are applied to what SillyTavern
sent before comparing.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compiler.inputs.cards import read_card
from tests.test_st_oracle import (
    CASES,
    FIXTURES,
    MESSAGE_DIFFERENCES,
    ST_COMMIT,
    ST_VERSION,
    _compile,
    _load,
    _resolve,
)

MODEL = "gemini-1.5-pro"
#: The user turn this project puts first where the contents would open with the model
#: (SillyTavern 1.12.6 sends such a request as it is; see the docs).
OPENER = {"role": "user", "parts": [{"text": "[Start a new chat]"}]}

#: Cases whose prompt this project cuts elsewhere: its Gemini counts (an estimate with a
#: safety margin) are not the tokenizer SillyTavern counted the captured prompt with.
CUT_ELSEWHERE = {
    "synth_long_tight": "the history is cut for the budget",
    "synth_long_tight_world": "the history is cut for the budget",
    "synth_examples_budget": "the examples are cut for the budget",
    "synth_unseen_tight": "the history and the examples are cut for the budget",
    **{
        f"synth_squash_{kind}_{ctx}": "captured at the edge of SillyTavern's OpenAI budget"
        for kind, sizes in (("budget", (927, 928, 951, 952)), ("examples", (695, 700)))
        for ctx in sizes
    },
}

Messages = list[dict[str, Any]]


def convert_google_prompt(
    messages: Messages, model: str, use_sys_prompt: bool, char_name: str, user_name: str
) -> dict[str, Any]:
    """SillyTavern 1.12.6's ``convertGooglePrompt`` (text messages), and the gate of
    ``sendMakerSuiteRequest``: ``{contents, system_instruction?}``."""
    use_sys_prompt = use_sys_prompt and ("gemini-1.5-flash" in model or "gemini-1.5-pro" in model)
    messages = copy.deepcopy(messages)
    sys_prompt = ""
    if use_sys_prompt:
        while len(messages) > 1 and messages[0]["role"] == "system":
            first = messages[0]
            for label, name in (("example_user", user_name), ("example_assistant", char_name)):
                if (
                    name
                    and first.get("name") == label
                    and not first["content"].startswith(f"{name}: ")
                ):
                    first["content"] = f"{name}: {first['content']}"
            sys_prompt += f"{first['content']}\n\n"
            messages.pop(0)
    contents: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        role = {"system": "user", "assistant": "model"}.get(message["role"], message["role"])
        text = message["content"]
        if message.get("name"):
            text = f"{message['name']}: {text}"
        if index > 0 and role == contents[-1]["role"]:
            contents[-1]["parts"][0]["text"] += "\n\n" + text
        else:
            contents.append({"role": role, "parts": [{"text": text}]})
    body: dict[str, Any] = {"contents": contents}
    if use_sys_prompt:
        body["system_instruction"] = {"parts": {"text": sys_prompt.strip()}}
    return body


def _renamed(old: str, new: str) -> Any:
    return lambda messages: [{**m, "name": new} if m.get("name") == old else m for m in messages]


def _model_named(messages: Messages) -> Messages:
    return [{**m, "content": m["content"].replace("gpt-4o", MODEL)} for m in messages]


#: Deliberate differences of the Gemini request, on top of the prompt's own
#: (``tests/test_st_oracle.py``'s ``MESSAGE_DIFFERENCES``).
GEMINI_DIFFERENCES = {
    # names_behavior 1: SillyTavern writes the name it sanitized for OpenAI's name field
    # (Mira_Vale) into the text; this project writes the speaker's name
    "synth_names_completion": _renamed("Mira_Vale", "Mira Vale"),
    # the prompt names the model ({{model}}): the capture's is gpt-4o
    "synth_macros": _model_named,
}


def _names(spec: dict[str, Any]) -> tuple[str, str]:
    """The card's and the persona's names (SillyTavern's ``char_name``, ``user_name``); a V3
    card's nickname is its name here (a deliberate difference, ``synth_v3_nickname``)."""
    card = _load(FIXTURES / spec["run"]["character"])
    data = card.get("data", card)
    persona = spec["run"].get("persona") or {}
    return data.get("nickname") or data["name"], persona.get("name", "User")


def _as_sent(body: dict[str, Any]) -> dict[str, Any]:
    """SillyTavern's body in this project's spelling: ``systemInstruction`` with a list of
    parts (its ``system_instruction.parts`` is one object), none when empty; an opening user
    turn where the contents open with the model."""
    out = {"contents": list(body["contents"])}
    system = body.get("system_instruction") or body.get("systemInstruction")
    if system is not None:
        parts = system["parts"] if isinstance(system["parts"], list) else [system["parts"]]
        parts = [p for p in parts if p.get("text")]
        if parts:
            out["systemInstruction"] = {"parts": parts}
    if out["contents"] and out["contents"][0]["role"] == "model":
        out["contents"].insert(0, OPENER)
    return out


PORTED = [
    n
    for n in CASES
    if n.startswith("synth_") and "expectError" not in _load(FIXTURES / "cases" / f"{n}.json")
]


def _speakers_named(messages: Messages, char: str, user: str) -> Messages:
    """Example messages written ``Name: text`` with their speakers' names, as
    convertGooglePrompt writes them into the system instruction (SillyTavern 1.12.6 writes
    ``example_user: `` in a user turn; this project the speaker's name: deliberate)."""
    speakers = {"example_user": user, "example_assistant": char}
    out = []
    for m in messages:
        name = speakers.get(m.get("name", ""))
        if name:
            text = m["content"]
            m = {
                "role": m["role"],
                "content": text if text.startswith(f"{name}: ") else f"{name}: {text}",
            }
        out.append(m)
    return out


@pytest.mark.parametrize("system_instruction", [True, False], ids=["sysprompt", "no-sysprompt"])
@pytest.mark.parametrize("name", PORTED)
def test_the_request_equals_sillytaverns_prompt_converted_for_google(
    name: str, system_instruction: bool, tmp_path: Path
) -> None:
    if name in CUT_ELSEWHERE:
        pytest.skip(CUT_ELSEWHERE[name])
    spec = _load(FIXTURES / "cases" / f"{name}.json")
    capture = _load(FIXTURES / "captures" / f"{name}.json")
    assert capture["hashed"] is False
    char, user = _names(spec)
    messages = MESSAGE_DIFFERENCES.get(name, list)(list(capture["body"]["messages"]))
    messages = GEMINI_DIFFERENCES.get(name, list)(messages)
    if not system_instruction:
        messages = _speakers_named(messages, char, user)
    want = _as_sent(convert_google_prompt(messages, MODEL, system_instruction, char, user))
    overrides = {**spec.get("overrides", {}), "use_makersuite_sysprompt": system_instruction}
    request = _compile({**spec, "model": MODEL, "overrides": overrides}, tmp_path, "gemini")
    got = {k: request[k] for k in ("contents", "systemInstruction") if k in request}
    assert got == want


# -- the generateContent bodies SillyTavern sent ----------------------------------------------
GEMINI = FIXTURES / "gemini"
CAPTURED = sorted(p.stem for p in (GEMINI / "cases").glob("*.json"))

#: What SillyTavern sends Google that this project leaves out (docs, Providers: Gemini).
NOT_SENT = ("safetySettings",)
NOT_SENT_CONFIG = ("candidateCount",)

#: Deliberate differences in ``generationConfig``, applied to the capture before comparing.
CONFIG_DIFFERENCES: dict[str, dict[str, Any]] = {
    # SillyTavern 1.12.6 never reads a chat-completion preset's custom_stopping_strings
    # (docs: they are sent); "\nAlex:" is already SillyTavern's own, sent once
    "gemini_samplers": {"stopSequences": ["\nAlex:", "[Start a new Chat]", "###"]},
}


def _examples_named(user: str, char: str) -> Callable[[str], str]:
    return lambda text: text.replace("example_user: ", f"{user}: ").replace(
        "example_assistant: ", f"{char}: "
    )


#: Deliberate differences in the text of ``contents`` (unhashed captures), applied to each
#: part SillyTavern sent before comparing.
TEXT_DIFFERENCES = {
    # use_makersuite_sysprompt off: SillyTavern 1.12.6 writes its labels example_user: /
    # example_assistant: before the examples in the user turn; this project the speakers'
    # names, as SillyTavern writes them in the system instruction
    "gemini_nosys": _examples_named("Alex", "Mira Vale"),
    "gemini_unseen_send_nosys": _examples_named("Alex", "Élodie Brünn"),
}

#: Captures whose prompt holds other world-info entries because SillyTavern counted the
#: budget with another tokenizer: the comment of each entry this project adds.
WORLD_COUNTED_ELSEWHERE = {
    # SillyTavern's checkout lacks gemma.model, so it counted Google prompts as characters /
    # 3.35; the world-info budget (25% of 4095 - 300 = 949 tokens) then held one entry fewer
    # than this project's per-script estimate (which bounds Gemini's tokenizer) keeps
    "gemini_corpus_seraphina_short": ("glade",),
}


def _digest(text: str) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "length": len(text)}


def _stored(content: dict[str, Any], hashed: bool) -> dict[str, Any]:
    """A content as a capture stores it: each part's text, or its digest when hashed."""
    parts = [
        {**p, "text": _digest(p["text"])} if hashed and "text" in p else p for p in content["parts"]
    ]
    return {**content, "parts": parts}


def expected_body(name: str) -> dict[str, Any]:
    """The capture's body as this project sends it: the deliberate differences applied."""
    capture = _load(GEMINI / "captures" / f"{name}.json")
    body = copy.deepcopy(capture["body"])
    hashed = capture["hashed"]
    for key in NOT_SENT:
        body.pop(key, None)
    config = body.pop("generationConfig", {})
    for key in NOT_SENT_CONFIG:
        config.pop(key, None)
    if "stopSequences" in config:  # an empty stop sequence stops nothing: left out
        config["stopSequences"] = [s for s in config["stopSequences"] if s]
    config.update(CONFIG_DIFFERENCES.get(name, {}))
    out: dict[str, Any] = {"contents": body.pop("contents")}
    change = TEXT_DIFFERENCES.get(name)
    if change is not None:
        assert not hashed
        out["contents"] = [
            {**c, "parts": [{**p, "text": change(p["text"])} for p in c["parts"]]}
            for c in out["contents"]
        ]
    system = body.pop("system_instruction", None)
    if system is not None:  # one object in SillyTavern's body; none when empty
        parts = system["parts"] if isinstance(system["parts"], list) else [system["parts"]]
        empty = _digest("") if hashed else ""
        parts = [p for p in parts if p.get("text") not in ("", empty)]
        if parts:
            out["systemInstruction"] = {"parts": parts}
    if out["contents"] and out["contents"][0]["role"] == "model":
        out["contents"].insert(0, _stored(OPENER, hashed))
    out["generationConfig"] = config
    assert not body, f"SillyTavern sent keys this test does not know: {sorted(body)}"
    return out


def _compile_captured(spec: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """The case compiled as SillyTavern was run; its Advanced Formatting stop strings
    (``powerUser``) are the preset's ``custom_stopping_strings`` here."""
    power = spec.get("powerUser", {})
    overrides = dict(spec.get("overrides", {}))
    if "custom_stopping_strings" in power:
        assert power.get("custom_stopping_strings_macro", True) is True  # macros filled
        overrides["custom_stopping_strings"] = power["custom_stopping_strings"]
    return _compile({**spec, "overrides": overrides}, tmp_path, "gemini")


def _without_entry(request: dict[str, Any], spec: dict[str, Any], comment: str) -> dict[str, Any]:
    """``request`` without the world-info entry named ``comment`` in its system instruction
    (the entry's text, its ``{{user}}`` and ``{{char}}`` filled, after a newline)."""
    world = _load(_resolve(spec["run"]["worldInfo"]))
    entries = world["entries"]
    entry = next(
        e
        for e in (entries.values() if isinstance(entries, dict) else entries)
        if e.get("comment") == comment
    )
    char, user = _names_of(spec)
    text = entry["content"].replace("{{user}}", user).replace("{{char}}", char).replace("\r", "")
    system = request["systemInstruction"]["parts"][0]["text"]
    assert f"\n{text}" in system, f"world-info entry {comment!r} is not in the request"
    parts = [{"text": system.replace(f"\n{text}", "", 1)}]
    return {**request, "systemInstruction": {"parts": parts}}


def _names_of(spec: dict[str, Any]) -> tuple[str, str]:
    """The card's and the persona's names, for a card file or a corpus PNG."""
    if not str(spec["run"]["character"]).startswith("corpus:"):
        return _names(spec)
    card = read_card(_resolve(spec["run"]["character"]))  # as the compile reads it
    return card.name, (spec["run"].get("persona") or {}).get("name", "User")


@pytest.mark.parametrize("name", CAPTURED)
def test_the_body_equals_what_sillytavern_sent_google(name: str, tmp_path: Path) -> None:
    spec = _load(GEMINI / "cases" / f"{name}.json")
    capture = _load(GEMINI / "captures" / f"{name}.json")
    assert spec["source"] == "makersuite"
    st = capture["sillytavern"]
    assert (st["version"], st["commit"][:9]) == (ST_VERSION, ST_COMMIT)
    assert st["requests_after_send"] == 1
    assert capture["hashed"] is ("corpus:" in json.dumps(spec))
    request = _compile_captured(spec, tmp_path)
    for comment in WORLD_COUNTED_ELSEWHERE.get(name, ()):
        request = _without_entry(request, spec, comment)
    want = expected_body(name)
    got = {
        **request,
        "contents": [_stored(c, capture["hashed"]) for c in request["contents"]],
    }
    if "systemInstruction" in got:
        got["systemInstruction"] = _stored(got["systemInstruction"], capture["hashed"])
    assert got.get("systemInstruction") == want.get("systemInstruction")
    assert got["contents"] == want["contents"]
    assert got["generationConfig"] == want["generationConfig"]
    assert got == want


@pytest.mark.parametrize("name", CAPTURED)
def test_each_gemini_capture_keeps_corpus_text_out(name: str) -> None:
    spec = _load(GEMINI / "cases" / f"{name}.json")
    capture = _load(GEMINI / "captures" / f"{name}.json")
    assert capture["hashed"] is ("corpus:" in json.dumps(spec))
    if not capture["hashed"]:
        return
    texts = [p.get("text") for c in capture["body"]["contents"] for p in c["parts"]]
    assert all(isinstance(t, dict) and set(t) == {"sha256", "length"} for t in texts)
