"""Offsets to LSP positions and back, and JSON strings mapped back to their text: properties
over any text (escapes, surrogate pairs, CJK, every line break)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from compiler.lsp.jsonmap import MAX_DEPTH, scan
from compiler.lsp.text import LineIndex

UNITS = {"utf-16": ("utf-16-le", 2), "utf-8": ("utf-8", 1), "utf-32": ("utf-32-le", 4)}
TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)


@given(TEXT, st.booleans())
def test_every_decoded_character_maps_to_the_text_that_encodes_it(value: str, ascii: bool) -> None:
    text = json.dumps({"prompts": [{"content": value}]}, ensure_ascii=ascii)
    string = scan(text).string("prompts[0].content")
    assert string is not None and string.value == value
    for i, char in enumerate(value):
        start, end = string.to_text(i), string.to_text(i + 1)
        assert json.loads(f'"{text[start:end]}"') == char
        assert string.from_text(start) == i
    assert string.to_text(len(value)) == string.end


@given(TEXT, st.sampled_from(sorted(UNITS)))
def test_positions_count_the_encodings_units(text: str, encoding: str) -> None:
    text = text.replace("\x0b", "\r\n")
    index = LineIndex(text, encoding)
    codec, size = UNITS[encoding]
    for offset in range(len(text) + 1):
        line, character = index.position(offset)
        start = index.starts[line]
        if text[start:offset].rstrip("\r\n") == text[start:offset]:  # not inside a break
            assert character == len(text[start:offset].encode(codec, "surrogatepass")) // size
            assert index.offset(line, character) == offset


def test_a_broken_preset_keeps_what_it_found() -> None:
    text = '{"prompts": [{"content": "a\\u00e9b"}, {"content": "x" "y"}]}'
    found = scan(text)
    string = found.string("prompts[0].content")
    assert string is not None and string.value == "aéb"
    assert found.string("prompts[1].content") is not None
    assert "prompts" not in found.values  # the list never closed


KEYS = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters=".["), max_size=6)
NUMBERS = st.integers() | st.floats(allow_nan=False, allow_infinity=False)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | NUMBERS | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


def _paths(value: object, path: str = "") -> dict[str, object]:
    out = {path: value}
    if isinstance(value, dict):
        for key, item in value.items():
            out.update(_paths(item, f"{path}.{key}" if path else key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.update(_paths(item, f"{path}[{i}]"))
    return out


@given(JSON_VALUES, st.booleans(), st.sampled_from([None, 1]))
def test_every_value_is_found_at_its_path(value: object, ascii: bool, indent: int | None) -> None:
    """Keys without '.' or '[' (which would make two paths alike): every value's text."""
    document = {"root": value}
    text = json.dumps(document, ensure_ascii=ascii, indent=indent)
    found = scan(text)
    for path, item in _paths(document).items():
        start, end = found.values[path]
        assert json.loads(text[start:end]) == item


@given(TEXT, st.sampled_from(sorted(UNITS)), st.integers(0, 3))
def test_positions_on_one_long_line_count_every_wide_character_before(
    text: str, encoding: str, repeat: int
) -> None:
    """A preset's JSON on one line: positions come from an index of the wide characters (a
    search each, not a count of the line), and each still counts every unit before it."""
    line = (text.replace("\r", " ").replace("\n", " ") + "\U0001f600é") * (repeat + 1)
    index = LineIndex(line, encoding)
    codec, size = UNITS[encoding]
    for offset in range(len(line) + 1):
        assert index.position(offset) == (0, len(line[:offset].encode(codec)) // size)


def test_a_preset_nested_past_the_parser_has_no_symbols_and_a_diagnostic() -> None:
    from compiler.lsp.diagnostics import check
    from compiler.lsp.document import Document
    from compiler.lsp.features import symbols

    doc = Document("file:///p.json", '{"prompts": ' + "[" * 100_000)
    assert symbols(doc) == []
    assert [d.code for d in check(doc)] == ["context.invalid_json"]
    # the scan stops at MAX_DEPTH: what it maps is bounded by it, not by the text's square
    deep = scan('{"prompts": [{"content": "a"}, ' + "[" * 5000 + "]" * 5000 + "]}")
    assert "prompts[0].content" in deep.values  # what came before is kept
    assert max(path.count("[") for path in deep.values) <= MAX_DEPTH
