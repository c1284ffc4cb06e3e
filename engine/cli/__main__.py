"""``python -m engine.cli``: the ``liveshadow`` command."""

import sys

from engine.cli import main

if __name__ == "__main__":
    sys.exit(main())
