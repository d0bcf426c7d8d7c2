"""The readers of a run's inputs: the run-context schema and loading, chats, character
cards, lorebook files, the workspace and its sandbox, tool definitions.

Internal: the public names are :class:`compiler.RunContext`, :func:`compiler.load_context`
and :class:`compiler.ChatLog`. Readers only: what SillyTavern does with what they read
(world-info activation, regex scripts, macros) is :mod:`compiler.st`.
"""
