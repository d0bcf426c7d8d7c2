"""One module per ``apc`` command family; each exposes ``register(subparsers)``.

Internal: the interface is the ``apc`` command line.
"""
