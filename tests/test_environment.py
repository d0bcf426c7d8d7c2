"""The one driver: an Environment's option defaults and limits hold for every job made
through it, and the one-shot functions are the default environment's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import compiler

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "writer"
TEMPLATE = EXAMPLE / "template.txt"
RUN = EXAMPLE / "run.json"


def test_the_one_shot_functions_are_the_default_environments() -> None:
    env = compiler.Environment()
    assert (
        env.compile(TEMPLATE, context=RUN).request
        == compiler.compile(TEMPLATE, context=RUN).request
    )
    text = TEMPLATE.read_text(encoding="utf-8")
    assert (
        env.compile_string(text, name=str(TEMPLATE), context=RUN).request
        == compiler.compile_string(text, name=str(TEMPLATE), context=RUN).request
    )


def test_defaults_apply_and_a_jobs_keywords_override_them() -> None:
    env = compiler.Environment(provider="anthropic", budget=5000)
    assert env.options.provider == "anthropic" and env.options.budget == 5000
    result = env.compile(TEMPLATE, context=RUN)
    assert "system" in result.request and result.ledger.total_tokens <= 5000
    other = env.compile(TEMPLATE, context=RUN, provider="openai")
    assert other.request["messages"][0]["role"] in ("system", "developer")
    session = env.session(TEMPLATE, budget=4000)
    assert session.options.provider == "anthropic" and session.options.budget == 4000
    assert session.limits == env.limits


def test_an_input_over_the_environments_limit_is_refused(tmp_path: Path) -> None:
    given = json.loads(RUN.read_text(encoding="utf-8"))
    given["workspace"] = str(EXAMPLE / given["workspace"])
    given["chat"].append({"role": "user", "content": "x" * 2000})
    run = tmp_path / "run.json"
    run.write_text(json.dumps(given))
    small = compiler.Environment(limits=compiler.Limits(max_input_bytes=1000))
    with pytest.raises(compiler.ContextError) as info:
        small.compile(TEMPLATE, context=run)
    assert info.value.code == "context.file_too_large"
    assert compiler.Environment().compile(TEMPLATE, context=run).request  # the default reads it
    # a session keeps its environment's limits turn after turn
    session = small.session(TEMPLATE)
    with pytest.raises(compiler.ContextError):
        session.compile(run)


def test_the_count_cache_is_bounded_by_the_limits() -> None:
    env = compiler.Environment(limits=compiler.Limits(count_cache_entries=3))
    session = env.session(TEMPLATE)
    session.compile(RUN)
    texts, _ = session.cache_size()
    assert texts <= 3


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_limits_refuse_what_no_compile_can_use(bad: object) -> None:
    with pytest.raises(ValueError, match="max_input_bytes"):
        compiler.Limits(max_input_bytes=bad)  # type: ignore[arg-type]


def test_check_through_the_environment_is_apc_check(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("hi <<agent.fiel>>")
    env = compiler.Environment(strict=True)
    report = env.check_sources([TEMPLATE, bad])
    assert not report.ok
    assert [d.code for d in report.diagnostics] == ["template.unknown_macro"]
    tight = env.check_sources([TEMPLATE], context=RUN, budget=100)
    assert not tight.ok and "context.budget_infeasible" in {d.code for d in tight.diagnostics}


def test_the_environments_budget_options_ask_for_the_budget_check() -> None:
    """A budget option given as the environment's default asks as a job's keyword does."""
    env = compiler.Environment(model="gpt-4o", budget=1_000_000)
    found = env.check_sources([TEMPLATE]).diagnostics
    assert "context.budget_over_window" in {d.code for d in found}
    asked = compiler.Environment().check_sources([TEMPLATE], model="gpt-4o", budget=1_000_000)
    assert found == asked.diagnostics
    assert env.check_sources([TEMPLATE], with_budget=False).diagnostics == ()


@pytest.mark.parametrize("one", [str(TEMPLATE), TEMPLATE])
def test_one_path_is_not_a_list_of_sources(one: object) -> None:
    """A path alone would be checked character by character (``/``, ``w``, ...)."""
    with pytest.raises(TypeError, match="pass \\[path\\]"):
        compiler.check_sources(one)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        compiler.Environment().check_sources(one)  # type: ignore[arg-type]


def test_a_card_file_over_the_environments_limit_is_refused(tmp_path: Path) -> None:
    """``Limits.max_input_bytes`` bounds a card file as it bounds the other input files."""
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"name": "Mira", "description": "x" * 2000}))
    context = {"character": str(card)}
    small = compiler.Environment(limits=compiler.Limits(max_input_bytes=1000))
    with pytest.raises(compiler.ContextError) as info:
        small.compile_string("Hi {{char}}", context=context)
    assert info.value.code == "context.card_too_large"
    assert "1000 bytes" in info.value.message
    assert compiler.Environment().compile_string("Hi {{char}}", context=context).request
