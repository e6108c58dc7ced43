"""The repository stands alone: no file cites a document it does not hold.

Docstrings, comments, guides and benchmarks once pointed at design notes and
papers kept beside the repository (a "section N" of the design notes, paths
into a sibling folder named "shared"). A reader of the repository has neither;
each citation now names what the code does and the paper it implements, or a
page of docs/. This test keeps it so: it reads every file git tracks (``git
ls-files``) or, without git or outside a checkout (an unpacked sdist), every
file under the repository folder but the build outputs and caches, and fails
on such a citation, listing file and line.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Written with character classes so that this file does not match them itself, nor
# the plain-text search (grep) that audits the repository for the same citations.
CITATIONS = {
    "the design notes (not in the repository)": re.compile(r"\bD[E]SIGN\b"),
    "a path into the sibling folder \"shared\" (not in the repository)": re.compile(
        r"\.\.[/\\](?:\.\.[/\\])*shared\b"                 # up one or more folders
        r"|/work[/\\]shared\b"                              # the absolute form
        r"|\bshared[/\\](?:papers|peers|hooks)\b"),         # papers, peers: bare
}

# Walked without git: folders that hold build outputs, environments and caches
# (those of .gitignore and the usual tool caches), and compiled files.
SKIP_DIRS = {".git", ".venv", "venv", ".tox", ".nox", "build", "dist", "__pycache__",
             ".hypothesis", ".benchmarks", ".pytest_cache", ".mypy_cache", ".ruff_cache",
             "node_modules"}
SKIP_DIR_PATHS = {Path("docs", "_build"), Path("docs", "generated")}
SKIP_SUFFIXES = {".so", ".pyd", ".dll", ".dylib", ".o", ".pyc"}


def tracked_files(root=ROOT):
    """Paths (relative to root) of the files git tracks under root, or None when
    git is missing or root is not in a checkout that tracks anything here."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        run = subprocess.run([git, "-C", str(root), "ls-files", "-z", "--cached"],
                             capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if run.returncode != 0:
        return None
    names = [name for name in run.stdout.decode("utf-8", "surrogateescape").split("\0")
             if name]
    return [Path(name) for name in names] or None


def walked_files(root=ROOT):
    """Paths (relative to root) of the files under root but build outputs and caches:
    `SKIP_DIRS`, `SKIP_DIR_PATHS`, compiled files, and the C or C++ that Cython writes
    beside a .pyx (aucforest/*.c are ignored by git)."""
    found = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder).relative_to(root)
        dirs[:] = sorted(d for d in dirs
                         if d not in SKIP_DIRS and not d.endswith(".egg-info")
                         and here / d not in SKIP_DIR_PATHS)
        for name in sorted(files):
            path = here / name
            if path.suffix in SKIP_SUFFIXES:
                continue
            if path.suffix in (".c", ".cpp") and (root / path.with_suffix(".pyx")).exists():
                continue
            found.append(path)
    return found


def files_to_check(root=ROOT):
    """The tracked files, or the walked ones without git: (paths, how they were found)."""
    tracked = tracked_files(root)
    if tracked is not None:
        return tracked, "git ls-files"
    return walked_files(root), "a walk of the repository folder"


def citations_in(text):
    """(line number, what, line) of every citation in text."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for what, pattern in CITATIONS.items():
            if pattern.search(line):
                found.append((number, what, line.strip()))
    return found


def test_patterns_catch_the_citations_that_were_removed():
    design, shared = "D" + "ESIGN", "shared"
    for line in (f"left out; {design} section 2).", f"(see {design}, section 2)",
                 f"{design} §12", f"notes in {design}.md", f"(../{shared}/peers/build-rfsrc.sh)",
                 f"../../{shared}/papers/x.txt", f"({shared}/papers/cbauc.txt, section 3)",
                 f"bash /work/{shared}/peers/build.sh"):
        assert citations_in(line), line
    for line in ("a design choice", f"{design}_MATRIX = 1", "shared memory",
                 f"the {shared}/ folder",
                 "docs/user_guide.md, section 1", "sharedmem/papers"):
        assert not citations_in(line), line


def test_walk_finds_the_sources_and_leaves_out_build_outputs():
    walked = set(walked_files())
    assert Path("aucforest", "__init__.py") in walked
    assert Path("tests", "test_stands_alone.py") in walked
    assert not any(part in SKIP_DIRS for path in walked for part in path.parts[:-1])
    assert not any(path.suffix in SKIP_SUFFIXES for path in walked)
    assert not citations_in(Path(__file__).read_text(encoding="utf-8"))  # not itself


def test_no_file_cites_documents_outside_the_repository():
    paths, how = files_to_check()
    assert Path("aucforest", "__init__.py") in paths, f"{how} found no sources in {ROOT}"
    problems = []
    for path in paths:
        full = ROOT / path
        if not full.is_file():  # listed by git but deleted in the working tree
            continue
        data = full.read_bytes()
        if b"\0" in data:  # binary (images, model files)
            continue
        for number, what, line in citations_in(data.decode("utf-8", "replace")):
            problems.append(f"{path}:{number}: {what}: {line[:120]}")
    assert not problems, (
        f"files ({how}) cite documents the repository does not hold; say what the code "
        "does and name the paper and equation, or link a page of docs/:\n"
        + "\n".join(problems))
