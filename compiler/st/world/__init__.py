"""SillyTavern's world-info engine: which lorebook entries a chat activates, where they go,
and why (the lorebook debugger).

Internal: the public names are :class:`compiler.WorldInfoReport` and its parts.
"""
