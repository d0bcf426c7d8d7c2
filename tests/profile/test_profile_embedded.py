"""Agent schemas embedded in presets and character cards (JSON and PNG)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from profile_helpers import make_png

from compiler.errors import ContextError, ProfileError
from compiler.inputs.cards import read_card_json
from compiler.profile import resolve_profile
from compiler.profile.embedded import (
    schema_from_card,
    schema_from_preset,
)


def read_card(path: Path) -> Any:
    """A card file's JSON, through the one card reader (profiles read cards with it)."""
    return read_card_json(path)[0]


def tavern(items: list[dict[str, Any]], version: int = 1) -> dict[str, Any]:
    return {"tauritavern": {"agentProfiles": {"version": version, "items": items}}}


def v2_card(extensions: dict[str, Any]) -> dict[str, Any]:
    return {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Ann", "extensions": extensions},
    }


def test_preset_tavern_form() -> None:
    preset = {
        "temperature": 1,
        "extensions": tavern([{"id": "novelist", "tools": {"maxRounds": 12}}]),
    }
    found = schema_from_preset(preset, "p.json")
    assert found is not None
    assert found.paths == ("extensions.tauritavern.agentProfiles.items[0]",)
    resolved = resolve_profile(preset=preset, profile_id="novelist")
    assert resolved.tools.max_rounds == 12


def test_preset_both_forms_combine_and_duplicates_fail() -> None:
    preset = {
        "agent": {"profiles": [{"id": "a"}], "defaultProfile": "b"},
        "extensions": tavern([{"id": "b", "tools": {"maxRounds": 3}}]),
    }
    assert resolve_profile(preset=preset).tools.max_rounds == 3
    preset["extensions"] = tavern([{"id": "a"}])
    with pytest.raises(ProfileError) as info:
        schema_from_preset(preset, "p.json")
    assert info.value.code == "agent.profile_duplicate_id"
    assert info.value.path == "extensions.tauritavern.agentProfiles.items[0].id"


def test_unsupported_tavern_version() -> None:
    with pytest.raises(ProfileError) as info:
        schema_from_preset({"extensions": tavern([], version=2)}, "p.json")
    assert info.value.code == "agent.profile_schema_unsupported"
    assert info.value.path == "extensions.tauritavern.agentProfiles.version"


def test_tavern_item_error_path() -> None:
    with pytest.raises(ProfileError) as info:
        schema_from_preset({"extensions": tavern([{"id": "x", "tols": {}}])}, "p.json")
    assert info.value.path == "extensions.tauritavern.agentProfiles.items[0].tols"
    assert info.value.hint == "did you mean 'tools'?"


def test_preset_without_schema() -> None:
    assert schema_from_preset({"prompts": []}) is None


def test_card_json_forms(tmp_path: Path) -> None:
    card = v2_card(
        {"agent": {"defaultProfile": "bard"}, **tavern([{"id": "bard", "tools": {"maxRounds": 4}}])}
    )
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    resolved = resolve_profile(character=str(path))
    assert (resolved.id, resolved.tools.max_rounds) == ("bard", 4)
    assert resolved.provenance["tools.maxRounds"].file == str(path)


def test_card_error_paths_are_under_data_extensions() -> None:
    with pytest.raises(ProfileError) as info:
        resolve_profile(character=v2_card(tavern([{"id": "bard", "tools": {"alow": []}}])))
    assert info.value.path == "data.extensions.tauritavern.agentProfiles.items[0].tools.alow"


def test_png_card_prefers_ccv3(tmp_path: Path) -> None:
    v3 = {
        "spec": "chara_card_v3",
        "data": {"extensions": tavern([{"id": "v3", "tools": {"maxRounds": 3}}])},
    }
    v2 = v2_card(tavern([{"id": "v2", "tools": {"maxRounds": 2}}]))
    png = tmp_path / "card.png"
    png.write_bytes(make_png({"chara": v2, "ccv3": v3}))
    assert read_card(png)["spec"] == "chara_card_v3"
    resolved = resolve_profile(character=png, profile_id="v3")
    assert resolved.tools.max_rounds == 3
    with pytest.raises(ProfileError):
        resolve_profile(character=png, profile_id="v2")  # the chara chunk is not read


def test_png_card_compressed_text_chunk(tmp_path: Path) -> None:
    card = v2_card(tavern([{"id": "z"}]))
    png = tmp_path / "z.png"
    png.write_bytes(make_png({"chara": card}, compressed={"chara"}))
    assert read_card(png) == card


def test_png_without_card_or_broken(tmp_path: Path) -> None:
    bare = tmp_path / "bare.png"
    bare.write_bytes(make_png({}))
    # one card reader, one vocabulary: the same codes as the run context's card (issue 9)
    with pytest.raises(ContextError) as info:
        read_card(bare)
    assert info.value.code == "context.invalid_card"
    truncated = tmp_path / "truncated.png"
    truncated.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x10tEXtabc")
    with pytest.raises(ContextError) as info2:
        read_card(truncated)
    assert info2.value.code == "context.invalid_card"
    junk = tmp_path / "junk.png"
    junk.write_bytes(make_png({"chara": b"%%% not base64 json"}))
    with pytest.raises(ContextError) as info3:
        read_card(junk)
    assert info3.value.code == "context.invalid_card"
    assert "chara" in info3.value.message


def test_missing_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(ContextError) as info:
        resolve_profile(preset=tmp_path / "nope.json")
    assert info.value.code == "context.file_not_found"
    bad = tmp_path / "bad.json"
    bad.write_text("{ nope", encoding="utf-8")
    with pytest.raises(ContextError) as info2:
        resolve_profile(user=bad)
    assert info2.value.code == "context.invalid_json"
    assert info2.value.file == str(bad)


@pytest.mark.parametrize("name", ["Seraphina-v2v3.png", "CodingSensei-v2.png", "Aqua-v1.png"])
def test_real_cards_read_in_place(corpus: Path, name: str) -> None:
    path = corpus / "cards" / name
    if not path.is_file():
        pytest.skip(f"{path} not in the corpus")
    card = read_card(path)
    assert isinstance(card, dict)
    found = schema_from_card(card, str(path))
    if found is None:
        # None of the corpus cards carries an agent schema today: resolution ignores them.
        assert resolve_profile(character=path).id == "default-writer"
    else:
        assert found.schema.profiles
