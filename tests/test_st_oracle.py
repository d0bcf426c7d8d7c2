"""SillyTavern 1.12.6's own requests as the yardstick (issue 12, item 20).

Each case in ``tests/fixtures/st_oracle/cases`` names a preset, a card, a lorebook, a persona,
a chat and the context size; ``captures/<case>.json`` is the chat-completion body SillyTavern
1.12.6 sent for it (captured with st-oracle, see the fixtures' README), with its version,
commit and settings. This project compiles the same case (legacy mode, ``--provider openai``,
the same model and context size) and must send the same messages, in order, with the same
role, name and content, and the same sampler fields.

Cases whose inputs come from ``../shared/corpus`` read it in place (skipped when it is
absent) and their captures keep each message's sha256 and length, never its text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.errors import BudgetError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "st_oracle"
CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"
CASES = sorted(p.stem for p in (FIXTURES / "cases").glob("*.json"))
ST_VERSION, ST_COMMIT = "1.12.6", "ba6f7b7a9"

#: Captures that differ because of an issue-12 item still being built: each turns into a
#: failure (strict) as soon as that item lands and the request matches.
XFAIL: dict[str, str] = {}

#: Documented deliberate differences (README, SillyTavern presets): what this project sends
#: instead of what SillyTavern 1.12.6 sent, applied to the capture before comparing.
SAMPLER_DIFFERENCES: dict[str, dict[str, Any]] = {
    # SillyTavern 1.12.6 takes stop strings from its Advanced Formatting settings
    # (power_user.custom_stopping_strings), never from a chat-completion preset; issue 12
    # item 14 asks for the preset's custom_stopping_strings in the request
    "synth_samplers": {"stop": ["\nAlex:", "###"]},
}
Messages = list[dict[str, Any]]


def _inserted(at: int, message: dict[str, Any]) -> Callable[[Messages], Messages]:
    return lambda messages: [*messages[:at], message, *messages[at:]]


def _names_in_content(speakers: dict[str, str]) -> Callable[[Messages], Messages]:
    def apply(messages: Messages) -> Messages:
        out = []
        for m in messages:
            if m.get("name") == "___":
                m = {"role": m["role"], "content": f"{speakers[m['role']]}: {m['content']}"}
            out.append(m)
        return out

    return apply


def _replaced(old: str, new: str) -> Callable[[Messages], Messages]:
    return lambda messages: [
        {**m, "content": m["content"].replace(old, new)} if "content" in m else m for m in messages
    ]


MESSAGE_DIFFERENCES: dict[str, Callable[[Messages], Messages]] = {
    # a V3 card's nickname fills {{char}} (the V3 spec, and TauriTavern); SillyTavern 1.12.6
    # ignores the nickname
    "synth_v3_nickname": _replaced("Mira Vale", "Mimi"),
    # SillyTavern's populateDialogueExamples: when a block's [Example Chat] header does not
    # fit and none of its messages do, removeLastFrom removes the previous block's last
    # message instead (a bug), leaving that block's header alone; this project keeps it
    "synth_examples_budget": _inserted(
        24,
        {"role": "system", "name": "example_user", "content": "How long is crossing number 7?"},
    ),
    # the same: the second block's header does not fit, and the first block's one message
    # that did is removed in its place (the history edge is SillyTavern's, squash or not)
    "synth_squash_budget_951": _inserted(
        2,
        {"role": "system", "name": "example_user", "content": "What do you write in that book?"},
    ),
    "synth_squash_examples_700": _inserted(
        8, {"role": "system", "name": "example_assistant", "content": "The good ones do."}
    ),
    # the same after a cut history: the second block's header does not fit, the first
    # block's one message is removed in its place
    "synth_unseen_tight": _inserted(
        7,
        {"role": "system", "name": "example_user", "content": "Is the crossing safe tonight?"},
    ),
    # SillyTavern 1.12.6 drops every entry of an old-format lorebook (no position and
    # probability fields: its editor fills in probability 0); this project reads them with
    # SillyTavern's entry defaults, so the constant entry is sent
    "synth_old_lorebook": _inserted(
        2, {"role": "system", "content": "Kettle Bay has one pub, the Drowned Anchor."}
    ),
    # names_behavior 1: SillyTavern sanitizes both Аня and Оля to ___ (one speaker to the
    # model); issue 12 item 12 keeps them apart by writing the names into the content
    "synth_names_unicode": _names_in_content({"user": "Аня", "assistant": "Оля"}),
    # a preset without prompt_order: SillyTavern's default order leaves out an entry it does
    # not name; this project keeps it after the named entry it follows in prompts[]
    "synth_bare_custom": _inserted(
        1, {"role": "system", "content": "The sea is always cold here."}
    ),
}

#: SillyTavern's request key -> this project's OpenAI Chat Completions key.
SAMPLERS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
    "max_tokens": "max_completion_tokens",
    "seed": "seed",
    "stop": "stop",
}


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _resolve(ref: str) -> Path:
    """A case's file reference: ``corpus:...`` in ../shared/corpus, else in the fixtures."""
    if ref.startswith("corpus:"):
        path = CORPUS / ref.removeprefix("corpus:")
        if not path.is_file():
            pytest.skip(f"corpus file {path} is absent (../shared/corpus is not checked out)")
        return path.resolve()
    return FIXTURES / ref


def _compile(spec: dict[str, Any], tmp_path: Path, provider: str = "openai") -> dict[str, Any]:
    """The case compiled as SillyTavern was run: its preset with the UI overrides, legacy."""
    preset = _load(_resolve(spec["preset"]))
    preset.update(spec.get("overrides", {}))
    preset_path = tmp_path / "preset.json"
    preset_path.write_text(json.dumps(preset), encoding="utf-8")
    run = dict(spec["run"])
    for key in ("character", "worldInfo"):
        if isinstance(run.get(key), str):
            run[key] = str(_resolve(run[key]))
    run_path = tmp_path / "run.json"
    run_path.write_text(json.dumps(run), encoding="utf-8")
    result = compiler.compile(
        preset_path, context=run_path, mode="legacy", provider=provider, model=spec["model"]
    )
    return result.request


def _shape(message: dict[str, Any], hashed: bool) -> dict[str, Any]:
    """A message as the capture stores it: role, name, content (or its sha256 and length)."""
    out: dict[str, Any] = {"role": message["role"]}
    if "name" in message:
        out["name"] = message["name"]
    content = message.get("content")
    assert isinstance(content, str), f"content is not text: {content!r}"
    if hashed:
        out["sha256"] = hashlib.sha256(content.encode("utf-8")).hexdigest()
        out["length"] = len(content)
    else:
        out["content"] = content
    return out


def _first_difference(want: list[dict[str, Any]], got: list[dict[str, Any]]) -> str:
    for i, (w, g) in enumerate(zip(want, got, strict=False)):
        if w != g:
            return f"message {i}: SillyTavern sent {w!r}, this project {g!r}"
    return f"SillyTavern sent {len(want)} messages, this project {len(got)}"


def _case(name: str) -> pytest.ParameterSet:
    marks = [pytest.mark.xfail(strict=True, reason=XFAIL[name])] if name in XFAIL else []
    return pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("name", [_case(n) for n in CASES])
def test_the_request_equals_sillytaverns(name: str, tmp_path: Path) -> None:
    spec = _load(FIXTURES / "cases" / f"{name}.json")
    capture = _load(FIXTURES / "captures" / f"{name}.json")
    if "expectError" in spec:
        # deliberate (README): SillyTavern 1.12.6 shows "Token budget exceeded" and still
        # sends what it had assembled; this project sends nothing and says why
        with pytest.raises(BudgetError) as err:
            _compile(spec, tmp_path)
        assert err.value.code == spec["expectError"]
        assert len(capture["body"]["messages"]) == 1  # SillyTavern's main prompt alone
        return
    request = _compile(spec, tmp_path)
    body = {**capture["body"], **SAMPLER_DIFFERENCES.get(name, {})}
    want = MESSAGE_DIFFERENCES.get(name, list)(list(body["messages"]))
    got = [_shape(m, capture["hashed"]) for m in request["messages"]]
    assert got == want, _first_difference(want, got)
    for st_key, key in SAMPLERS.items():
        assert request.get(key) == body.get(st_key), f"{key}: SillyTavern sent {body.get(st_key)}"
    assert request["model"] == body["model"]


@pytest.mark.parametrize("name", CASES)
def test_each_capture_records_sillytavern_and_keeps_corpus_text_out(name: str) -> None:
    spec = _load(FIXTURES / "cases" / f"{name}.json")
    capture = _load(FIXTURES / "captures" / f"{name}.json")
    st = capture["sillytavern"]
    assert (st["version"], st["commit"][:9]) == (ST_VERSION, ST_COMMIT)
    assert st["ui_overrides"] == spec.get("overrides", {})
    # SillyTavern ran with the context size and reply limit the compile uses (its sliders
    # clamp, e.g. a context under 512); a preset without them keeps the shipped 4095 / 300
    preset = {**_load(_resolve(spec["preset"])), **spec.get("overrides", {})}
    oai = st["oai_settings"]
    assert oai["openai_max_context"] == preset.get("openai_max_context", 4095)
    assert oai["openai_max_tokens"] == preset.get("openai_max_tokens", 300)
    assert st["requests_after_send"] == 1
    uses_corpus = "corpus:" in json.dumps(spec)
    assert capture["hashed"] is uses_corpus
    if uses_corpus:  # corpus text never lands in the repository
        assert all("content" not in m for m in capture["body"]["messages"])
