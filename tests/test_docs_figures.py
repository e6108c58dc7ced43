"""docs/make_figures.py draws the user guide's figures: run as the docs say (a
subprocess outside the source tree, writing to a folder given), it writes a PNG
of each figure the guide shows from docs/images/."""
import re
import subprocess
import sys
from pathlib import Path

from package_env import package_env

ROOT = Path(__file__).resolve().parents[1]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_make_figures_draws_every_figure_the_guide_shows(tmp_path):
    guide = (ROOT / "docs" / "user_guide.md").read_text()
    shown = re.findall(r"!\[[^\]]*\]\(images/([^)]+)\)", guide)
    assert "reliability.png" in shown
    result = subprocess.run([sys.executable, str(ROOT / "docs" / "make_figures.py"),
                             str(tmp_path / "out")], cwd=tmp_path, env=package_env(),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    for name in shown:
        assert (ROOT / "docs" / "images" / name).read_bytes().startswith(PNG_SIGNATURE)
        drawn = tmp_path / "out" / name
        assert drawn.read_bytes().startswith(PNG_SIGNATURE), name
        assert drawn.stat().st_size > 10_000  # a drawn figure, not an empty canvas
