"""Time of aucforest.inspection.oob_importance against scikit-learn's permutation_importance.

The same data (make_classification, n = 20,000, p = 20) and forest settings
(200 trees, AUC splitting): `oob_importance` on a forest fitted on all n cases,
permuting each feature among each tree's out-of-bag cases; scikit-learn's
`permutation_importance` on a forest fitted on 80% and scored (ROC AUC) on the
held-out 20%, with the same n_repeats. One thread each (BLAS too), so the ratio
measures the work, not the scheduling. Prints both times and their ratio.

From the repository root:

    python -m benchmarks.inspection_speed [--n-repeats R] [--n-jobs J]
"""
import argparse

from sklearn.datasets import make_classification
from sklearn.inspection import permutation_importance
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from aucforest import AUCForestClassifier
from aucforest.inspection import oob_importance

from .harness.timing import timed


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.inspection_speed",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=20_000)
    parser.add_argument("--n-features", type=int, default=20)
    parser.add_argument("--n-estimators", type=int, default=200)
    parser.add_argument("--n-repeats", type=int, default=2)
    parser.add_argument("--n-jobs", type=int, default=1, help="threads of both importances")
    args = parser.parse_args(argv)
    X, y = make_classification(args.n_samples, n_features=args.n_features, n_informative=6,
                               random_state=0)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0,
                                                        stratify=y)
    full = AUCForestClassifier(args.n_estimators, random_state=0, n_jobs=2).fit(X, y)
    train = AUCForestClassifier(args.n_estimators, random_state=0, n_jobs=2).fit(X_train,
                                                                                 y_train)
    full.set_params(n_jobs=args.n_jobs)
    train.set_params(n_jobs=args.n_jobs)

    with threadpool_limits(1):  # BLAS threads spin after a call and would bill a second core
        oob, oob_wall, oob_cpu = timed(oob_importance, full, X, y, n_repeats=args.n_repeats,
                                       random_state=0, n_jobs=args.n_jobs)
        held_out, sk_wall, sk_cpu = timed(permutation_importance, train, X_test, y_test,
                                          scoring="roc_auc", n_repeats=args.n_repeats,
                                          random_state=0, n_jobs=args.n_jobs)

    print(f"n={args.n_samples}, p={args.n_features}, {args.n_estimators} trees, "
          f"n_repeats={args.n_repeats}, n_jobs={args.n_jobs}")
    print(f"{'':48s}  wall s   CPU s")
    for name, wall, cpu in [(f"oob_importance (OOB cases of all {args.n_samples})",
                             oob_wall, oob_cpu),
                            (f"permutation_importance (held-out {len(y_test)})", sk_wall, sk_cpu)]:
        print(f"{name:48s} {wall:7.2f} {cpu:7.2f}")
    print(f"ratio oob / held-out: wall {oob_wall / sk_wall:.2f}, CPU {oob_cpu / sk_cpu:.2f} "
          "(CPU time is the steadier figure on a shared machine)")
    top = oob.importances_mean.argsort()[::-1][:6]
    print("top features, OOB:     ", top.tolist())
    print("top features, held-out:", held_out.importances_mean.argsort()[::-1][:6].tolist())


if __name__ == "__main__":
    main()
