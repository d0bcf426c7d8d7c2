"""Regressions from review: policy bypasses, leak-check precision, allocator edge cases."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler import check_budget
from compiler.errors import APCError, PolicyError
from compiler.profile import resolve_profile, write_resolved_profile


def test_symlink_inside_a_root_cannot_reach_an_excluded_subtree(tmp_path: Path) -> None:
    (tmp_path / "scratch" / "private").mkdir(parents=True)
    (tmp_path / "scratch" / "private" / "secret.md").write_text("SECRET_A")
    (tmp_path / "scratch" / "pub").symlink_to(tmp_path / "scratch" / "private")
    profile = resolve_profile(run={"context": {"exclude": ["workspace.scratch.private"]}})
    with pytest.raises(PolicyError) as info:
        compiler.compile_string(
            '<<agent.file "scratch/pub/secret.md">>',
            context={"workspace": str(tmp_path)},
            profile=profile,
        )
    assert info.value.code == "policy.resource_hidden"


def preset_file(tmp_path: Path, *prompts: dict[str, Any]) -> Path:
    order = [{"identifier": p["identifier"], "enabled": True} for p in prompts]
    data = {"prompts": list(prompts), "prompt_order": [{"character_id": 100001, "order": order}]}
    path = tmp_path / "preset.json"
    path.write_text(json.dumps(data))
    return path


CARD = {"name": "Mira", "description": "DESC of {{char}} for {{user}}", "personality": "kind"}


def test_st_macros_in_preset_text_obey_the_resource_policy(tmp_path: Path) -> None:
    path = preset_file(
        tmp_path,
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "main", "role": "system", "content": "About: {{description}}"},
    )
    ctx = {"character": CARD, "persona": {"name": "Ann", "description": "PERSONA"}}
    ok = compiler.compile(path, context=ctx, mode="agent")
    assert ok.request["messages"][-1]["content"] == "About: DESC of Mira for Ann"
    hidden = resolve_profile(run={"context": {"exclude": ["character.instructions"]}})
    with pytest.raises(PolicyError) as info:
        compiler.compile(path, context=ctx, mode="agent", profile=hidden)
    assert info.value.code == "policy.resource_hidden"


def injected(tmp_path: Path, *contents: str, depth: int = 1) -> Path:
    prompts: list[dict[str, Any]] = [
        {"identifier": "agentSystemPrompt", "marker": True},
        {"identifier": "chatHistory", "marker": True},
    ]
    for i, text in enumerate(contents):
        prompts.append(
            {
                "identifier": f"inj{i}",
                "role": "system",
                "content": text,
                "injection_position": 1,
                "injection_depth": depth,
            }
        )
    return preset_file(tmp_path, *prompts)


CHAT = [{"role": "user", "content": f"message {i}"} for i in range(4)]


@pytest.mark.parametrize(
    "contents", [("Note A", "Plan: <<agent.plan>>"), ("Plan: <<agent.plan>>\n",)]
)
def test_merged_or_padded_injection_with_a_macro_is_a_leak(
    tmp_path: Path, contents: tuple[str, ...]
) -> None:
    with pytest.raises(APCError) as info:
        compiler.compile(injected(tmp_path, *contents), context={"chat": CHAT}, mode="agent")
    assert info.value.code == "agent.prompt_marker_unmaterialized"


def test_chat_quoting_a_cut_injection_is_not_a_leak(tmp_path: Path) -> None:
    chat = [{"role": "user", "content": "filler " * 40} for _ in range(20)]
    chat.append({"role": "user", "content": "What does <<agent.plan>> mean?"})
    path = injected(tmp_path, "<<agent.plan>>", depth=99)
    # agent mode offers the profile's tools (issue 12): the budget leaves room for them
    result = compiler.compile(path, context={"chat": chat}, mode="agent", budget=1400)
    contents = [m["content"] for m in result.request["messages"]]
    assert contents[-1] == "What does <<agent.plan>> mean?"
    assert "<<agent.plan>>" not in contents[:-1]


def test_required_component_is_served_before_optional_ones(tmp_path: Path) -> None:
    (tmp_path / "output").mkdir()
    (tmp_path / "scratch").mkdir()
    (tmp_path / "output" / "main.md").write_text("alpha beta gamma " * 200)
    (tmp_path / "scratch" / "notes.md").write_text("note " * 100)
    template = (
        '<<agent.file "output/main.md" required=true strategy="truncate">>\n'
        '<<agent.file "scratch/notes.md">>'
    )
    for budget in (106, 110, 120, 300):
        result = compiler.compile_string(
            template, context={"workspace": str(tmp_path)}, budget=budget
        )
        assert result.ledger.total_tokens <= budget
        assert result.ledger.entries[0].action == "truncated"


def test_compiling_at_the_checked_floor_succeeds(tmp_path: Path) -> None:
    ctx = {"workspace": {"files": {"output/main.md": "hello there"}}, "plan": "do the things"}
    template = '<<agent.file "output/main.md" required=true>>\n<<agent.plan>>'
    (tmp_path / "t.txt").write_text(template)  # check_budget takes a file, as compile() does
    floor = check_budget(tmp_path / "t.txt", context=ctx).floor_tokens
    assert compiler.compile_string(template, context=ctx, budget=floor).ledger.total_tokens == floor
    with pytest.raises(APCError) as info:
        compiler.compile_string(template, context=ctx, budget=floor - 1)
    assert info.value.code == "context.budget_exceeded"
    assert f"need {floor} tokens" in info.value.message


def test_summarized_tool_results_still_use_the_budget() -> None:
    words = " ".join(f"w{i % 997}x{i % 13}" for i in range(3000))
    ctx = {
        "toolResults": [
            {"callId": "a", "tool": "chat.search", "content": words},
            {"callId": "b", "tool": "chat.search", "content": words[::-1]},
        ]
    }
    result = compiler.compile_string("Guide.\n<<agent.tool_results>>", context=ctx, budget=4000)
    assert 0.95 * 4000 <= result.ledger.total_tokens <= 4000


def test_resolved_profile_file_is_world_readable(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = write_resolved_profile(tmp_path, resolve_profile())
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
