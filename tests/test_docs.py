"""The documentation runs: docs/user_guide.md, the README's Python (the Dask example as a
script), the io docstrings, and docs/api.md is what docs/make_api.py generates.

(docs/metrics.md is tested beside the metrics, in tests/metrics/test_metrics_docs.py.)
"""
import difflib
import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_readme_dask_example_runs_as_a_script(tmp_path):
    pytest.importorskip("distributed")
    block = next(b for b in readme_python_blocks() if "LocalCluster" in b)
    script = tmp_path / "dask_example.py"
    script.write_text(block)
    env = _environment_importing_this_package()
    env["DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT"] = "120s"  # workers start slowly under load
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=600, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-1] == "True"  # the cluster's forest is the local one


def test_readme_keeps_the_two_setup_commands():
    first_block = (ROOT / "README.md").read_text().split("```bash\n", 1)[1].split("```", 1)[0]
    assert "pip install . && aucforest compare" in first_block
    assert 'pip install ".[test]" && pytest' in first_block


def _environment_importing_this_package():
    """os.environ with the aucforest under test first on PYTHONPATH (for subprocesses)."""
    env = dict(os.environ)
    package_parent = str(Path(aucforest.io.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    return env


@pytest.fixture(scope="module")
def generated_api_reference(tmp_path_factory):
    """What docs/make_api.py writes for the code under test."""
    output = tmp_path_factory.mktemp("api") / "api.md"
    subprocess.run([sys.executable, str(ROOT / "docs" / "make_api.py"), str(output)],
                   check=True, capture_output=True, timeout=120,
                   env=_environment_importing_this_package())
    return output.read_text(encoding="utf-8")


def test_api_reference_script_runs(generated_api_reference):
    for name in ("aucforest.AUCForestClassifier(", "aucforest.auc_split_statistic(table)",
                 "aucforest.metrics.multiclass_auc(", "aucforest.io.save(", "aucforest.io.load(",
                 "aucforest compare --help"):
        assert name in generated_api_reference


def test_api_reference_is_up_to_date(generated_api_reference):
    committed = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    diff = list(difflib.unified_diff(committed.splitlines(), generated_api_reference.splitlines(),
                                     "docs/api.md", "python docs/make_api.py", lineterm="", n=0))
    assert not diff, ("docs/api.md is stale: run `python docs/make_api.py` and commit "
                      "docs/api.md.\n" + "\n".join(diff[:30]))
