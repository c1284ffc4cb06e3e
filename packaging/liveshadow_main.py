"""The bundle's entry point: the ``liveshadow`` command (the app when given no subcommand, as in a checkout)."""

import sys

from engine.cli import main

if __name__ == "__main__":
    sys.exit(main())
