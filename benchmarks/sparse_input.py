"""Sparse input: aucforest, scikit-learn's forest and oneDAL on a bag-of-words set.

A document-term count matrix is generated (no text corpus ships offline):
Zipf-distributed term frequencies over a vocabulary of 20,000 terms, about
80 terms per document, and a rare positive class (10%) whose documents use
a few informative mid-frequency terms somewhat more often. Each system fits
on the sparse training matrix and predicts the sparse test rows; fit and
predict wall time, test AUC and the peak memory of the process are measured
in a fresh process per fit (peak resident set size, and its growth over the
data alone), systems alternating, median of 3 rounds.

    python -m benchmarks.sparse_input                 # the full run (results/sparse_input.md)
    python -m benchmarks.sparse_input --docs 4000 --terms 5000 --trees 20 --rounds 1  # smoke run
"""
import argparse
import json
import logging
import resource
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score

from .harness import timing

SYSTEMS = ("aucforest", "scikit-learn", "oneDAL")  # and "aucforest-binned" (max_bins=255)


def bag_of_words(n_docs, n_terms, seed=0, doc_length=80, n_informative=20, positive=0.1):
    """(X, y): a CSR document-term count matrix (float32) and a binary target.

    Term t (rank t + 1) has probability proportional to 1 / (t + 1)^1.1
    (Zipf); a document has a Poisson(doc_length) number of tokens. Positive
    documents (a share ``positive``) also draw Poisson(2) tokens among
    ``n_informative`` terms of middling frequency (ranks 200 to 2,000).
    """
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_terms + 1) ** 1.1
    y = (rng.random(n_docs) < positive).astype(np.intp)
    lengths = rng.poisson(doc_length, n_docs)
    docs = np.repeat(np.arange(n_docs), lengths)
    terms = rng.choice(n_terms, size=docs.size, p=weights / weights.sum())
    informative = rng.choice(np.arange(200, min(2000, n_terms)), n_informative, replace=False)
    extra = rng.poisson(2, n_docs) * y
    docs = np.concatenate([docs, np.repeat(np.arange(n_docs), extra)])
    terms = np.concatenate([terms, rng.choice(informative, extra.sum())])
    X = sp.coo_matrix((np.ones(docs.size, dtype=np.float32), (docs, terms)),
                      shape=(n_docs, n_terms)).tocsr()
    X.sum_duplicates()
    return X, y


def make(system, trees, jobs):
    """An unfitted classifier of `system`, with n_estimators and n_jobs set."""
    if system.startswith("aucforest"):  # the defaults, or the binned splitter
        from aucforest import AUCForestClassifier
        binned = dict(max_bins=255) if system == "aucforest-binned" else {}
        return AUCForestClassifier(trees, n_jobs=jobs, random_state=0, **binned)
    if system == "scikit-learn":
        from sklearn.ensemble import RandomForestClassifier
        return RandomForestClassifier(trees, n_jobs=jobs, random_state=0)
    from sklearnex.ensemble import RandomForestClassifier
    return RandomForestClassifier(n_estimators=trees, n_jobs=jobs, random_state=0)


def peak_mb():
    """Peak resident set size of this process so far, in MB (Linux: ru_maxrss in kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_one(system, args):
    """Fit and predict once in this process; a dict of the measurements."""
    X, y = bag_of_words(args.docs, args.terms)
    n_train = int(0.8 * X.shape[0])
    X_train, y_train, X_test, y_test = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    X_train = X_train.tocsc()  # as scikit-learn's forests fit
    messages = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())
    logging.getLogger("sklearnex").addHandler(handler)
    logging.getLogger("sklearnex").setLevel(logging.INFO)
    model = make(system, args.trees, args.jobs)
    data_mb = peak_mb()
    start = time.perf_counter()
    model.fit(X_train, y_train)
    fit = time.perf_counter() - start
    start = time.perf_counter()
    proba = model.predict_proba(X_test)
    predict = time.perf_counter() - start
    return dict(fit=fit, predict=predict, auc=roc_auc_score(y_test, proba[:, 1]),
                peak_mb=peak_mb(), data_mb=data_mb,
                onedal=[m for m in messages if "sklearn.ensemble" in m or "fallback" in m
                        or "accelerated" in m or "oneDAL" in m][:4])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sparse_input",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--terms", type=int, default=20_000)
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # measure one system in this process
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_one(args.one, args)))
        return
    X, y = bag_of_words(args.docs, args.terms)
    print(f"{X.shape[0]:,} documents x {X.shape[1]:,} terms, {X.nnz:,} stored counts "
          f"({X.nnz / X.shape[0]:.0f} per document, density {X.nnz / np.prod(X.shape):.2%}), "
          f"{y.mean():.1%} positive; 80% train / 20% test; {args.trees} trees, "
          f"{args.jobs} threads", flush=True)
    passed = [f"--{name}={getattr(args, name)}" for name in ("docs", "terms", "trees", "jobs")]

    def run(system, round_):
        output = subprocess.run([sys.executable, "-m", "benchmarks.sparse_input", "--one", system,
                                 *passed], capture_output=True, text=True, check=True).stdout
        result = json.loads(output.strip().splitlines()[-1])
        print(f"  round {round_ + 1} {system}: fit {result['fit']:.2f} s, predict "
              f"{result['predict']:.2f} s, AUC {result['auc']:.4f}, peak {result['peak_mb']:.0f} MB "
              f"(data {result['data_mb']:.0f} MB) {result['onedal'] or ''}", flush=True)
        return result

    results = timing.alternate(args.systems.split(","), args.rounds, run)
    print("\n| system | fit s | predict s | test AUC | peak MB | over data MB |")
    print("|---|---|---|---|---|---|")
    medians = {}
    for system, runs in results.items():
        m = {key: timing.median([r[key] for r in runs])
             for key in ("fit", "predict", "auc", "peak_mb", "data_mb")}
        medians[system] = m
        print(f"| {system} | {m['fit']:.2f} | {m['predict']:.2f} | {m['auc']:.4f} | "
              f"{m['peak_mb']:.0f} | {m['peak_mb'] - m['data_mb']:.0f} |")
    for ours in [system for system in medians if system.startswith("aucforest")]:
        for system, m in medians.items():
            if not system.startswith("aucforest"):
                a = medians[ours]
                print(f"{ours} / {system}: fit {a['fit'] / m['fit']:.2f}, predict "
                      f"{a['predict'] / m['predict']:.2f}, peak memory "
                      f"{a['peak_mb'] / m['peak_mb']:.2f}")


if __name__ == "__main__":
    main()
