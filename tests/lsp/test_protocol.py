"""``apc lsp`` end to end: a client process talks to ``python -m compiler lsp`` over stdio
(lsprotocol types), on a template, a preset with CJK text, an emoji and JSON escapes (ranges
asserted exactly, in UTF-16 code units), and a run context configured by ``apc.toml``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lsp.client import ROOT, Client, position

from lsprotocol import types  # isort: skip  (after the client module's importorskip)

import compiler

pytestmark = pytest.mark.slow

TEMPLATE = (
    "<<agent.system_prompt>>\n"
    'Draft: <<agent.fiel "output/main.md">>\n'
    "Plan: {{agent.plan}}\n"
    "<<agent.chat.history strategy=truncat>>\n"
)
PRESET = {
    "prompts": [
        {"identifier": "main", "name": "Main", "role": "system",
         "content": '你好\n"世界" 😀 <<agent.fiel "a.md">> {{agent.plan}}'},
        {"identifier": "jb", "name": "Jailbreak", "role": "user",
         "content": "{{char}} 好 <<agent.plan budgt=3>>"},
        {"identifier": "chatHistory", "name": "Chat History", "marker": True},
    ],
    "prompt_order": [
        {"character_id": 100001, "order": [
            {"identifier": "jb", "enabled": True},
            {"identifier": "main", "enabled": True},
            {"identifier": "chatHistory", "enabled": True},
        ]}
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled example (template, run.json, workspace) plus a preset, in a project
    whose apc.toml names the run context."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(ROOT / "examples" / "writer", root / "writer")
    (root / "writer" / "apc.toml").write_text('context = "run.json"\nbudget = 1200\n')
    (root / "preset.json").write_text(json.dumps(PRESET, ensure_ascii=False, indent=1))
    return root


@pytest.fixture(scope="module")
def client(project: Path) -> Iterator[Client]:
    found = Client(project)
    yield found
    found.close()


def _range(text: str, start: int, end: int) -> types.Range:
    return types.Range(position(text, start), position(text, end))


def test_initialize_offers_every_feature(client: Client) -> None:
    caps = client.init.capabilities
    assert caps.position_encoding == types.PositionEncodingKind.Utf16
    assert caps.completion_provider is not None and "<" in (
        caps.completion_provider.trigger_characters or ()
    )
    assert caps.hover_provider and caps.definition_provider and caps.document_symbol_provider
    assert caps.code_action_provider


def test_template_diagnostics_have_exact_ranges_codes_hints_and_links(
    client: Client, project: Path
) -> None:
    path = project / "writer" / "draft.txt"
    path.write_text(TEMPLATE)
    uri = client.open(path, TEMPLATE)
    found = client.published(uri)
    by_code = {d.code: d for d in found.diagnostics}
    # what apc check reports, nothing more or less
    expected = compiler.APCError  # the check raises: every error and warning it holds
    with pytest.raises(expected) as info:
        compiler.check_string(TEMPLATE, name=str(path))
    assert sorted(by_code) == sorted(d.code for d in info.value.diagnostics)
    macro = by_code["template.unknown_macro"]
    start = TEMPLATE.index("<<agent.fiel")
    assert macro.range == _range(TEMPLATE, start, TEMPLATE.index(">>", start) + 2)
    assert macro.severity == types.DiagnosticSeverity.Error and macro.source == "apc"
    assert "did you mean 'agent.file'?" in macro.message
    assert macro.code_description is not None
    page = ROOT / "docs" / "pages" / "reference" / "errors" / "template.md"
    assert macro.code_description.href == f"{page.resolve().as_uri()}#template.unknown_macro"
    bad = by_code["template.bad_argument"]
    arg = TEMPLATE.index("strategy=truncat")
    assert bad.range.start == position(TEMPLATE, arg)
    actions = client.wait(
        client.lsp.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri), bad.range, types.CodeActionContext([bad])
            )
        )
    )
    assert actions is not None
    (action,) = actions
    assert isinstance(action, types.CodeAction) and action.edit and action.edit.changes
    (edit,) = action.edit.changes[uri]
    value = arg + len("strategy=")
    assert edit.range == _range(TEMPLATE, value, value + len("truncat"))
    assert edit.new_text == "truncate"


def test_legacy_macro_warning_and_its_rewrite(client: Client, project: Path) -> None:
    path = project / "writer" / "legacy.txt"
    text = "Plan: {{agent.plan}}\n"
    uri = client.open(path, text)
    (warning,) = client.published(uri).diagnostics
    assert warning.code == "template.legacy_agent_macro"
    assert warning.severity == types.DiagnosticSeverity.Warning
    assert warning.range == _range(text, 6, 20)
    actions = client.wait(
        client.lsp.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri),
                warning.range,
                types.CodeActionContext([warning]),
            )
        )
    )
    assert actions is not None
    (action,) = actions
    assert isinstance(action, types.CodeAction) and action.edit and action.edit.changes
    (edit,) = action.edit.changes[uri]
    assert edit.range == warning.range and edit.new_text == "<<agent.plan>>"


def _preset(client: Client, project: Path) -> tuple[str, str, types.PublishDiagnosticsParams]:
    path = project / "preset.json"
    text = path.read_text()
    uri = client.open(path, text)
    return uri, text, client.published(uri)


def test_preset_ranges_land_on_the_right_characters(client: Client, project: Path) -> None:
    """CJK, an escaped newline and quotes, an emoji (two UTF-16 units) before the macro."""
    uri, text, found = _preset(client, project)
    by_code = {d.code: d for d in found.diagnostics}
    macro = by_code["template.unknown_macro"]
    start = text.index("<<agent.fiel")
    end = text.index('">>', start) + 3
    assert text[start:end] == '<<agent.fiel \\"a.md\\">>'
    assert macro.range == _range(text, start, end)
    # '   "content": "你好\n\"世界\" 😀 <<': the emoji is two UTF-16 units, each escape two
    assert macro.range == types.Range(types.Position(6, 29), types.Position(6, 52))
    arg = by_code["template.unknown_argument"]
    assert arg.range.start == position(text, text.index("budgt"))
    # the fix edits the JSON text: the name, not the escaped quotes around the path
    actions = client.wait(
        client.lsp.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri), macro.range, types.CodeActionContext([macro])
            )
        )
    )
    assert actions is not None
    (action,) = actions
    assert isinstance(action, types.CodeAction) and action.edit and action.edit.changes
    (edit,) = action.edit.changes[uri]
    name = text.index("agent.fiel")
    assert edit.range == _range(text, name, name + len("agent.fiel"))
    assert edit.new_text == "agent.file"


def test_hover_on_a_sillytavern_macro_in_a_preset(client: Client, project: Path) -> None:
    path = project / "preset.json"
    text = path.read_text()
    at = text.index("{{char}}")
    found = client.wait(
        client.lsp.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(path.as_uri()), position(text, at + 3))
        )
    )
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    assert found.contents.value.startswith("`{{char}}` (SillyTavern): the character's name")
    assert found.range == _range(text, at, at + len("{{char}}"))


def test_preset_document_symbols_follow_the_prompt_order(client: Client, project: Path) -> None:
    uri = (project / "preset.json").as_uri()
    found = client.wait(
        client.lsp.text_document_document_symbol_async(
            types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
        )
    )
    assert found is not None
    assert [(s.name, s.detail) for s in found] == [  # type: ignore[union-attr]
        ("Jailbreak", "user"),
        ("Main", "system"),
        ("Chat History", "marker"),
    ]


def _complete(client: Client, uri: str, text: str, offset: int) -> list[types.CompletionItem]:
    found = client.wait(
        client.lsp.text_document_completion_async(
            types.CompletionParams(types.TextDocumentIdentifier(uri), position(text, offset))
        )
    )
    assert isinstance(found, types.CompletionList)
    return list(found.items)


def test_completion_of_macros_arguments_values_paths_and_st_macros(
    client: Client, project: Path
) -> None:
    path = project / "writer" / "complete.txt"
    text = '<<agent.fi\n<<agent.file "output/\n<<agent.plan strategy=\n{{ch\n<<agent.plan \n'
    uri = client.open(path, text)
    client.published(uri)
    names = _complete(client, uri, text, text.index("\n"))
    assert {i.label for i in names} == set(compiler.macro_catalogue())
    file_item = next(i for i in names if i.label == "agent.file")
    assert isinstance(file_item.documentation, types.MarkupContent)
    assert "workspace-relative path" in file_item.documentation.value
    assert isinstance(file_item.text_edit, types.TextEdit)
    assert file_item.text_edit.range == _range(text, 2, 10)  # replaces "agent.fi"
    paths = _complete(client, uri, text, text.index("output/") + 7)
    assert "output/main.md" in {i.label for i in paths}
    values = _complete(client, uri, text, text.index("strategy=") + 9)
    assert [i.label for i in values] == ["truncate", "summarize", "drop_optional", "fail"]
    st = _complete(client, uri, text, text.index("{{ch") + 4)
    assert {"char", "user", "random::a::b"} <= {i.label for i in st}
    keys = _complete(client, uri, text, len(text) - 1)
    assert {"budget=", "priority=", "required=", "strategy="} == {i.label for i in keys}


def test_path_completion_stays_in_the_workspace(client: Client, project: Path) -> None:
    """A typed folder outside the workspace (``..``, an absolute path, a link that leads out)
    completes nothing: completion lists no file the compile could not read."""
    outside = project / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("s")
    link = project / "writer" / "workspace" / "out"
    link.symlink_to(outside, target_is_directory=True)
    try:
        path = project / "writer" / "escape.txt"
        typed = ["../../outside/", str(outside) + "/", "out/"]
        text = "".join(f'<<agent.file "{t}\n' for t in typed)
        uri = client.open(path, text)
        client.published(uri)
        for t in typed:
            at = text.index(t) + len(t)
            assert _complete(client, uri, text, at) == [], t
    finally:
        link.unlink()


def test_priority_completion_offers_the_levels_in_use(client: Client, project: Path) -> None:
    path = project / "writer" / "levels.txt"
    text = "<<agent.plan priority=10>>\n<<agent.user priority=-5>>\n<<agent.chat.history priority="
    uri = client.open(path, text)
    client.published(uri)
    assert [i.label for i in _complete(client, uri, text, len(text))] == ["10", "0", "-5"]


def test_completion_of_the_profiles_tools_under_the_run_context(
    client: Client, project: Path
) -> None:
    path = project / "writer" / "tools.txt"
    text = "When done, call workspace.fi"
    uri = client.open(path, text)
    client.published(uri)
    items = _complete(client, uri, text, len(text))
    assert [i.label for i in items] == ["workspace.finish"]  # the run's tools the profile shows
    assert isinstance(items[0].text_edit, types.TextEdit)
    assert items[0].text_edit.range == _range(text, text.index("workspace.fi"), len(text))


def test_json_that_is_not_a_preset_is_left_alone(client: Client, project: Path) -> None:
    uri = client.open(project / "writer" / "run.json")
    assert client.published(uri).diagnostics == ()


def test_completion_inside_a_preset_string_edits_the_json(client: Client, project: Path) -> None:
    uri = (project / "preset.json").as_uri()
    text = (project / "preset.json").read_text()
    at = text.index("fiel")
    items = _complete(client, uri, text, at)
    item = next(i for i in items if i.label == "agent.file")
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.range == _range(text, text.index("agent.fiel"), at)


def test_hover_shows_docs_and_the_ledger_under_the_run_context(
    client: Client, project: Path
) -> None:
    path = project / "writer" / "template.txt"
    text = path.read_text()
    uri = client.open(path, text)
    assert client.published(uri).diagnostics == ()
    at = text.index('<<agent.file "output/main.md"') + 3
    found = client.wait(
        client.lsp.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), position(text, at))
        )
    )
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    shown = found.contents.value
    assert "one workspace file" in shown  # the catalogue's documentation
    result = compiler.compile(path, context=project / "writer" / "run.json", budget=1200)
    entry = next(e for e in result.ledger.entries if e.source == "workspace:output/main.md")
    assert f"offered {entry.tokens_offered:,}" in shown
    assert f"granted {entry.tokens_granted:,}" in shown
    assert f"used {entry.tokens_used:,}" in shown and entry.action in shown
    assert "budget 1,200 (the configured budget)" in shown


def test_definition_opens_the_workspace_file(client: Client, project: Path) -> None:
    path = project / "writer" / "template.txt"
    text = path.read_text()
    at = text.index("scratch/notes.md")
    found = client.wait(
        client.lsp.text_document_definition_async(
            types.DefinitionParams(types.TextDocumentIdentifier(path.as_uri()), position(text, at))
        )
    )
    assert isinstance(found, types.Location)
    target = project / "writer" / "workspace" / "scratch" / "notes.md"
    assert found.uri == target.resolve().as_uri()


def test_did_change_rechecks_and_publishes_the_new_version(client: Client, project: Path) -> None:
    path = project / "writer" / "edit.txt"
    uri = client.open(path, "<<agent.plan>>\n")
    assert client.published(uri).diagnostics == ()
    client.change(uri, "<<agent.plam>>\n", 2)
    client.change(uri, "<<agent.plam>>\n\n<<agent.usr>>\n", 3)  # within the debounce
    found = client.published(uri)
    while found.version != 3:  # the first change is superseded (unless the machine stalls)
        found = client.published(uri)
    assert [d.range.start.line for d in found.diagnostics] == [0, 2]


def test_transcript_of_a_session(client: Client) -> None:
    """The session so far, request and response JSON: the docs' transcript comes from it."""
    methods = [m.get("method") for who, m in client.transcript if who == "client"]
    assert methods[:2] == ["initialize", "initialized"]
    assert "textDocument/publishDiagnostics" in {
        m.get("method") for who, m in client.transcript if who == "server"
    }
    out = os.environ.get("APC_LSP_TRANSCRIPT")  # a file to write the transcript to
    if out:
        Path(out).write_text("".join(json.dumps(m) + "\n" for _, m in client.transcript))


def test_without_the_extra_apc_lsp_exits_with_a_code() -> None:
    code = (
        "import sys; sys.modules['pygls'] = None; "
        "from compiler.cli import main; sys.exit(main(['lsp']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert done.returncode == 1
    assert "error[lsp.unavailable]" in done.stderr + done.stdout
    assert "pip install 'agent-prompt-compiler[lsp]'" in done.stderr + done.stdout
