"""Where the language server looks for a document's run settings (``apc.toml``)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pygls")

from compiler.lsp.runs import find_settings


def test_a_toml_above_the_workspace_root_is_not_applied(tmp_path: Path) -> None:
    """A file inside the workspace finds the workspace's own ``apc.toml``, never one above
    the workspace root (e.g. planted in a shared ``/tmp``)."""
    (tmp_path / "apc.toml").write_text('context = "planted.json"\n')
    root = tmp_path / "project"
    (root / "writer").mkdir(parents=True)
    template = root / "writer" / "template.txt"
    template.write_text("Hi")
    assert find_settings(template, {}, root).context is None
    (root / "apc.toml").write_text('context = "run.json"\n')
    found = find_settings(template, {}, root)
    assert found.context == root / "run.json" and found.origin == str(root / "apc.toml")
    # without a workspace root (one file opened), the nearest above still applies
    assert find_settings(template, {}, None).context == root / "run.json"
    (root / "apc.toml").unlink()
    assert find_settings(template, {}, None).context == tmp_path / "planted.json"
