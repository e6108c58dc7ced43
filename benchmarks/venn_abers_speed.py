"""Time of the Venn-Abers fit against scikit-learn's IsotonicRegression fit (issue 58).

`aucforest._calibration_maps.VennAbersCalibration().fit` computes the pair
(p0, p1) of every place a new score can take, in one sweep over the
cumulative sum diagram (Vovk, Petej & Fedorova 2015); scikit-learn's
``IsotonicRegression().fit`` fits one isotonic regression. Both on the same
scores (distinct, uniform on [0, 1]) and 0/1 labels drawn with P(1 | s) = s,
for n = 3.5k, 14k, 56k and 200k. The two fits alternate within each round
(order reversed every other round) and the medians of the rounds are
compared: the ratio is Venn-Abers over isotonic, one process, one thread.

From the repository root:

    python -m benchmarks.venn_abers_speed [--rounds R] [--sizes 3500,14000,...]
"""
import argparse

import numpy as np
from sklearn.isotonic import IsotonicRegression

from aucforest._calibration_maps import VennAbersCalibration

from .harness.timing import alternate, median, timed

SIZES = (3_500, 14_000, 56_000, 200_000)
FITS = {"venn_abers": lambda s, y: VennAbersCalibration().fit(s, y),
        "isotonic": lambda s, y: IsotonicRegression().fit(s, y)}


def scores_and_labels(n, seed=0):
    """n distinct scores in [0, 1] and labels with P(1 | s) = s."""
    rng = np.random.default_rng(seed)
    scores = rng.permutation(n) / n + rng.uniform(0, 0.5 / n, n)
    return scores, (rng.uniform(size=n) < scores).astype(float)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.venn_abers_speed",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args(argv)
    print(f"{'n':>8} {'venn_abers s':>13} {'isotonic s':>11} {'ratio':>7}  (medians of "
          f"{args.rounds} alternating rounds)")
    for n in (int(size) for size in args.sizes.split(",")):
        scores, labels = scores_and_labels(n)
        assert np.unique(scores).size == n
        for fit in FITS.values():  # warm up (imports, allocations)
            fit(scores, labels)
        seconds = alternate(list(FITS), args.rounds,
                            lambda name, _, s=scores, y=labels: timed(FITS[name], s, y)[1])
        va, iso = median(seconds["venn_abers"]), median(seconds["isotonic"])
        print(f"{n:>8} {va:>13.4f} {iso:>11.4f} {va / iso:>7.2f}")


if __name__ == "__main__":
    main()
