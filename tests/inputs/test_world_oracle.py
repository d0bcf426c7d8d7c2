"""World info against SillyTavern 1.12.6's own requests (tests/fixtures/st_oracle_wi):
the same preset, card, lorebook, persona and chat compile to the messages SillyTavern sent
(issue 12, items 6-8)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import compiler

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "st_oracle_wi"
CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus"
PRESET = CORPUS / "presets" / "st-default-2024.json"
needs_corpus = pytest.mark.skipif(
    not PRESET.is_file(), reason="../shared/corpus is absent (st-default-2024.json)"
)


def golden(case: str) -> list[dict[str, Any]]:
    """SillyTavern's messages: role, and the content's sha256 and length (the content holds
    corpus text, which stays out of the repository)."""
    body = json.loads((FIXTURES / f"{case}.golden.json").read_text("utf-8"))
    return [
        {"role": m["role"], "sha256": m["sha256"], "length": m["length"]} for m in body["messages"]
    ]


def _hashed(role: str, content: str) -> dict[str, Any]:
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
    return {"role": role, "sha256": digest, "length": len(content)}


def ours(preset: Path, run: dict[str, Any], base: Path) -> list[dict[str, Any]]:
    ctx = compiler.load_context(run, base)
    result = compiler.compile(preset, context=ctx, mode="legacy", model="gpt-4o")
    return [_hashed(m["role"], m["content"]) for m in result.request["messages"]]


@needs_corpus
def test_every_entry_rule_as_sillytavern() -> None:
    run = json.loads((FIXTURES / "wi_synth_rules.run.json").read_text("utf-8"))
    assert ours(PRESET, run, FIXTURES) == golden("wi_synth_rules")


@needs_corpus
def test_the_budget_stops_where_sillytavern_stops(tmp_path: Path) -> None:
    if not (CORPUS / "cards" / "Seraphina-v2v3.png").is_file():
        pytest.skip("the corpus card is absent")
    run = json.loads((FIXTURES / "wi_budget_seraphina.run.json").read_text("utf-8"))
    run["character"] = str(CORPUS / "cards" / "Seraphina-v2v3.png")
    run["worldInfo"] = str(CORPUS / "worlds" / "Eldoria.json")
    preset = json.loads(PRESET.read_text("utf-8"))
    preset.update(openai_max_context=3300, openai_max_tokens=300)  # the capture's overrides
    (tmp_path / "preset.json").write_text(json.dumps(preset), "utf-8")
    got = ours(tmp_path / "preset.json", run, tmp_path)
    assert got == golden("wi_budget_seraphina")  # one entry of the four fits 25 % of 3,000
