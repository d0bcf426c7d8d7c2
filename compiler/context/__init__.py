"""The run context and its readers: chat, character cards, world info, workspace.

Internal: the public names are :class:`compiler.RunContext` and :func:`compiler.load_context`.
"""
