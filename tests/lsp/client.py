"""A language client process over stdio: pygls's LanguageClient starting ``python -m compiler
lsp`` from this checkout, driven from synchronous tests (one event loop per client), with a
transcript of every JSON-RPC message both ways.

Without the lsp extra the tests skip, except in CI (the CI variable set), where the extra is
installed and a missing one is a failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

if not os.environ.get("CI"):
    pytest.importorskip("pygls", reason="the lsp extra (pygls) is not installed")

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


class Client:
    """One server process and the client talking to it."""

    def __init__(
        self, root: Path, options: dict[str, Any] | None = None, encoding: str = ""
    ) -> None:
        self.loop = asyncio.new_event_loop()
        self.lsp = LanguageClient("apc-tests", "1")
        self.diagnostics: dict[str, asyncio.Queue[types.PublishDiagnosticsParams]] = {}
        self.transcript: list[tuple[str, Any]] = []
        self._record()

        @self.lsp.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            self.queue(params.uri).put_nowait(params)

        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.wait(self.lsp.start_io(sys.executable, "-m", "compiler", "lsp", env=env))
        general = (
            types.GeneralClientCapabilities(position_encodings=[encoding]) if encoding else None
        )
        self.init = self.wait(
            self.lsp.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(general=general),
                    root_uri=root.as_uri(),
                    initialization_options=options,
                )
            )
        )
        self.lsp.initialized(types.InitializedParams())

    def _record(self) -> None:
        protocol = self.lsp.protocol
        send, receive = protocol._send_data, protocol.structure_message

        def sent(data: Any) -> None:
            plain = json.loads(json.dumps(data, default=protocol._serialize_message))
            self.transcript.append(("client", plain))
            send(data)

        def received(data: dict[str, Any]) -> Any:
            if "jsonrpc" in data:  # a message (the hook also sees the objects inside one)
                self.transcript.append(("server", data))
            return receive(data)

        protocol._send_data = sent  # type: ignore[method-assign]
        protocol.structure_message = received  # type: ignore[method-assign]

    def queue(self, uri: str) -> asyncio.Queue[types.PublishDiagnosticsParams]:
        return self.diagnostics.setdefault(uri, asyncio.Queue())

    def wait(self, work: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        return self.loop.run_until_complete(asyncio.wait_for(work, timeout))

    def published(self, uri: str) -> types.PublishDiagnosticsParams:
        """The next diagnostics the server publishes for ``uri``."""
        return self.wait(self.queue(uri).get())

    def open(self, path: Path, text: str | None = None, version: int = 1) -> str:
        uri = path.as_uri()
        language = "json" if path.suffix == ".json" else "plaintext"
        text = path.read_text(encoding="utf-8") if text is None else text
        self.lsp.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, version, text))
        )
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        self.lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def close(self) -> None:
        try:
            self.wait(self.lsp.shutdown_async(None), timeout=10)
            self.lsp.exit(None)
            self.wait(self.lsp.stop(), timeout=10)
        finally:
            self.loop.close()


def position(text: str, offset: int) -> types.Position:
    """The UTF-16 position of a string offset (what an editor sends and expects)."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return types.Position(line, len(text[start:offset].encode("utf-16-le")) // 2)
