"""What the ``aucforest`` subcommands write and print: the checks of an output
path before any work, CSV output (whole or not at all), JSON-ready values and
the texts that describe a decision rule."""
import csv
import os
import sys

import numpy as np

from .._atomic import atomic_output, figure_format, output_target
from ._comparison import matplotlib_figure


def _decision_text(forest):
    return forest.decision_rule_.describe(forest.classes_)


def _plain(value):
    """JSON-ready: numpy arrays and scalars to lists and Python numbers."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _check_output(path, option, inputs=()):
    """Refuse, before any work, an output path that is a folder, a FIFO, a
    device, lies in a missing or unwritable folder, or is one of the input
    files (also through links). A symbolic link is checked as its target, which
    the write replaces (:func:`aucforest._atomic.output_target`)."""
    if os.path.isdir(path):
        raise ValueError(f"{option} {path} is a folder; give a file name")
    target = output_target(path, f"{option} file")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(2, "No such folder for the output file", path)
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(target)
                                                    and not os.access(target, os.W_OK)):
        raise PermissionError(13, "Permission denied: cannot write the output file", path)
    for source in inputs:
        if _same_file(path, source):
            raise ValueError(f"{option} {path} is the input file {source}; writing it would "
                             "destroy the input. Choose another output file")


def check_plot(path, inputs=()):
    """Refuse, before any work, a --plot path that cannot be written (as
    `_check_output`), matplotlib missing, or an image format it cannot write."""
    _check_output(path, "--plot", inputs=inputs)
    matplotlib_figure()
    figure_format(path)


def _same_file(first, second):
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)  # hard links
    except OSError:  # one of them does not exist
        return False


def _cell_text(value):
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else (str(int(value)) if float(value).is_integer()
                                           else repr(float(value)))
    return str(value)


def _write_csv(header, rows, path):
    """CSV to ``path`` (whole or not at all, :func:`aucforest._atomic.atomic_output`),
    or to stdout when ``path`` is None."""
    if path is None:
        _write_rows(sys.stdout, header, rows)
        return
    with atomic_output(path, "w", what="CSV file", newline="", encoding="utf-8") as stream:
        _write_rows(stream, header, rows)


def _write_rows(stream, header, rows):
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
