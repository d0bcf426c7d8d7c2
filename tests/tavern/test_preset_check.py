"""apc check on a preset: diagnostics point into prompts[i].content; broken JSON is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import compiler
from compiler.cli import main
from compiler.errors import ContextError, TemplateError


def test_check_points_into_the_preset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preset = {
        "prompts": [
            {"identifier": "main", "role": "system", "content": "ok {{agent.plan}}"},
            {"identifier": "chatHistory", "marker": True},
            {"identifier": "x", "role": "system", "content": "line one\n  <<agent.fiel>>"},
        ]
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset))
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}#prompts[2].content:2:3: error[template.unknown_macro]" in err
    assert f"{path}#prompts[0].content:1:4: warning[template.legacy_agent_macro]" in err
    preset["prompts"][2]["content"] = "fine"
    path.write_text(json.dumps(preset))
    assert main(["check", str(path)]) == 0


def test_broken_preset_json_is_an_error_not_template_text(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"prompts": [')
    with pytest.raises(ContextError) as info:
        compiler.compile(path)
    assert info.value.code == "context.invalid_json"


# -- issue 12, item 17: --mode, located warnings, the summary line, the Python API agrees --

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
DEFAULT = CORPUS / "presets" / "st-default-2024.json"
CHAT = [{"role": "user", "content": "Hi."}, {"role": "assistant", "content": "Hello."}]
AGENT_SCHEMA = {"enabled": True, "defaultProfile": "p", "profiles": [{"id": "p"}]}


def injected_preset(**extra: object) -> dict[str, object]:
    return {
        "prompts": [
            {"identifier": "main", "content": "Be {{char}}."},
            {"identifier": "chatHistory", "marker": True},
            {
                "identifier": "note",
                "content": "Recall: <<agent.plan>>",
                "injection_position": 1,
                "injection_depth": 1,
            },
            {"identifier": "vectorsMemory", "marker": True},
        ],
        "prompt_order": [
            {"character_id": 12345, "order": [{"identifier": "elsewhere", "enabled": True}]},
            {
                "character_id": 100001,
                "order": [
                    {"identifier": "main", "enabled": True},
                    {"identifier": "summary", "enabled": True},
                    {"identifier": "chatHistory", "enabled": True},
                    {"identifier": "note", "enabled": True},
                    {"identifier": "vectorsMemory", "enabled": True},
                ],
            },
        ],
        **extra,
    }


def run_check(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_check_locates_order_marker_and_injection_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(injected_preset()))
    code, out, err = run_check([str(path), "--format", "json"], capsys)
    assert code == 0 and out == ""  # no summary line in JSON
    found = {(d["code"], d["file"], d["line"], d["column"]) for d in json.loads(err)}
    assert found == {
        ("agent.injection_macro", f"{path}#prompts[2].content", 1, 9),  # legacy: dropped
        ("template.unknown_prompt_id", f"{path}#prompt_order[1].order[1]", None, None),
        ("template.unknown_marker", f"{path}#prompts[3].identifier", None, None),
    }  # the order of character 12345 is never compiled: not checked
    code, out, err = run_check([str(path), "--mode", "agent"], capsys)
    assert code == 1 and out == ""
    assert (
        f"{path}#prompts[2].content:1:9: error[agent.prompt_marker_unmaterialized]: "
        "'<<agent.plan>>' is inside an in-chat injection"
    ) in err
    assert "  |         ^^^^^^^^^^^^^^" in err  # the caret under the macro
    assert err.count("warning[agent.prompt_entry_inserted]") == 3
    # what check refuses, compile refuses, at the same place
    with pytest.raises(compiler.PolicyError) as info:
        compiler.compile(path, context={"chat": CHAT, "character": {"name": "X"}}, mode="agent")
    assert info.value.code == "agent.prompt_marker_unmaterialized"
    assert info.value.file == f"{path}#prompts[2].content:1:9"


def test_check_mode_defaults_to_the_agent_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(injected_preset(agent=AGENT_SCHEMA)))
    code, _, err = run_check([str(path)], capsys)  # an enabled schema: agent, as compile
    assert code == 1 and "error[agent.prompt_marker_unmaterialized]" in err
    assert run_check([str(path), "--mode", "legacy"], capsys)[0] == 0
    assert main(["check", str(path), "--mode", "chat"]) == 2  # not a mode
    # a disabled injection is never sent: a warning, even in agent mode
    data = injected_preset(agent=AGENT_SCHEMA)
    data["prompt_order"][1]["order"][3]["enabled"] = False  # type: ignore[index]
    path.write_text(json.dumps(data))
    code, _, err = run_check([str(path)], capsys)
    assert code == 0 and "warning[agent.injection_macro]" in err and "not sent" in err


def test_check_prints_one_summary_line_on_success(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps({"prompts": [{"identifier": "main", "content": "Hi"}]}))
    template = tmp_path / "t.txt"
    template.write_text("<<agent.plan>> {{agent.plan}}")
    assert run_check([str(clean)], capsys)[1] == "ok: 1 file, 0 errors, 0 warnings\n"
    code, out, err = run_check([str(clean), str(template)], capsys)
    assert (code, out) == (0, "ok: 2 files, 0 errors, 1 warning\n")
    assert "warning[template.legacy_agent_macro]" in err
    bad = tmp_path / "bad.txt"
    bad.write_text("<<agent.fiel>>")
    assert run_check([str(clean), str(bad)], capsys)[:2] == (1, "")  # no "ok" on failure
    assert run_check([str(template), "--strict"], capsys)[:2] == (1, "")


def test_python_check_agrees_with_apc_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(injected_preset()))
    result = compiler.check(path)
    assert isinstance(result, compiler.PresetCheck) and result.mode == "legacy"
    assert main(["check", str(path), "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().err)
    assert [d.to_json() for d in result.warnings] == cli
    with pytest.raises(TemplateError) as info:
        compiler.check(path, mode="agent")
    assert info.value.code == "agent.prompt_marker_unmaterialized"
    assert main(["check", str(path), "--mode", "agent", "--format", "json"]) == 1
    assert [d.to_json() for d in info.value.diagnostics] == json.loads(capsys.readouterr().err)
    text = json.dumps(injected_preset())
    same = compiler.check_string(text, kind="preset", name=str(path))
    assert isinstance(same, compiler.PresetCheck) and same.warnings == result.warnings
    with pytest.raises(ValueError):
        compiler.check(path, mode="chat")  # type: ignore[arg-type]
    with pytest.raises(ContextError) as bad:
        compiler.check_string("{", kind="preset")
    assert bad.value.code == "context.invalid_json"
    bound = compiler.check_string("<<agent.plan>>")  # a template: as before
    assert isinstance(bound, compiler.BoundTemplate)


@pytest.mark.skipif(not DEFAULT.is_file(), reason="../shared/corpus is absent")
def test_the_corpus_preset_checks_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_check([str(DEFAULT)], capsys)[:2] == (0, "ok: 1 file, 0 errors, 0 warnings\n")
    code, out, err = run_check([str(DEFAULT), "--mode", "agent"], capsys)
    assert (code, out) == (0, "ok: 1 file, 0 errors, 3 warnings\n")
    assert err.count("warning[agent.prompt_entry_inserted]") == 3


def test_check_refuses_an_opener_that_sillytavern_macros_assemble(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preset = {
        "prompts": [
            {"identifier": "main", "content": "Plan: <{{noop}}<agent.plan>> and \\<<agent.x"},
            {"identifier": "chatHistory", "marker": True},
            {"identifier": "fine", "content": "Literal \\<<agent.plan>>, {{char}} < <agent"},
        ]
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset))
    code, out, err = run_check([str(path), "--mode", "legacy"], capsys)
    assert code == 1 and out == ""
    assert f"{path}#prompts[0].content:1:1: error[agent.prompt_marker_unmaterialized]" in err
    assert "prompts[2]" not in err  # an escape is the author's literal, never a leak
    ctx = {"chat": CHAT, "character": {"name": "X"}}
    for mode in ("legacy", "agent"):  # compile refuses it too, in either mode
        with pytest.raises(compiler.PolicyError):
            compiler.compile(path, context=ctx, mode=mode)  # type: ignore[arg-type]


def test_compile_locates_a_literal_macro_in_an_in_chat_injection(tmp_path: Path) -> None:
    preset = {
        "prompts": [
            {"identifier": "main", "content": "Hi {{char}}."},
            {"identifier": "chatHistory", "marker": True},
            {"identifier": "n", "content": "Said: {{lastMessageId}}", "injection_position": 1},
        ]
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset))
    ctx = {"chat": CHAT, "character": {"name": "X"}}
    result = compiler.compile(path, context=ctx, mode="legacy")
    (found,) = [w for w in result.warnings if w.code == "template.unknown_st_macro"]
    assert found.file == f"{path}#prompts[2].content" and "{{lastMessageId}}" in found.message


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("assistant_prefill", "<<agent.plan>>"),
        ("human_sysprompt_message", "<{{noop}}<agent.plan>>"),
        ("new_chat_prompt", "[Start] <<agent.task>>"),
        ("custom_stopping_strings", json.dumps(["END", "<{{trim}}<agent.x"])),
    ],
)
def test_check_refuses_an_opener_in_a_setting_text_as_the_compile_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: str
) -> None:
    preset = {"prompts": [{"identifier": "chatHistory", "marker": True}], key: value}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preset))
    code, _, err = run_check([str(path), "--mode", "legacy"], capsys)
    assert code == 1
    assert f"{path}#{key}: error[agent.prompt_marker_unmaterialized]" in err
    with pytest.raises(compiler.PolicyError) as info:
        compiler.compile(path, context={"chat": CHAT}, mode="legacy", provider="anthropic")
    assert info.value.code == "agent.prompt_marker_unmaterialized"
