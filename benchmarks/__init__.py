"""aucforest's benchmarks: one harness (``benchmarks.harness``) and the studies.

Every study is a module run from the repository root as ``python -m
benchmarks.<study>``; ``python -m benchmarks.plots`` redraws the evidence
plots from the result files in ``benchmarks/results`` (index:
``benchmarks/results/README.md``).
"""
