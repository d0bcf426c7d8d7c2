"""CompileOptions' option table is the one list of user-facing options: the command line's
flags, apc serve's request fields and CompileOptions' own bounds are made from it, and it
cannot drift from CompileOptions' fields and their types."""

from __future__ import annotations

import argparse
import dataclasses
import json
import typing
from pathlib import Path

import pytest

import compiler
from compiler._driver.option_specs import BY_NAME, OPTIONS, Option
from compiler.cli import build_parser, main

#: the fields a program passes and the command line and serve never take
PROGRAMMATIC = {
    "max_completion_tokens",  # --max-output-tokens' alias, under OpenAI's Chat name
    "profile",  # the profile layers' own options (--profile, --user, ...; serve's profile)
    "summarizer",
    "summaries",
    "summary_cache",
    "token_counter",
}

KIND_OF_TYPE = {
    int | None: "int",
    float | None: "float",
    str | None: "str",
    str: "str",
    bool: "bool",
    tuple[str, ...]: "strings",
    bool | int: "step",
}


def _kind(hint: object) -> str:
    if hint in KIND_OF_TYPE:
        return KIND_OF_TYPE[hint]
    args = typing.get_args(hint)
    literal = [a for a in args if typing.get_origin(a) is typing.Literal]
    if literal:
        return "choice"
    if Path in args:
        return "path"
    raise AssertionError(f"no option kind for {hint!r}")


def test_the_table_is_compile_options_fields_with_their_types() -> None:
    hints = typing.get_type_hints(compiler.CompileOptions)
    fields = {f.name for f in dataclasses.fields(compiler.CompileOptions)}
    assert set(BY_NAME) == fields - PROGRAMMATIC
    for option in OPTIONS:
        assert _kind(hints[option.name]) == option.kind, option.name
        if option.kind == "choice":
            (literal,) = [a for a in typing.get_args(hints[option.name]) if a is not type(None)]
            assert typing.get_args(literal) == option.choices


def test_every_option_is_a_flag_of_compile_explain_and_bench() -> None:
    for command in ("compile", "explain", "bench"):
        parser = build_parser([command])
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        flags = {s for a in sub.choices[command]._actions for s in a.option_strings}
        assert {o.flag for o in OPTIONS} <= flags, command


def test_serve_takes_the_options_the_table_gives_it() -> None:
    pytest.importorskip("fastapi")
    from compiler.serve.models import OptionsIn

    assert set(OptionsIn.model_fields) == {o.name for o in OPTIONS if o.serve} | {"profile"}
    schema = OptionsIn.model_json_schema(by_alias=False)["properties"]
    for option in OPTIONS:
        if option.serve and option.kind == "int":
            (number,) = [s for s in schema[option.name]["anyOf"] if s.get("type") == "integer"]
            assert (number.get("minimum"), number.get("maximum")) == (option.low, option.high)


BOUNDED = [o for o in OPTIONS if o.low is not None]


@pytest.mark.parametrize("option", BOUNDED, ids=[o.name for o in BOUNDED])
def test_the_bounds_hold_on_the_command_line(
    option: Option, capsys: pytest.CaptureFixture[str]
) -> None:
    assert option.low is not None
    template = str(Path(__file__).parents[1] / "examples" / "writer" / "template.txt")
    args = ["compile", template, option.flag, str(option.low - 1)]
    assert main(args) == 2  # a usage error, before anything is read
    assert f"apc: error: {option.flag}" in capsys.readouterr().err


HIGH = [o for o in OPTIONS if o.high is not None]


@pytest.mark.parametrize("option", HIGH, ids=[o.name for o in HIGH])
def test_the_upper_bounds_hold_on_the_command_line(
    option: Option, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ``apc serve`` refuses them; ``apc bench`` too, whose ``--budget`` takes several."""
    assert option.high is not None
    writer = Path(__file__).parents[1] / "examples" / "writer"
    template, run = str(writer / "template.txt"), str(writer / "run.json")
    over = [option.flag, str(option.high + 1)]
    assert main(["compile", template, *over]) == 2
    assert f"apc: error: {option.flag}" in capsys.readouterr().err
    assert main(["bench", template, "--context", run, "--budget", "1000", *over]) == 2
    assert f"apc: error: {option.flag}" in capsys.readouterr().err


# top_k above a provider's range: its caller's value refused, a preset's clamped (coded)
INTEGERS = [o for o in HIGH if o.kind in ("int", "step") and o.name != "top_k"]


@pytest.mark.parametrize("option", INTEGERS, ids=[o.name for o in INTEGERS])
def test_the_bounds_hold_in_the_python_api(option: Option) -> None:
    """``CompileOptions`` refuses what the command line and ``apc serve`` refuse (a seed past
    64 bits would reach the request and the provider's 400), and takes the bounds themselves."""
    assert option.high is not None
    with pytest.raises(ValueError, match=option.name):
        compiler.CompileOptions(**{option.name: option.high + 1})
    if option.kind == "int" and option.low is not None:
        with pytest.raises(ValueError, match=option.name):
            compiler.CompileOptions(**{option.name: option.low - 1})
    for value in (option.low, option.high):
        if value is not None:
            assert getattr(compiler.CompileOptions(**{option.name: value}), option.name) == value


def test_a_presets_settings_keep_the_option_tables_bounds(tmp_path: Path) -> None:
    """A preset's ``openai_max_tokens`` or ``seed`` past what the options take is the
    preset's coded error, not a ValueError from the options it fills."""
    base = {"prompts": [{"identifier": "main", "role": "system", "content": "Hi"}]}
    too_big = {"openai_max_tokens": 10**20, "openai_max_context": 2**60, "seed": 2**70}
    for key, value in too_big.items():
        preset = tmp_path / f"{key}.json"
        preset.write_text(json.dumps({**base, key: value}))
        with pytest.raises(compiler.ContextError) as info:
            compiler.compile(preset)
        assert info.value.code == "context.invalid_preset" and key in info.value.message


def test_the_request_schema_speaks_of_requests_not_of_flags() -> None:
    """``apc serve``'s OpenAPI document describes each option, in the request's terms: no
    ``--flag``, no exit status, no "repeatable"."""
    pytest.importorskip("fastapi")
    from pydantic.alias_generators import to_camel

    from compiler.serve.models import OptionsIn

    schema = OptionsIn.model_json_schema()["properties"]
    for option in OPTIONS:
        if option.serve and option.help:
            about = schema[to_camel(option.name)]["description"]
            assert "--" not in about and "exit" not in about and "repeatable" not in about


def test_a_mode_outside_the_tables_choices_is_refused() -> None:
    """As ``--mode`` and ``compiler.check(mode=...)`` refuse it (a preset compiled in a mode
    no compile has)."""
    with pytest.raises(ValueError, match="mode must be agent or legacy"):
        compiler.CompileOptions(mode="chat")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        compiler.compile_string("{}", kind="preset", mode="bogus")  # type: ignore[arg-type]
    assert compiler.CompileOptions(mode="legacy").mode == "legacy"
