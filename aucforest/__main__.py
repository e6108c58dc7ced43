"""``python -m aucforest``: the command line (see :mod:`aucforest.cli`)."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
