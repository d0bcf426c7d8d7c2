"""Compiled tool pattern lists give the same answers as matching pattern by pattern."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.profile.tool_catalogue import (
    KNOWN_TOOLS,
    ToolPatterns,
    evaluate_tool_policy,
    tool_matches,
    tool_matches_any,
)

# the characters that matter: wildcards, both separators, case, a newline, a regex meta
_CHARS = st.sampled_from([*"ab.*?_A\n[$", "workspace", "mcp"])
_TEXT = st.lists(_CHARS, max_size=6).map("".join)
_TOOLS = st.lists(st.one_of(_TEXT, st.sampled_from(KNOWN_TOOLS)), max_size=6)


@settings(max_examples=400, deadline=None)
@given(patterns=st.lists(_TEXT, max_size=4), tool=st.one_of(_TEXT, st.sampled_from(KNOWN_TOOLS)))
def test_compiled_patterns_match_as_each_pattern_does(patterns: list[str], tool: str) -> None:
    assert ToolPatterns(patterns).matches(tool) is tool_matches_any(patterns, tool)


def _by_pair(allow: list[str], deny: list[str], known: list[str]) -> tuple[str, ...]:
    """Visibility computed the plain way: every pattern against every tool."""
    return tuple(
        t
        for t in known
        if not any(tool_matches(p, t) for p in deny) and any(tool_matches(p, t) for p in allow)
    )


@settings(max_examples=200, deadline=None)
@given(allow=st.lists(_TEXT, max_size=4), deny=st.lists(_TEXT, max_size=3), run=_TOOLS)
def test_policy_is_the_pairwise_rule(allow: list[str], deny: list[str], run: list[str]) -> None:
    known = list(dict.fromkeys([*KNOWN_TOOLS, *run]))
    result = evaluate_tool_policy(allow=allow, deny=deny, require_approval=allow, known=known)
    assert result.visible == _by_pair(allow, deny, known)
    assert result.approval_required == result.visible
    unmatched = [
        f"tools.allow[{i}]"
        for i, p in enumerate(allow)
        if not any(tool_matches(p, t) for t in known)
    ]
    assert [w.path for w in result.warnings] == unmatched


def test_prefix_pattern_admits_no_newline_after_the_prefix() -> None:
    assert ToolPatterns(["mcp*"]).matches("mcp.x")
    assert not ToolPatterns(["mcp*"]).matches("mcp.x\ny")
    assert ToolPatterns(["a\n*"]).matches("a\nb")
    assert ToolPatterns(["workspace_*"]).matches("Workspace.Read_File")
