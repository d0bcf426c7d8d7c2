"""``apc serve``: a long-lived local compile service for runtimes that cannot import Python.

Internal: the interface is the HTTP API and the ``apc serve`` command (docs: "apc serve").
Needs the optional extra ``agent-prompt-compiler[serve]`` (FastAPI, uvicorn, orjson): importing
:mod:`compiler.serve.app` without it raises ImportError, which ``apc serve`` turns into
install instructions.

Modules: :mod:`~compiler.serve.limits` (configuration and bounds),
:mod:`~compiler.serve.models` (request and response bodies),
:mod:`~compiler.serve.sessions` (the LRU of sessions),
:mod:`~compiler.serve.service` (compile, explain, check, without HTTP),
:mod:`~compiler.serve.replies` (JSON bodies and error statuses),
:mod:`~compiler.serve.turns`, :mod:`~compiler.serve.chat_chain`,
:mod:`~compiler.serve.turn_models` and :mod:`~compiler.serve.turn_routes` (the turn
protocol: sessions that hold a chat, turns that send what changed),
:mod:`~compiler.serve.guard` (auth and body size), :mod:`~compiler.serve.app` (the routes),
:mod:`~compiler.serve.runner` (uvicorn, draining on SIGTERM).
"""
