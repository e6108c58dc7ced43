"""Which AUC estimator should a researcher trust? (issue 5)

Reproduces in spirit the synthetic experiment of the CBAUC paper (Hassan,
Huttunen, Niemi & Tohka, "Bayesian receiver operating characteristic metric
for linear classifiers", Pattern Recognition Letters 128 (2019) 52-59,
section 3.1.1, "Multivariate Gaussian Data"): two classes
N(0, I) and N(1, I) in P = 4 and P = 10 dimensions, n = 10, 20, 50, 100 cases
per class, an L2-regularised logistic regression fitted on each sample
(LIBLINEAR, C = 1, as in the paper). The true AUC of the fitted weights w is
known exactly,

    AUC(w) = Phi(w'(mu2 - mu1) / sqrt(2 w' Sigma w))        (paper eq. 2),

and every estimator is compared with it: the apparent AUC, the 5-fold
cross-validated AUC (mean of the fold AUCs, as in the paper), the
leave-one-out bootstrap AUC^(*), .632 and .632+ (Yousef, Wagner & Loew,
"Comparison of non-parametric methods for assessing classifier performance
in terms of ROC parameters", eq. 16-19)
and CBAUC (eq. 14). A third setting breaks CBAUC's Gaussian assumption: each
case is drawn with covariance I (probability 0.9) or 16 I (probability 0.1),
a heavy-tailed scale mixture whose true AUC is the mixture of the normal AUCs,

    AUC(w) = sum_{a, b} p_a p_b Phi(w'(mu2 - mu1) / sqrt((s_a^2 + s_b^2) w'w)).

Run from the repository root:

    nice -n 10 python -m benchmarks.auc_estimators
    python -m benchmarks.auc_estimators --reps 3 --bootstraps 5 --out /tmp/est  # smoke run

It takes several minutes on 2 cores (--reps and --bootstraps trade time for
precision) and writes benchmarks/results/auc_estimators.md and .png, and the
summary per cell and estimator as auc_estimators.csv with its metadata (.json).
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # two worker processes, no oversubscription
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import sklearn  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402
from scipy.stats import norm  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from aucforest.metrics import auc, bayesian_auc, bootstrap_auc  # noqa: E402

from .harness import plots, report  # noqa: E402

STUDY = "auc_estimators"

ESTIMATORS = ("apparent", "cv5", "loo_bootstrap", "b632", "b632_plus", "cbauc")
LABELS = {
    "apparent": "apparent",
    "cv5": "5-fold CV",
    "loo_bootstrap": "LOO bootstrap",
    "b632": ".632",
    "b632_plus": ".632+",
    "cbauc": "CBAUC",
}
SIZES = (10, 20, 50, 100)
MIXTURE = ((0.9, 1.0), (0.1, 4.0))  # (probability, standard deviation)


class Setting:
    """A data-generating process with the exact AUC of any linear score."""

    def __init__(self, name, n_features, heavy_tailed=False):
        self.name = name
        self.n_features = n_features
        self.heavy_tailed = heavy_tailed
        self.shift = np.ones(n_features)  # mu2 - mu1, with mu1 = 0

    def sample(self, n, rng):
        X = rng.standard_normal((2 * n, self.n_features))
        if self.heavy_tailed:
            probs, sds = zip(*MIXTURE)
            X *= rng.choice(sds, size=(2 * n, 1), p=probs)
        X[n:] += self.shift
        return X, np.repeat([0, 1], n)

    def true_auc(self, w):
        separation = w @ self.shift / np.linalg.norm(w)
        if not self.heavy_tailed:
            return norm.cdf(separation / np.sqrt(2.0))
        return sum(pa * pb * norm.cdf(separation / np.hypot(sa, sb))
                   for pa, sa in MIXTURE for pb, sb in MIXTURE)


SETTINGS = (
    Setting("Gaussian, P = 4", 4),
    Setting("Gaussian, P = 10", 10),
    Setting("heavy-tailed scale mixture, P = 4", 4, heavy_tailed=True),
)


def classifier():
    """L2 logistic regression with LIBLINEAR, as in the CBAUC paper."""
    return LogisticRegression(C=1.0, solver="liblinear")


def cross_validated_auc(X, y, rng):
    folds = StratifiedKFold(5, shuffle=True, random_state=rng.integers(2**31))
    aucs = []
    for train, test in folds.split(X, y):
        model = classifier().fit(X[train], y[train])
        aucs.append(auc(y[test], model.decision_function(X[test])))
    return float(np.mean(aucs))


def one_repetition(setting, n, seed, n_bootstraps):
    """Errors (estimate - true AUC) of every estimator on one training sample."""
    rng = np.random.default_rng(seed)
    X, y = setting.sample(n, rng)
    model = classifier().fit(X, y)
    truth = setting.true_auc(model.coef_[0])
    boot = bootstrap_auc(classifier(), X, y, n_bootstraps=n_bootstraps,
                         random_state=rng.integers(2**31))
    estimates = {
        "apparent": boot.apparent,
        "cv5": cross_validated_auc(X, y, rng),
        "loo_bootstrap": boot.loo_bootstrap,
        "b632": boot.b632,
        "b632_plus": boot.b632_plus,
        "cbauc": bayesian_auc(X, y, model.coef_),
    }
    return truth, np.array([estimates[e] - truth for e in ESTIMATORS])


def run(reps, n_bootstraps, n_jobs, seed):
    seeds = np.random.SeedSequence(seed).spawn(len(SETTINGS) * len(SIZES))
    jobs = [(s, n, child) for (s, n), base in zip(
        [(s, n) for s in SETTINGS for n in SIZES], seeds)
        for child in base.spawn(reps)]
    outputs = Parallel(n_jobs=n_jobs, backend="multiprocessing", batch_size=8)(
        delayed(one_repetition)(s, n, child, n_bootstraps) for s, n, child in jobs)
    results = {}
    for (s, n, _), (truth, errors) in zip(jobs, outputs):
        entry = results.setdefault((s.name, n), {"truth": [], "errors": []})
        entry["truth"].append(truth)
        entry["errors"].append(errors)
    return {key: (np.array(v["truth"]), np.array(v["errors"])) for key, v in results.items()}


def summary(errors):
    """MAE, bias and spread (SD of the error) per estimator."""
    return np.abs(errors).mean(axis=0), errors.mean(axis=0), errors.std(axis=0, ddof=1)


def markdown(results, reps, n_bootstraps, elapsed):
    lines = [
        "# AUC estimators against the true AUC (python -m benchmarks.auc_estimators)",
        "",
        f"{reps} training samples per cell; L2 logistic regression (C = 1, "
        "LIBLINEAR, as in the CBAUC paper); "
        f"{n_bootstraps} bootstrap replicates per sample (fewer than the papers' "
        "100 to keep the run short; it adds a little noise to the bootstrap "
        "estimators, not bias); 5-fold CV is the mean of the fold AUCs. Each cell "
        "is **MAE** (mean absolute error) / bias (mean error) / spread (SD of "
        "the error) against the exact AUC of the fitted classifier; the "
        "smallest MAE of each row is in bold. Typical standard error of an MAE: "
        "spread / sqrt(reps).",
        "",
        f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, Python "
        f"{platform.python_version()}; run time {elapsed / 60:.1f} min.",
    ]
    for setting in SETTINGS:
        lines += ["", f"## {setting.name}", "",
                  "| n per class | mean true AUC | "
                  + " | ".join(LABELS[e] for e in ESTIMATORS) + " |",
                  "|---:|---:|" + "---:|" * len(ESTIMATORS)]
        for n in SIZES:
            truth, errors = results[(setting.name, n)]
            mae, bias, spread = summary(errors)
            best = int(np.argmin(mae))
            cells = [
                (f"**{m:.3f}**" if k == best else f"{m:.3f}") + f" / {b:+.3f} / {s:.3f}"
                for k, (m, b, s) in enumerate(zip(mae, bias, spread))
            ]
            lines.append(f"| {n} | {truth.mean():.3f} | " + " | ".join(cells) + " |")
    lines += ["", "![MAE and spread of the AUC estimators](auc_estimators.png)", ""]
    return "\n".join(lines)


def summary_frame(results):
    """One row per (setting, n, estimator): mean true AUC, MAE, bias, spread."""
    rows = []
    for (setting, n), (truth, errors) in results.items():
        mae, bias, spread = summary(errors)
        for k, estimator in enumerate(ESTIMATORS):
            rows.append(dict(setting=setting, n_per_class=n, estimator=estimator,
                             true_auc=truth.mean(), mae=mae[k], bias=bias[k],
                             spread=spread[k], reps=len(truth)))
    return pd.DataFrame(rows)


def plot(results, path, meta=None):
    plt = plots.pyplot()

    fig, axes = plt.subplots(2, len(SETTINGS), figsize=(4.2 * len(SETTINGS), 7),
                             sharex=True)
    for column, setting in enumerate(SETTINGS):
        stats = np.array([summary(results[(setting.name, n)][1]) for n in SIZES])
        for k, estimator in enumerate(ESTIMATORS):
            style = dict(marker="o", label=LABELS[estimator],
                         linewidth=2.5 if estimator in ("cbauc", "b632_plus") else 1.2)
            axes[0, column].plot(SIZES, stats[:, 0, k], **style)
            axes[1, column].plot(SIZES, stats[:, 2, k], **style)
        axes[0, column].set_title(setting.name, fontsize="medium")
        axes[1, column].set_xlabel("training cases per class")
        axes[0, column].set_xscale("log")
        axes[0, column].set_xticks(SIZES, [str(n) for n in SIZES])
    axes[0, 0].set_ylabel("mean absolute error")
    axes[1, 0].set_ylabel("spread (SD of the error)")
    axes[0, 0].legend(fontsize="small")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    plots.stamp(fig, meta or {}, "auc_estimators.csv")
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.auc_estimators",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--bootstraps", type=int, default=50)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--out", type=Path, default=report.RESULTS)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = run(args.reps, args.bootstraps, args.n_jobs, args.seed)
    elapsed = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    text = markdown(results, args.reps, args.bootstraps, elapsed)
    (args.out / "auc_estimators.md").write_text(text)
    meta = report.run_metadata(STUDY, argv, reps=args.reps, bootstraps=args.bootstraps,
                               seed=args.seed)
    report.write_results(summary_frame(results), args.out / "auc_estimators.csv", meta)
    plot(results, args.out / "auc_estimators.png", meta)
    print(text)


if __name__ == "__main__":
    main()
