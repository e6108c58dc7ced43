"""Timing on a shared machine: systems alternate within each round (so that the
load of other tenants hits them alike) and the median of the rounds is
reported; ratios are taken within a run, never across runs."""
import statistics
import time


def timed(function, *args, **kwargs):
    """(result, wall seconds, CPU seconds of this process, all threads)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def best_of(function, repeats):
    """Smallest wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def round_order(names, round_, reverse=True):
    """The systems' order in one round: as given, reversed every other round
    when ``reverse`` (no system always first after another's fit)."""
    names = list(names)
    return names[::-1] if reverse and round_ % 2 else names


def alternate(names, rounds, measure, reverse=True):
    """Call measure(name, round) for every system in every round, alternating.

    Returns name -> list of the values measure returned, in round order.
    """
    values = {name: [] for name in names}
    for round_ in range(rounds):
        for name in round_order(names, round_, reverse):
            values[name].append(measure(name, round_))
    return values


def median(values):
    """Median of a list of numbers."""
    return statistics.median(values)


def fit_seconds(make, X, y):
    """Wall seconds of make().fit(X, y) and the fitted model."""
    model = make()
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, model
