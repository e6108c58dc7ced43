"""Environment for subprocesses that must import the aucforest under test."""
import os
from pathlib import Path

import aucforest


def package_env():
    """os.environ with the folder holding the tested aucforest (installed, or built in
    place) first on PYTHONPATH.

    Run such subprocesses outside the source tree (cwd=tmp_path): after a plain
    install, the source folder's aucforest/ holds no compiled modules.
    """
    parent = str(Path(aucforest.__file__).resolve().parents[1])
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [parent, os.environ.get("PYTHONPATH")])))
