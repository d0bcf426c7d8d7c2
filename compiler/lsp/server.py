"""The language server (pygls, over stdio): documents in, diagnostics out as the author
types (debounced), and completion, hover, definition, document symbols and code actions on
request.

Internal: the interface is ``apc lsp``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

import compiler
from compiler.errors import Diagnostic
from compiler.lsp import features
from compiler.lsp.completion import Sources, complete, priorities
from compiler.lsp.diagnostics import check, docs_links, span_range, to_lsp
from compiler.lsp.document import Document, uri_path
from compiler.lsp.runs import (
    Run,
    RunSettings,
    compile_run,
    find_settings,
    skill_names,
    workspace_root,
)

DEBOUNCE_SECONDS = 0.3
TRIGGERS = ["<", ".", " ", '"', "=", "{", "/"]


class ApcLanguageServer(LanguageServer):
    """``apc lsp``'s server: the open documents' analyses and the run settings."""

    def __init__(self, debounce: float = DEBOUNCE_SECONDS) -> None:
        super().__init__("apc", "0.1.0", text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.debounce = debounce
        self.settings: dict[str, Any] = {}
        self.links = docs_links(Path(str(compiler.__file__)).resolve().parent)
        self.snapshots: dict[str, Document] = {}
        self.runs: dict[str, tuple[int | None, RunSettings, Run]] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}

    def current(self, uri: str) -> tuple[str, int | None]:
        """The open document's text and version, as the client last sent them."""
        text_doc = self.workspace.get_text_document(uri)
        return text_doc.source, text_doc.version

    def document(self, uri: str, text: str | None = None, version: int | None = None) -> Document:
        """The document read from ``text`` (default: its current text), once per version."""
        if text is None:
            text, version = self.current(uri)
        held = self.snapshots.get(uri)
        if held is None or held.version != version or held.text != text:
            chosen = self.workspace.position_encoding or "utf-16"
            encoding = str(getattr(chosen, "value", chosen))  # an enum's str() is its name
            held = Document(uri, text, version, encoding)
            self.snapshots[uri] = held
        return held

    def run_settings(self, doc: Document) -> RunSettings:
        root = uri_path(self.workspace.root_uri) if self.workspace.root_uri else None
        return find_settings(doc.file, self.settings, root)

    def run(self, doc: Document) -> Run:
        """The compile of the document under its run settings (cached per version)."""
        settings = self.run_settings(doc)
        held = self.runs.get(doc.uri)
        if held is not None and held[0] == doc.version and held[1] == settings:
            return held[2]
        found = compile_run(doc, settings)
        self.runs[doc.uri] = (doc.version, settings, found)
        return found

    def diagnose(self, doc: Document) -> list[types.Diagnostic]:
        """``apc check``'s findings; with a run context and no error, the compile's errors
        (a budget that cannot hold what is required)."""
        if doc.kind == "json":
            return []  # a JSON file that is not a preset (a run context, a card, ...)
        found = check(doc)
        if not any(d.severity == "error" for d in found):
            run = self.run(doc)
            found += [d for d in run.problems if _mine(doc, d) and d not in found]
        return [to_lsp(doc, d, self.links) for d in found]

    async def publish(self, uri: str, delay: float) -> None:
        """Check the document after ``delay`` seconds (a newer change restarts the wait)."""
        if delay:
            await asyncio.sleep(delay)
        text, version = self.current(uri)  # read on the loop; parsed and checked off it
        found = await asyncio.to_thread(lambda: self.diagnose(self.document(uri, text, version)))
        if self.current(uri)[1] != version:
            return  # edited meanwhile: the newer check publishes
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version)
        )

    def schedule(self, uri: str, delay: float) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self.publish(uri, delay))


def _mine(doc: Document, d: Diagnostic) -> bool:
    """Whether a compile's diagnostic is about this document (or about no file)."""
    file = d.span.file if d.span is not None else d.file
    return file is None or file == doc.label or file.startswith(doc.label + "#")


def _apc_settings(value: Any) -> dict[str, Any]:
    """The ``apc`` settings of an initialization or configuration object."""
    if isinstance(value, Mapping):
        inner = value.get("apc")
        return dict(inner) if isinstance(inner, Mapping) else dict(value)
    return {}


def build_server(debounce: float = DEBOUNCE_SECONDS) -> ApcLanguageServer:
    """A server with every feature registered."""
    server = ApcLanguageServer(debounce)

    @server.feature(types.INITIALIZE)
    def initialize(ls: ApcLanguageServer, params: types.InitializeParams) -> None:
        ls.settings = _apc_settings(params.initialization_options)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def configuration(ls: ApcLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        ls.settings = _apc_settings(params.settings)
        ls.runs.clear()
        for uri in list(ls.snapshots):
            ls.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ApcLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ApcLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ApcLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.runs.pop(params.text_document.uri, None)  # the run's inputs may have changed
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ApcLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.snapshots.pop(uri, None)
        ls.runs.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    _register_requests(server)
    return server


def _register_requests(server: ApcLanguageServer) -> None:
    completion_options = types.CompletionOptions(trigger_characters=TRIGGERS)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, completion_options)
    def completion(
        ls: ApcLanguageServer, params: types.CompletionParams
    ) -> types.CompletionList | None:
        doc = ls.document(params.text_document.uri)
        offset = doc.offset(params.position.line, params.position.character)
        region = doc.region_at(offset)
        if region is None:
            return None
        at = region.from_doc(offset)
        settings = ls.run_settings(doc)
        run = ls.run(doc) if settings.context is not None else None
        sources = Sources(
            tools=run.tool_names if run else [],
            skills=skill_names(settings),
            workspace=workspace_root(doc, settings),
            visible_roots=run.visible_roots if run else None,
            priorities=priorities(doc.text),
        )
        items, back = complete(region.text[:at], sources)
        start = span_range(doc, region.to_doc(at - back), offset)
        for item in items:
            new = item.label
            if region.string is not None:
                new = json.dumps(new, ensure_ascii=False)[1:-1]
            item.text_edit = types.TextEdit(range=start, new_text=new)
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: ApcLanguageServer, params: types.HoverParams) -> types.Hover | None:
        doc = ls.document(params.text_document.uri)
        offset = doc.offset(params.position.line, params.position.character)
        run = ls.run(doc) if ls.run_settings(doc).context is not None else None
        return features.hover(doc, offset, run)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: ApcLanguageServer, params: types.DefinitionParams) -> types.Location | None:
        doc = ls.document(params.text_document.uri)
        offset = doc.offset(params.position.line, params.position.character)
        return features.definition(doc, offset, workspace_root(doc, ls.run_settings(doc)))

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(
        ls: ApcLanguageServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol]:
        return features.symbols(ls.document(params.text_document.uri))

    actions = types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, actions)
    def code_action(
        ls: ApcLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        return features.code_actions(params.text_document.uri, params.context.diagnostics)


def serve() -> int:
    """Run the server on stdin and stdout until the client exits. Anything else the process
    would print goes to stderr: stdout carries only the protocol."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    build_server().start_io(stdin, stdout)
    return 0
