"""Reporting: machine-readable result files first, tables and plots from them.

A study writes its rows as ``<name>.csv`` and, beside it, ``<name>.json``: the
metadata of the run (study, date, aucforest version and git commit, the
command, library versions, machine). Markdown reports and plots are made from
these two files (``read_results``), so they can be redrawn without refitting.
"""
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

from .optional import version

RESULTS = Path(__file__).resolve().parents[1] / "results"
REPO = Path(__file__).resolve().parents[2]


def markdown_table(header, rows):
    """A markdown table of the header and rows (cells as str)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def summary_rows(means, systems):
    """Rows of a system summary over data sets: mean, sd, median of the
    per-set score and the mean rank within each data set (1 = best)."""
    from .stats import ranks, spread
    rank = ranks(means[systems])
    rows = []
    for s in systems:
        mean, sd, median = spread(means[s])
        rows.append([s, f"{mean:.4f}", f"{sd:.4f}", f"{median:.4f}", f"{rank[s].mean():.2f}"])
    return rows


SUMMARY_HEADER = ["system", "mean", "sd", "median", "mean rank"]
PAIRED_HEADER = ["peer", "data sets", "mean diff", "median diff", "W/T/L", "p-value"]


def paired_rows(means, reference, systems):
    """Rows of the reference against each other system over the data sets both
    ran on: pairs, mean and median difference, wins/ties/losses, Wilcoxon p."""
    from .stats import paired_test
    rows = []
    for s in systems:
        if s == reference:
            continue
        r = paired_test(means[reference], means[s])
        rows.append([s, r.n, f"{r.mean_diff:+.4f}", f"{r.median_diff:+.4f}", r.wtl,
                     f"{r.pvalue:.2g}"])
    return rows


def git_revision(short=True):
    """The repository's HEAD commit, or "unknown"."""
    command = ["git", "rev-parse"] + (["--short"] if short else []) + ["HEAD"]
    try:
        return subprocess.run(command, capture_output=True, text=True, cwd=REPO,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def now_utc():
    """The date and time of a run, as the reports print it."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def command_line(study, argv=None):
    """How the study was started: ``python -m benchmarks.<study> <args>``."""
    args = sys.argv[1:] if argv is None else list(argv)
    quoted = [f"'{a}'" if (" " in a or '"' in a) else a for a in args]
    return " ".join([f"python -m benchmarks.{study}"] + quoted)


def versions(*distributions):
    """Versions of python, numpy, scikit-learn, aucforest and the given distributions."""
    import sklearn

    import aucforest
    out = {"python": platform.python_version(), "numpy": np.__version__,
           "scikit-learn": sklearn.__version__, "aucforest": aucforest.__version__}
    for name in distributions:
        out[name] = version(name)
    return out


def run_metadata(study, argv=None, distributions=(), **extra):
    """Metadata of a run: study, date, command, aucforest version and commit,
    library versions, machine; plus any extra fields."""
    info = versions(*distributions)
    meta = {"study": study, "date": now_utc(), "command": command_line(study, argv),
            "aucforest_version": info.pop("aucforest"), "git_commit": git_revision(),
            "versions": info,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores"}
    meta.update(extra)
    return meta


def meta_path(path_csv):
    """The metadata file beside a results CSV: same name, .json."""
    return Path(path_csv).with_suffix(".json")


def write_metadata(path_csv, meta):
    """Write the run's metadata beside its CSV."""
    with open(meta_path(path_csv), "w", encoding="utf-8") as handle:
        json.dump(meta, handle, indent=2, sort_keys=False)
        handle.write("\n")


def read_metadata(path_csv):
    """The metadata beside a CSV ({} if there is none)."""
    path = meta_path(path_csv)
    if not path.exists():
        return {}
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def write_results(frame, path_csv, meta, **to_csv):
    """A results CSV and its metadata file."""
    Path(path_csv).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path_csv, index=False, **to_csv)
    write_metadata(path_csv, meta)


def read_results(path_csv):
    """(frame, metadata) of a results CSV."""
    import pandas as pd
    return pd.read_csv(path_csv), read_metadata(path_csv)


def label(meta):
    """One line naming a result file's run for a plot: date and package version."""
    date = str(meta.get("date", "date unknown")).split(" ")[0]
    version_ = meta.get("aucforest_version", "?")
    commit = meta.get("git_commit")
    return f"{date}, aucforest {version_}" + (f" (git {commit})" if commit else "")


GENERATED_MARK = "<!-- generated by the study below this line: edit above it -->"


def write_report(path_md, title, generated):
    """Write a markdown report: ``title``, the hand-written part of the file
    already there (whatever precedes ``GENERATED_MARK``: the question, the
    reading), the mark and the ``generated`` tables. A rerun keeps the
    hand-written part and replaces the tables."""
    path_md = Path(path_md)
    kept = ""
    if path_md.exists():
        text = path_md.read_text(encoding="utf-8")
        if GENERATED_MARK in text:
            kept = text.split(GENERATED_MARK, 1)[0]
            kept = kept.split("\n", 1)[1] if kept.startswith("# ") else kept
    body = kept.strip("\n")
    with open(path_md, "w", encoding="utf-8") as handle:
        handle.write(f"# {title}\n\n" + (body + "\n\n" if body else "") + GENERATED_MARK + "\n\n"
                     + generated.rstrip("\n") + "\n")
