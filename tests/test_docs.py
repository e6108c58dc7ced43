"""The documentation runs and keeps its shape: docs/user_guide.md's examples (its
joblib Dask example as a script), the README's Python, the io docstrings; the README is a
short front door that opens with the two set-up commands; the API reference lists every
public name. (docs/metrics.md is tested beside the metrics, in
tests/metrics/test_metrics_docs.py; the docstrings themselves in test_docstrings.py; CI
builds the docs with warnings as errors.)
"""
import doctest
import importlib
import inspect
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


README = ROOT / "README.md"
SETUP_COMMANDS = [
    "python3 -m venv .venv && . .venv/bin/activate && pip install . && aucforest compare",
    'python3 -m venv .venv && . .venv/bin/activate && pip install ".[test]" && pytest',
]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)


def test_readme_python_runs(tmp_path, monkeypatch, capsys):
    """Every Python block runs, later ones with the names of earlier ones; the Dask
    block, which connects to a cluster, is only compiled."""
    monkeypatch.chdir(tmp_path)  # the examples write files
    namespace = {}
    blocks = python_blocks(README)
    assert len(blocks) >= 3
    for index, block in enumerate(blocks):
        code = compile(block, f"README.md python block {index}", "exec")
        if "Client(" not in block:
            exec(code, namespace)
    printed = capsys.readouterr().out.split()
    assert "True" in printed  # the loaded forest predicts as the saved one
    assert namespace["values"].shape == namespace["X_test"].shape + (2,)  # SHAP values


def test_readme_is_a_short_front_door():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    first_block = text.split("```", 1)[1]
    assert first_block.startswith("bash\n"), "the README's first code block is the set-up"
    code_lines = [line.strip() for line in first_block.split("```", 1)[0].splitlines()[1:]
                  if line.strip() and not line.strip().startswith("#")]
    assert code_lines[:2] == SETUP_COMMANDS  # CI reads the test command from here
    assert "\n## " not in text.split("```bash", 1)[0], "the commands come before any section"
    hashes = re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", text)
    assert not hashes, f"commit hashes in the README: {hashes}"
    issues = re.findall(r"(?i)\bissues?\s*#?\d+|(?<![\w/])#\d+\b", text)  # not link anchors
    assert not issues, f"issue numbers in the README: {issues}"


def test_readme_links_exist():
    for target in re.findall(r"\]\(([^)#]+?)(?:#[^)]*)?\)", README.read_text()):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_user_guide_dask_example_runs_as_a_script(tmp_path):
    pytest.importorskip("distributed")
    block = next(b for b in python_blocks(ROOT / "docs" / "user_guide.md")
                 if "parallel_backend" in b)
    script = tmp_path / "dask_example.py"
    script.write_text(block)
    env = _environment_importing_this_package()
    env["DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT"] = "120s"  # workers start slowly under load
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=600, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-1] == "True"  # the cluster's forest is the local one


def _environment_importing_this_package():
    """os.environ with the aucforest under test first on PYTHONPATH (for subprocesses)."""
    env = dict(os.environ)
    package_parent = str(Path(aucforest.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
    return env


def public_names():
    """Qualified names of the public API, as tests/test_docstrings.py collects them."""
    names = []
    for module_name in ("aucforest", "aucforest.metrics", "aucforest.inspection", "aucforest.io",
                        "aucforest.calibration", "aucforest.decisions", "aucforest.conformal"):
        module = importlib.import_module(module_name)
        listed = getattr(module, "__all__", None)
        if listed is None:
            listed = [name for name, value in vars(module).items()
                      if not name.startswith("_")
                      and (inspect.isclass(value) or inspect.isfunction(value))
                      and getattr(value, "__module__", "").startswith(module_name)]
        names += [(module_name, name) for name in listed if not name.startswith("__")]
    return names


def test_api_reference_lists_every_public_name():
    """docs/api.rst's autosummary tables name every public name under its module."""
    text = (ROOT / "docs" / "api.rst").read_text()
    sections = re.split(r"^\.\. currentmodule:: ", text, flags=re.MULTILINE)[1:]
    listed = {(section.split()[0], line.strip()) for section in sections
              for line in section.splitlines() if line.startswith("   ") and
              re.fullmatch(r"[A-Za-z_]\w*", line.strip())}
    missing = [f"{module}.{name}" for module, name in public_names()
               if (module, name) not in listed]
    assert not missing, f"add to docs/api.rst: {missing}"
