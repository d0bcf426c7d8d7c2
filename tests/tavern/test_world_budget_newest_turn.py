"""World info the scan activates within ``worldInfoBudgetTokens`` is kept: an entry at depth
0 (in the newest turn, never cut) and a block entry whose contents fit the budget together.

Known defect (review23): the scan admits entries by their contents, the fit counts the
in-chat message with its framing in ``worldInfo``; the newest turn holds that share of the
pool, so the block is then over what is left (legacy: ``context.budget_exceeded`` at any
total; agent: the block dropped whole). Before the in-chat categories this compiled.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest

import compiler

PRESET = {
    "prompts": [
        {"identifier": "main", "role": "system", "content": "Write the next reply."},
        {"identifier": "worldInfoBefore", "marker": True},
        {"identifier": "chatHistory", "marker": True},
    ],
    "prompt_order": [
        {
            "character_id": 100001,
            "order": [
                {"identifier": i, "enabled": True}
                for i in ("main", "worldInfoBefore", "chatHistory")
            ],
        }
    ],
    "agent": {
        "enabled": True,
        "profiles": [{"id": "rp", "displayName": "RP", "context": {"worldInfoBudgetTokens": 100}}],
        "defaultProfile": "rp",
    },
}
BOOK = {
    "entries": {
        "0": {"uid": 0, "constant": True, "content": "WIBEF" + " lore" * 10, "position": 0},
        "1": {
            "uid": 1,
            "constant": True,
            "content": "WID0" + " lore" * 81,  # the scan admits both, by a token
            "position": 4,
            "depth": 0,
            "role": 0,
        },
    }
}


@pytest.mark.xfail(strict=True, reason="review23: in-chat framing over the scan's WI budget")
@pytest.mark.parametrize("mode", ["legacy", "agent"])
def test_world_info_the_scan_admits_is_sent(
    tmp_path: Path, mode: Literal["agent", "legacy"]
) -> None:
    (tmp_path / "preset.json").write_text(json.dumps(PRESET))
    (tmp_path / "book.json").write_text(json.dumps(BOOK))
    run = {
        "character": {"name": "Aqua", "description": "Goddess."},
        "persona": {"name": "Kazuma"},
        "worldInfo": "book.json",
        "chat": [
            {"role": "user", "content": "u1"},
            {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "u2"},
        ],
    }
    (tmp_path / "run.json").write_text(json.dumps(run))
    result = compiler.compile(
        tmp_path / "preset.json", context=tmp_path / "run.json", mode=mode, budget=6000
    )
    sent = json.dumps(result.request)
    assert "WIBEF" in sent and "WID0" in sent
