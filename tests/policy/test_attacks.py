"""Every path and visibility attack fails with its code, and nothing secret reaches output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler
from compiler.cli import main
from compiler.errors import APCError
from compiler.profile import resolve_profile

SECRETS = ("SECRET-OUTSIDE", "SECRET-PRIVATE", "SECRET-PERSIST", "SECRET-ROOTLINK", "SECRET-SKILL")


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A run dir: a workspace with private and outside files, symlinks, a hidden skill."""
    ws = tmp_path / "ws"
    for root in ("output", "scratch/private", "persist"):
        (ws / root).mkdir(parents=True)
    (ws / "output" / "main.md").write_text("the draft")
    (ws / "scratch" / "notes.md").write_text("public notes")
    (ws / "scratch" / "private" / "secret.md").write_text("SECRET-PRIVATE")
    (ws / "persist" / "memory.md").write_text("SECRET-PERSIST")
    (tmp_path / "outside.txt").write_text("SECRET-OUTSIDE")
    (ws / "output" / "link.md").symlink_to(tmp_path / "outside.txt")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "key.md").write_text("SECRET-ROOTLINK")
    (ws / "plan").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "skills" / "hidden").mkdir(parents=True)
    (tmp_path / "skills" / "hidden" / "SKILL.md").write_text("SECRET-SKILL")
    (tmp_path / "skills" / "open").mkdir()
    (tmp_path / "skills" / "open" / "SKILL.md").write_text("open skill")
    ctx = {
        "workspace": "ws",
        "skills": "skills",
        "chat": [{"role": "user", "content": "hello"}],
        "worldInfo": [{"content": "world text", "position": "before"}],
    }
    (tmp_path / "run.json").write_text(json.dumps(ctx))
    return tmp_path


POLICY: dict[str, Any] = {
    "context": {"exclude": ["workspace.scratch.private", "user.secrets", "world.activated"]},
    "workspace": {
        "visibleRoots": ["output", "scratch", "plan", "summaries"],
        "writableRoots": ["output", "scratch"],
    },
    "skills": {"deny": ["hidden"]},
}

ATTACKS = [
    ('<<agent.file "../outside.txt">>', "workspace.path_denied"),
    ('<<agent.file "/etc/passwd">>', "workspace.path_denied"),
    ('<<agent.file "C:/Windows/win.ini">>', "workspace.path_denied"),
    ('<<agent.file "output\\\\..\\\\..\\\\outside.txt">>', "workspace.path_denied"),
    ('<<agent.file "output/../../outside.txt">>', "workspace.path_denied"),
    ('<<agent.file "scratch/private/../private/secret.md">>', "workspace.path_denied"),
    ('<<agent.file "~/outside.txt">>', "workspace.path_denied"),
    ('<<agent.file "elsewhere/key.md">>', "workspace.path_denied"),
    ('<<agent.file "output/link.md">>', "workspace.path_denied"),
    ('<<agent.file "plan/key.md">>', "workspace.path_denied"),
    ('<<agent.file "scratch/private/secret.md">>', "policy.resource_hidden"),
    ('<<agent.file "scratch/./private//secret.md">>', "policy.resource_hidden"),
    ('<<agent.file "scratch\\\\private\\\\secret.md">>', "policy.resource_hidden"),
    ('<<agent.file "persist/memory.md">>', "policy.resource_hidden"),
    ('<<agent.skill "hidden">>', "policy.resource_hidden"),
    ('<<agent.skill "../skills/hidden">>', "context.invalid_skill_name"),
    ("<<agent.world.activated>>", "policy.resource_hidden"),
]


@pytest.mark.parametrize(("template", "code"), ATTACKS)
def test_attack_fails_and_nothing_is_written(
    run: Path, template: str, code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (run / "t.txt").write_text("Context:\n" + template)
    (run / "policy.json").write_text(json.dumps(POLICY))
    out = run / "out.json"
    journal = run / "journal.jsonl"
    args = ["compile", str(run / "t.txt"), "--context", str(run / "run.json")]
    args += ["--run", str(run / "policy.json"), "-o", str(out), "--journal", str(journal)]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert f"error[{code}]" in captured.err
    assert not out.exists()
    assert not any(s in captured.out + captured.err for s in SECRETS)
    events = [json.loads(line)["type"] for line in journal.read_text().splitlines()]
    assert events[0] == "context_assembly_started"
    assert events[-1] == "context_assembly_failed"


def test_nothing_hidden_reaches_a_successful_request(run: Path) -> None:
    template = (
        '<<agent.workspace.tree>>\n<<agent.file "scratch/notes.md">>\n'
        '<<agent.skill "open">>\n<<agent.chat.history>>'
    )
    result = compiler.compile(
        template, context=run / "run.json", profile=resolve_profile(run=POLICY)
    )
    body = json.dumps(result.request)
    assert "public notes" in body and "open skill" in body and "output/main.md" in body
    assert not any(s in body for s in SECRETS)
    for name in ("secret.md", "memory.md", "link.md", "key.md"):
        assert name not in body  # the tree lists only visible, regular files


def test_include_list_hides_everything_else(run: Path) -> None:
    profile = resolve_profile(
        run={"context": {"include": ["workspace.output", "chat.history.tail"]}}
    )
    ok = compiler.compile(
        '<<agent.file "output/main.md">><<agent.chat.history>>',
        context=run / "run.json",
        profile=profile,
    )
    history = next(c for c in ok.frame.components if c.kind == "ChatHistory")
    assert history.metadata["window"] == "tail"
    with pytest.raises(APCError) as info:
        compiler.compile(
            '<<agent.file "scratch/notes.md">>', context=run / "run.json", profile=profile
        )
    assert info.value.code == "policy.resource_hidden"


def test_data_is_not_a_macro_and_not_a_leak(run: Path) -> None:
    (run / "ws" / "output" / "main.md").write_text("draft says <<agent.plan>> literally")
    result = compiler.compile('<<agent.file "output/main.md">>', context=run / "run.json")
    assert result.request["messages"][0]["content"] == "draft says <<agent.plan>> literally"
