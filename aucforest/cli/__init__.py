"""The ``aucforest`` command line: fit, predict, evaluate, tune, compare, importance, export.

Examples
--------
::

    aucforest fit train.csv --target outcome --id patient --output model.npz
    aucforest predict model.npz new.csv --proba --output proba.csv
    aucforest evaluate model.npz test.csv --target outcome --plot roc.png
    aucforest tune model.npz --output tuned.npz --metric gmean   # rule chosen out of bag
    aucforest compare                          # bundled data sets, about a minute
    aucforest compare data.csv --target outcome --repeats 10 --folds-csv folds.csv
    aucforest export model.npz model.onnx      # for onnxruntime, in any language

Long work draws a progress bar on stderr (``--quiet`` silences it). Every
error prints one line, ``aucforest: error: ...``, and exits with status 1
(2 for a bad command line); ``--traceback`` shows the full traceback instead,
for bug reports.

Output files (models, predictions, per-fold scores, plots) are written whole
or not at all (:mod:`aucforest._atomic`): to a temporary file beside the
destination, renamed over it once complete, so a failed or interrupted
command leaves the previous file intact. A symbolic link is written through
to its target (the link is kept); a folder, FIFO or device is refused before
any work. ``predict --output -`` writes to stdout, as without ``--output``.

The package: :mod:`aucforest.cli._options` (argument types and shared option
groups), :mod:`aucforest.cli._data` (models, tables and encodings read for the
commands), :mod:`aucforest.cli._output` (output checks, CSV, JSON-ready values),
:mod:`aucforest.cli._decision_report` (what a decision costs, the calibration and
the conformal sets' coverage, as ``evaluate`` and ``fit`` report them),
:mod:`aucforest.cli._from_oob` (calibration maps and conformal sets from the
out-of-bag predictions a model file holds), :mod:`aucforest.cli._comparison`
(the comparison ``compare`` runs), and one module per subcommand: ``_fit``,
``_predict``, ``_evaluate``, ``_tune``, ``_compare``, ``_importance``, ``_export``. This
module holds :func:`main` and the parser.
"""
import argparse
import os
import re
import sys
import warnings

from .._table import quote
from .._version import __version__
from ._compare import add_compare_command, run_compare
from ._data import accepts_missing, model_and_labelled_data
from ._evaluate import add_evaluate_command, operating_point, run_evaluate
from ._export import add_export_command
from ._fit import add_fit_command, run_fit
from ._importance import add_importance_command
from ._options import MAX_SEED, OUTPUT_FILES
from ._output import check_plot
from ._predict import add_predict_command, run_predict
from ._tune import add_tune_command, run_tune

__all__ = ["main", "build_parser", "SUBCOMMANDS", "OUTPUT_FILES", "MAX_SEED", "EXIT_ERROR",
           "EXIT_USAGE", "EXIT_INTERRUPTED", "run_fit", "run_predict", "run_evaluate",
           "run_compare", "run_tune", "model_and_labelled_data", "accepts_missing", "check_plot",
           "operating_point"]

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def main(argv=None):
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments after the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 on an error, 2 on a bad command line, 130 when
        interrupted.
    """
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = _print_warning
        try:
            return args.run(args) or 0
        except KeyboardInterrupt:
            print("\naucforest: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:  # e.g. `aucforest predict ... | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_ERROR
        except Exception as error:
            if args.traceback:
                raise
            print(f"aucforest: error: {_one_line(error)}", file=sys.stderr)
            return EXIT_ERROR


def _one_line(error):
    if isinstance(error, OSError) and error.strerror and error.filename:
        return f"{error.strerror}: {error.filename}"
    message = _short_quotes(" ".join(str(error).split()))
    if isinstance(error, (ValueError, OSError, ImportError)):
        return message
    return (f"unexpected {type(error).__name__}: {message} "
            "(rerun with --traceback and report it as a bug)")


def _print_warning(message, category, filename, lineno, file=None, line=None):
    print(f"aucforest: warning: {_short_quotes(' '.join(str(message).split()))}",
          file=sys.stderr)


# a quoted text (as repr writes it) of more than 40 characters: opened after a space
# or an opening bracket, closed before a space, a bracket or punctuation
_LONG_QUOTED = re.compile(r"""(?<![^\s\[({,:=])(?:'([^'\n]{41,}?)'|"([^"\n]{41,}?)")"""
                          r"""(?=$|[\s\])},;:.])""")


def _short_quotes(message):
    """``message`` with every quoted text longer than 40 characters cut to its
    first 40 (:func:`aucforest._table.quote`): a cell or label quoted by any
    layer (scikit-learn, the metrics) stays short on the command line."""
    return _LONG_QUOTED.sub(lambda match: quote(match.group(1) or match.group(2)), message)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, like every other error."""

    def error(self, message):
        sys.stderr.write(f"aucforest: error: {message} (see '{self.prog} --help')\n")
        sys.exit(EXIT_USAGE)


def build_parser():
    """The argument parser of the ``aucforest`` command (one entry of
    :data:`SUBCOMMANDS` per subcommand)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--quiet", action="store_true", help="no progress bar")
    common.add_argument("--traceback", action="store_true",
                        help="on an error, show the full traceback (for bug reports)")
    parser = _Parser(prog="aucforest", description=(
        "Random forests that split on the multiclass AUC statistic, with RFQ decisions "
        "for imbalanced classes."))
    parser.add_argument("--version", action="version", version=f"aucforest {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True,
                                     parser_class=_Parser)
    for add_command in SUBCOMMANDS:
        add_command(commands, common)
    return parser


#: One function per subcommand, each adding its parser to ``commands``.
SUBCOMMANDS = [add_fit_command, add_predict_command, add_evaluate_command, add_tune_command,
               add_compare_command, add_importance_command, add_export_command]
