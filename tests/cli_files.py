"""Helpers of the command-line tests: CSV files written as a user would, and the
command line run in process."""
import csv

from aucforest.cli import main


def write_csv(path, header, rows, delimiter=","):
    """Write a CSV file of ``header`` and ``rows``; returns ``path``."""
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def run_main(capsys, *args):
    """``aucforest ARGS`` in this process: (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err
