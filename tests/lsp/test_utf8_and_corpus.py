"""``apc lsp`` with a client that negotiates UTF-8 positions, and on a real SillyTavern
preset from the corpus (read in place; skipped when the corpus is absent)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CORPUS, ROOT
from tests.lsp.client import Client

from lsprotocol import types  # isort: skip  (after the client module's importorskip)

import compiler

pytestmark = pytest.mark.slow
ST_DEFAULT = CORPUS / "presets" / "st-default-2024.json"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    found = Client(tmp_path_factory.mktemp("utf8"), encoding="utf-8")
    yield found
    found.close()


def test_utf8_positions_count_bytes(client: Client, tmp_path: Path) -> None:
    assert client.init.capabilities.position_encoding == types.PositionEncodingKind.Utf8
    text = json.dumps({"prompts": [{"identifier": "main", "content": "世界😀 <<agent.nope>>"}]})
    path = tmp_path / "p.json"
    uri = client.open(path, text)
    (found,) = client.published(uri).diagnostics
    start = text.index("<<agent.nope")  # ASCII JSON: \u4e16\u754c\ud83d\ude00 before it
    assert found.range.start == types.Position(0, start)
    raw = json.dumps(
        {"prompts": [{"identifier": "m", "content": "世界😀 <<agent.nope>>"}]}, ensure_ascii=False
    )
    uri = client.open(tmp_path / "raw.json", raw)
    (found,) = client.published(uri).diagnostics
    at = raw.index("<<agent.nope")
    assert found.range.start == types.Position(0, len(raw[:at].encode("utf-8")))


def test_a_real_preset_shows_what_apc_check_reports(client: Client) -> None:
    if not ST_DEFAULT.is_file():
        pytest.skip(f"corpus preset not found at {ST_DEFAULT}")
    uri = client.open(ST_DEFAULT)
    found = client.published(uri).diagnostics
    checked = compiler.check(ST_DEFAULT)
    assert isinstance(checked, compiler.PresetCheck)
    assert [d.code for d in found] == [d.code for d in checked.warnings]
    symbols = client.wait(
        client.lsp.text_document_document_symbol_async(
            types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
        )
    )
    prompts = json.loads(ST_DEFAULT.read_text())["prompts"]
    assert symbols is not None and len(symbols) == len(prompts)


def test_hover_on_a_real_preset_entry_shows_its_ledger_entry(
    client: Client, tmp_path: Path
) -> None:
    if not ST_DEFAULT.is_file():
        pytest.skip(f"corpus preset not found at {ST_DEFAULT}")
    path = tmp_path / "preset.json"
    shutil.copyfile(ST_DEFAULT, path)
    run = {"chat": [{"role": "user", "content": "Hello"}], "character": {"name": "Aqua"}}
    (tmp_path / "run.json").write_text(json.dumps(run))
    (tmp_path / "pyproject.toml").write_text('[tool.apc]\ncontext = "run.json"\nbudget = 2000\n')
    text = path.read_text()
    uri = client.open(path, text)
    client.published(uri)
    at = text.index('"content": "') + len('"content": "') + 2
    found = client.wait(
        client.lsp.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), _utf8(text, at))
        )
    )
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    result = compiler.compile(path, context=tmp_path / "run.json", budget=2000)
    entry = result.ledger.entry("000:text")
    assert entry.source == f"{path}#prompts[0].content:1:1"
    assert f"`000:text` PresetGuide: offered {entry.tokens_offered:,}" in found.contents.value


def _utf8(text: str, offset: int) -> types.Position:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return types.Position(line, len(text[start:offset].encode("utf-8")))


def test_client_settings_name_the_run_context(client: Client, tmp_path: Path) -> None:
    """``workspace/didChangeConfiguration`` with ``{"apc": {...}}``: the settings win over
    any apc.toml; the open documents are checked again."""
    writer = tmp_path / "writer"
    shutil.copytree(ROOT / "examples" / "writer", writer)
    path = writer / "template.txt"
    text = path.read_text()
    uri = client.open(path, text)
    client.published(uri)
    run = str(writer / "run.json")
    for budget in (900, 1500):  # 900 cannot hold what is required: the compile's error
        settings = {"apc": {"context": run, "budget": budget, "model": "gpt-4o"}}
        client.lsp.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=settings)
        )
        found = client.published(uri).diagnostics  # checked again under the new settings
        if budget == 900:
            assert [d.code for d in found] == ["context.budget_exceeded"]
            assert "the budget is 900" in found[0].message
        else:
            assert found == ()
    at = text.index("<<agent.plan>>") + 3
    hovered = client.wait(
        client.lsp.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), _utf8(text, at))
        )
    )
    assert hovered is not None and isinstance(hovered.contents, types.MarkupContent)
    result = compiler.compile(path, context=writer / "run.json", budget=1500, model="gpt-4o")
    entry = next(e for e in result.ledger.entries if e.kind == "Plan")
    shown = hovered.contents.value
    assert "openai gpt-4o, budget 1,500" in shown
    assert f"offered {entry.tokens_offered:,}" in shown and f"used {entry.tokens_used:,}" in shown
