"""compiler.Session: a source read once, compiled turn after turn with its own caches."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.errors import ContextError, TemplateError
from compiler.fit import SummaryRequest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "writer"
TEMPLATE = "You narrate. <<agent.character>>\n<<agent.chat.history>>"
WORDS = ["the", "ferry", "creaked", "across", "grey", "river", "while", "Mira", "counted"]


def chat(n: int) -> list[dict[str, Any]]:
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": " ".join(WORDS[(i + k) % len(WORDS)] for k in range(12)) + f" #{i}",
        }
        for i in range(n)
    ]


def run(n: int) -> dict[str, Any]:
    return {"chat": chat(n), "character": {"name": "Mira", "description": "A keeper."}}


def test_a_session_compiles_what_the_one_shot_form_compiles() -> None:
    session = compiler.Session(EXAMPLE / "template.txt")
    context = EXAMPLE / "run.json"
    first, second = session.compile(context), session.compile(context)
    once = compiler.compile(EXAMPLE / "template.txt", context=context)
    assert first.request == second.request == once.request
    assert first.ledger.total_tokens == once.ledger.total_tokens
    assert session.name == str(EXAMPLE / "template.txt")


def test_a_dict_context_s_paths_resolve_under_base_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run context given as a dict names its files relative to ``base_dir`` (as RUN.json's
    resolve beside it), not to the current directory."""
    monkeypatch.chdir(EXAMPLE.parent)  # where "workspace" names nothing
    session = compiler.Session(EXAMPLE / "template.txt")
    context = json.loads((EXAMPLE / "run.json").read_text(encoding="utf-8"))
    with pytest.raises(ContextError):
        session.compile(context)
    given = session.compile(context, base_dir=EXAMPLE)
    assert given.request == session.compile(EXAMPLE / "run.json").request


def test_from_string_takes_templates_and_presets() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=300)
    assert (
        session.compile(run(4)).request
        == compiler.compile_string(TEMPLATE, context=run(4), budget=300).request
    )
    preset = {"prompts": [{"identifier": "main", "content": "Be {{char}}."}]}
    text = json.dumps(preset)
    by_text = compiler.Session.from_string(text, kind="preset", mode="legacy")
    assert (
        by_text.compile(run(2)).request
        == compiler.compile_string(text, kind="preset", context=run(2), mode="legacy").request
    )


def test_the_source_is_checked_once_and_its_errors_raise_at_once(tmp_path: Path) -> None:
    with pytest.raises(TemplateError):
        compiler.Session.from_string("<<agent.nope>>")
    with pytest.raises(ContextError) as err:
        compiler.Session(tmp_path / "missing.txt")
    assert err.value.code == "context.file_not_found"


def test_source_warnings_come_with_every_compile() -> None:
    session = compiler.Session.from_string("{{agent.chat.history}} <<agent.chat.history>>")
    for _ in range(2):
        codes = [w.code for w in session.compile(run(2)).warnings]
        assert "template.legacy_agent_macro" in codes


def test_the_next_turn_counts_only_what_is_new() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=2_000)
    session.compile(run(300))
    counter = session.counter("o200k_base")
    seen: list[str] = []
    real = counter.encoding

    class Spy:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def encode_ordinary(self, text: str) -> list[int]:
            seen.append(text)
            return real.encode_ordinary(text)

    counter._encoding = Spy()  # type: ignore[assignment]
    session.compile(run(301))
    assert seen, "the appended message is counted"
    # no old message is counted again (the summary of the cut part is new text: it moved)
    old = set(seen) & {m["content"] for m in chat(300)}
    assert not old, old


def test_summaries_are_reused_between_turns() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=1_200, cache_stable=True)
    session.compile(run(400))
    misses = session.summary_cache.misses
    session.compile(run(401))  # the cut point stays within the step: the same summary
    assert session.summary_cache.misses == misses and session.summary_cache.hits > 0


def test_a_compile_overrides_options_for_itself_only() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=400)
    assert session.compile(run(200), budget=900).ledger.budget == 900
    assert session.compile(run(200)).ledger.budget == 400
    assert session.options.budget == 400


def test_a_compile_s_own_summarizer_never_reads_another_s_summaries() -> None:
    """Tenants sharing a session each pass their summarizer: none gets a summary another
    one wrote for the same messages (without a cache_key a summarizer's summaries are its
    compile's alone; with one, the session's cache keeps them apart)."""
    session = compiler.Session.from_string("S.<<agent.chat.history>>", budget=1_500)
    chat = [{"role": "user", "content": f"Turn {i}. " + "word " * 30} for i in range(200)]

    class Keyed:
        def __init__(self, name: str) -> None:
            self.cache_key = name

        def __call__(self, request: SummaryRequest) -> str:
            return f"SUMMARY BY {self.cache_key}"

    for tenant in ("tenant-A", "tenant-B", "tenant-A"):

        def summarize(request: SummaryRequest, tenant: str = tenant) -> str:
            return f"SUMMARY BY {tenant}"

        for summarizer in (summarize, Keyed(tenant + "-keyed")):
            result = session.compile({"chat": chat}, summarizer=summarizer)
            text = result.request["messages"][1]["content"]
            assert f"SUMMARY BY {getattr(summarizer, 'cache_key', tenant)}\n" in text + "\n"


def test_sessions_share_no_cache() -> None:
    one, two = compiler.Session.from_string(TEMPLATE), compiler.Session.from_string(TEMPLATE)
    assert one.counter("o200k_base") is not two.counter("o200k_base")
    assert one.summary_cache is not two.summary_cache
    assert one.counter("o200k_base") is one.counter("o200k_base")


def test_the_caller_s_summary_cache_is_the_session_s() -> None:
    mine = compiler.SummaryCache()
    session = compiler.Session.from_string(TEMPLATE, budget=1_200, summary_cache=mine)
    session.compile(run(400))
    assert session.summary_cache is mine and mine.misses > 0


def test_threads_get_the_serial_answers() -> None:
    session = compiler.Session.from_string(TEMPLATE, budget=1_500)
    sizes = [50 + 37 * i for i in range(16)]
    serial = [compiler.compile_string(TEMPLATE, context=run(n), budget=1_500) for n in sizes]
    barrier = threading.Barrier(8)

    def one(n: int) -> Any:
        if n < 8 * 37 + 50:
            barrier.wait(timeout=30)
        return session.compile(run(n)).request

    with ThreadPoolExecutor(8) as pool:
        parallel = list(pool.map(one, sizes))
    assert parallel == [r.request for r in serial]


def test_check_budget_on_a_session() -> None:
    session = compiler.Session(EXAMPLE / "template.txt")
    feasible = session.check_budget(EXAMPLE / "run.json", budget=100)
    assert feasible.problem is not None and "the budget is 100" in feasible.problem
    assert session.check_budget(EXAMPLE / "run.json").problem is None
