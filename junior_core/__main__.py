"""``python -m junior_core`` runs the ``junior`` command line."""

from junior_core.cli import main

main()
