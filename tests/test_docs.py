"""The documentation runs: docs/user_guide.md, the README's Python, and the io docstrings.

(docs/metrics.md is tested beside the metrics, in tests/metrics/test_metrics_docs.py.)
"""
import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import aucforest.io

ROOT = Path(__file__).resolve().parents[1]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_user_guide_examples():
    result = doctest.testfile(str(ROOT / "docs" / "user_guide.md"), module_relative=False,
                              optionflags=FLAGS)
    assert result.attempted > 20 and result.failed == 0


def test_io_docstring_examples():
    result = doctest.testmod(aucforest.io, optionflags=FLAGS)
    assert result.attempted > 0 and result.failed == 0


def readme_python_blocks():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_readme_python_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the examples write files
    namespace = {}
    for index, block in enumerate(readme_python_blocks()):  # later blocks use earlier names
        exec(compile(block, f"README.md python block {index}", "exec"), namespace)
    printed = capsys.readouterr().out.split()
    assert printed[-1] == "True"  # the loaded forest predicts as the saved one


def test_readme_keeps_the_two_setup_commands():
    first_block = (ROOT / "README.md").read_text().split("```bash\n", 1)[1].split("```", 1)[0]
    assert "pip install . && aucforest compare" in first_block
    assert 'pip install ".[test]" && pytest' in first_block


def test_api_reference_script_runs(tmp_path):
    output = tmp_path / "api.md"
    env = dict(os.environ)
    package_parent = str(Path(aucforest.io.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    subprocess.run([sys.executable, str(ROOT / "docs" / "make_api.py"), str(output)],
                   check=True, capture_output=True, timeout=120, env=env)
    text = output.read_text()
    for name in ("aucforest.AUCForestClassifier(", "aucforest.auc_split_statistic(table)",
                 "aucforest.metrics.multiclass_auc(", "aucforest.io.save(", "aucforest.io.load(",
                 "aucforest compare --help"):
        assert name in text
