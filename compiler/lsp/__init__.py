"""``apc lsp``: a language server for templates and SillyTavern presets (pygls, over
stdio; the ``lsp`` extra). A front-end: it imports only the public API (:mod:`compiler`),
:mod:`compiler.errors` and :mod:`compiler.providers`.

Internal: the interface is ``apc lsp`` (see the docs' Language server page).

- :mod:`.text`: offsets to LSP positions in the negotiated encoding;
- :mod:`.jsonmap`: where each value of a preset's JSON is, and how a JSON string's decoded
  characters map back to the text (escapes, surrogate pairs);
- :mod:`.document`: a document's regions of template text and their macros;
- :mod:`.diagnostics`: ``apc check``'s findings with ranges, links and fixes;
- :mod:`.runs`: the run context of a document (settings, ``apc.toml``) and its compile;
- :mod:`.completion`, :mod:`.features`: completion; hover, definition, symbols, actions;
- :mod:`.server`: the pygls server.
"""
