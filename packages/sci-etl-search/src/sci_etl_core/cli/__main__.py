"""``python -m sci_etl_core.cli`` runs the ``sci-etl-search`` command line."""

from sci_etl_core.cli.app import main

main()
