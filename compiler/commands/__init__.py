"""One module per ``apc`` command family; each exposes ``register(subparsers)``."""
