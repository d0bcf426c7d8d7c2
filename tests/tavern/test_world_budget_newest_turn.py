"""World info the scan activates within ``worldInfoBudgetTokens`` is kept: an entry at depth
0 (in the newest turn, never cut) and a block entry whose contents fit the budget together.

The scan admits entries by their text; the fit counts an in-chat entry's text in
``worldInfo`` and its message framing in ``history``, so the two agree (counting the framing
in ``worldInfo`` too, the newest turn's share left the block a few tokens short: legacy
failed with ``context.budget_exceeded``, agent mode dropped the block).
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
            "content": "WID0" + " lore" * 75,  # the scan admits both, by a token
            "position": 4,
            "depth": 0,
            "role": 0,
        },
    }
}


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
