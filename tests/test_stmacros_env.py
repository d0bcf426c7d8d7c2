"""SillyTavern's environment macros (issue 12 item 13): random, pick, roll, the clock, the
variables, the chat and compile values; determinism, one pass, and the literal warning."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.st.macros import MacroEnv, literal_macros, substitute

NOW = datetime(2024, 3, 5, 14, 7, 9)
ENV = MacroEnv(now=NOW, seed=7, variables={"x": "5", "s": "ab"}, global_variables={"g": "G"})


def sub(text: str, values: dict[str, str] | None = None, env: MacroEnv = ENV) -> str:
    return substitute(text, values or {}, env)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{time}}", "2:07 PM"),
        ("{{TIME}}", "2:07 PM"),
        ("{{date}}", "March 5, 2024"),
        ("{{weekday}}", "Tuesday"),
        ("{{isotime}}", "14:07"),
        ("{{isodate}}", "2024-03-05"),
        ("{{datetimeformat YYYY-MM-DD HH:mm:ss}}", "2024-03-05 14:07:09"),
        ("{{datetimeformat dddd, Do MMMM [at] h:mm a}}", "Tuesday, 5th March at 2:07 pm"),
        ("{{datetimeformat LLLL}}", "Tuesday, March 5, 2024 2:07 PM"),
        ("{{getvar::x}}|{{getvar::missing}}|{{getglobalvar::g}}", "5||G"),
        ("{{setvar::y::hi}}{{getvar::y}}", "hi"),
        ("{{incvar::x}} {{decvar::x}} {{decvar::x}}", "6 5 4"),
        ("{{addvar::x::2.5}}{{getvar::x}}", "7.5"),
        ("{{addvar::s::cd}}{{getvar::s}}", "abcd"),
        ("{{setglobalvar::g::H}}{{getglobalvar::g}}{{getvar::g}}", "H"),
        ("a{{noop}}b", "ab"),
    ],
)
def test_environment_macros(text: str, expected: str) -> None:
    assert sub(text) == expected


def test_time_utc_offsets_the_utc_time() -> None:
    env = MacroEnv(now=datetime(2024, 3, 5, 14, 7, tzinfo=timezone(timedelta(hours=2))))
    assert sub("{{time_UTC+3}}", env=env) == "3:07 PM"
    assert sub("{{time_utc-12}}", env=MacroEnv(now=datetime(2024, 1, 1, 12, tzinfo=UTC))) == (
        "12:00 AM"
    )


def test_random_and_pick_choose_among_the_options() -> None:
    for text, options in [
        ("{{random::a::b::c}}", {"a", "b", "c"}),
        ("{{random: a , b\\,c }}", {"a", "b,c"}),
        ("{{pick::x y:: z}}", {"x y", " z"}),
        ("{{random:one}}", {"one"}),
    ]:
        seen = {sub(text, env=MacroEnv(now=NOW, seed=s)) for s in range(60)}
        assert seen == options, text


def test_roll() -> None:
    for text, low, high in [
        ("{{roll:d20}}", 1, 20),
        ("{{roll 3d6+2}}", 5, 20),
        ("{{roll:6}}", 1, 6),
    ]:
        seen = {int(sub(text, env=MacroEnv(now=NOW, seed=s))) for s in range(200)}
        assert seen <= set(range(low, high + 1)) and len(seen) > (high - low) // 2, text
    assert sub("{{roll:1d0}}") == "{{roll:1d0}}"


def test_same_environment_same_output_and_the_seed_matters() -> None:
    text = "{{random::a::b::c::d}} {{pick::1::2::3::4}} {{roll:d100}} {{random::a::b::c::d}}"
    assert len({sub(text) for _ in range(5)}) == 1
    assert len({sub(text, env=MacroEnv(now=NOW, seed=s)) for s in range(20)}) > 1
    # each occurrence draws for itself (its offset is part of the seed)
    both = {tuple(sub(text, env=MacroEnv(now=NOW, seed=s)).split()[::3]) for s in range(40)}
    assert any(a != b for a, b in both)


def test_nested_macros_fill_inside_first() -> None:
    assert sub("{{random::{{user}}::{{user}}}}", {"user": "Al"}) == "Al"
    assert sub("{{setvar::who::{{user}}}}{{getvar::who}}", {"user": "Al"}) == "Al"
    assert sub("{{{user}}}", {"user": "Al"}) == "{Al}"


def test_values_are_never_scanned_again() -> None:
    values = {"user": "{{random::x::y}} {{time}}", "lastMessage": "{{getvar::x}}"}
    env = MacroEnv(now=NOW, variables={"v": "{{char}}"}, global_variables={})
    out = substitute("{{user}}|{{lastMessage}}|{{getvar::v}}", {**values, "char": "C"}, env)
    assert out == "{{random::x::y}} {{time}}|{{getvar::x}}|{{char}}"
    assert sub("{{random::{{user}}::{{user}}}}", {"user": "{{time}}"}) == "{{time}}"


def test_unknown_macros_are_reported_as_written() -> None:
    found: list[str] = []
    out = substitute(
        "{{input}} {{user}} {{ {{user}} }} {{idle_duration}}", {"user": "U"}, ENV, found
    )
    assert out == "{{input}} U {{ U }} {{idle_duration}}"
    assert found == ["{{input}}", "{{ {{user}} }}", "{{idle_duration}}"]
    assert literal_macros("{{char}} {{model}} {{random::a}} {{lastMessageId}}") == [
        "{{lastMessageId}}"
    ]


def test_without_an_environment_only_names_are_filled() -> None:
    assert (
        substitute("{{user}} {{time}} {{random::a}}", {"user": "U"}) == "U {{time}} {{random::a}}"
    )


# -- through the compiler ------------------------------------------------------------------


def preset(content: str) -> dict[str, Any]:
    return {
        "prompts": [
            {"identifier": "main", "role": "system", "content": content},
            {"identifier": "chatHistory", "marker": True},
        ],
        "prompt_order": [
            {
                "character_id": 100000,
                "order": [
                    {"identifier": "main", "enabled": True},
                    {"identifier": "chatHistory", "enabled": True},
                ],
            }
        ],
    }


CHAT = [
    {"role": "user", "content": "first {{time}}"},
    {"role": "assistant", "content": "reply {{user}}"},
    {"role": "user", "content": "newest"},
]


def compile_main(tmp_path: Path, content: str, **run: Any) -> compiler.CompileResult:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset(content)))
    context = {"chat": CHAT, **run}
    return compiler.compile(path, context=context, mode="legacy", model="gpt-4o", budget=5000)


def system(result: compiler.CompileResult) -> str:
    return str(result.request["messages"][0]["content"])


def test_compile_fills_from_the_run_context(tmp_path: Path) -> None:
    result = compile_main(
        tmp_path,
        "{{isodate}} {{time}}|{{getvar::mood}}|{{getglobalvar::place}}|{{lastMessage}}|"
        "{{lastUserMessage}}|{{lastCharMessage}}|{{model}}|{{maxPrompt}}",
        now="2024-03-05T14:07:00+01:00",
        variables={"mood": "calm"},
        globalVariables={"place": 3.0},
    )
    assert system(result) == ("2024-03-05 2:07 PM|calm|3|newest|newest|reply {{user}}|gpt-4o|5000")
    assert not [w for w in result.warnings if w.code == "template.unknown_st_macro"]
    # the chat itself is data: never expanded
    assert result.request["messages"][2]["content"] == "first {{time}}"


def test_mes_examples_is_the_cards_examples_as_sillytavern_fills_them(tmp_path: Path) -> None:
    """getCharacterCardFields: trimmed, no \\r, {{char}}/{{user}} filled (st-oracle capture
    synth_macros); <BOT>, <USER> and {{charVersion}} too."""
    card = {"name": "Bo", "mes_example": " <START>\r\n{{char}}: hi\n", "character_version": "2"}
    result = compile_main(
        tmp_path, "[{{mesExamples}}] <bot>/<USER> v{{charVersion}}", character=card
    )
    assert system(result) == "[<START>\nBo: hi] Bo/User v2"


def test_compile_is_reproducible_and_the_seed_decides(tmp_path: Path) -> None:
    text = " ".join(
        ["{{random::a::b::c::d::e::f}}", "{{pick::1::2::3::4::5::6}}", "{{roll:d1000}}"]
    )
    runs = {system(compile_main(tmp_path, text)) for _ in range(3)}
    assert len(runs) == 1  # the default seed comes from the chat
    seeded = {system(compile_main(tmp_path, text, seed=s)) for s in range(8)}
    assert len(seeded) > 1
    assert system(compile_main(tmp_path, text, seed=3)) == system(
        compile_main(tmp_path, text, seed=3)
    )


def test_a_literal_macro_is_a_compile_warning_once(tmp_path: Path) -> None:
    result = compile_main(tmp_path, "{{timeDiff}} {{user}} {{timeDiff}} {{lastMessageId}}")
    found = [w for w in result.warnings if w.code == "template.unknown_st_macro"]
    assert [w.severity for w in found] == ["warning", "warning"]
    assert "{{timeDiff}}" in found[0].message and "{{lastMessageId}}" in found[1].message
    # each at the entry it is in (issue 12, item 17)
    assert {w.file for w in found} == {f"{tmp_path / 'p.json'}#prompts[0].content"}
    with pytest.raises(compiler.StrictError):
        path = tmp_path / "p.json"
        compiler.compile(path, context={"chat": CHAT}, mode="legacy", strict=True)


def test_a_literal_macro_is_a_check_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset('{{random::a}} {{time}} {{banned "x"}} {{user}}')))
    assert main(["check", str(path)]) == 0
    err = capsys.readouterr().err
    (head,) = [line for line in err.splitlines() if "warning[" in line]  # at the macro
    assert head.startswith(f"{path}#prompts[0].content:1:24: warning[template.unknown_st_macro]")
    assert "{{banned" in head and "{{time}}" not in head and "{{random" not in head
    assert main(["check", "--strict", str(path)]) == 1


def test_a_lazily_derived_seed_draws_as_the_seed_it_computes() -> None:
    """``seed_from`` (the seed derived from the chat, computed on first use) gives the draws
    of the same seed given outright, and is computed once."""
    calls: list[int] = []

    def derive() -> int:
        calls.append(1)
        return 12345

    text = "{{random:a,b,c,d,e,f}} {{roll:d1000}} {{pick::x::y::z}}"
    lazy = MacroEnv(now=NOW, seed_from=derive)
    assert sub(text, env=lazy) == sub(text, env=MacroEnv(now=NOW, seed=12345))
    assert sub(text, env=lazy) == sub(text, env=MacroEnv(now=NOW, seed=12345))
    assert calls == [1]
    assert sub("no randomness here", env=MacroEnv(now=NOW, seed_from=derive)) == (
        "no randomness here"
    )
    assert calls == [1]  # no macro drew: the seed was never computed


def test_compile_draws_from_the_run_seed_derived_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compile's draws use :attr:`RunContext.macro_seed` (derived from the card and the first
    message) exactly as an explicit ``seed`` of that value; a compile whose text draws nothing
    does not derive it."""
    chat = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    card = {"name": "Mira", "description": "{{roll:d1000000}} {{random:a,b,c,d,e,f,g,h}}"}
    run: dict[str, Any] = {"chat": chat, "character": card}
    seed = compiler.load_context(dict(run)).macro_seed
    text = "<<agent.character>>\n<<agent.chat.history>>"

    def system(context: dict[str, Any]) -> str:
        out = compiler.compile_string(text, context=context, budget=4000)
        return str(out.request["messages"][0]["content"])

    assert system(run) == system({**run, "seed": seed})
    calls: list[int] = []
    derived = compiler.RunContext.macro_seed

    def counted(self: compiler.RunContext) -> int:
        calls.append(1)
        return derived.fget(self)  # type: ignore[attr-defined,no-any-return]

    monkeypatch.setattr(compiler.RunContext, "macro_seed", property(counted))
    system(run)
    assert calls == [1]
    plain = {**run, "character": {**card, "description": "{{char}} and {{user}}"}}
    assert system(plain).startswith("Mira and User")
    assert calls == [1]
