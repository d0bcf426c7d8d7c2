"""``python -m compiler`` runs the ``apc`` command line.

Internal: the interface is the ``apc`` command line.
"""

from compiler.cli import run

run()
