"""Build the compiled core: criteria, sorting, the exact and binned splitters, the tree builder."""
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# AUCFOREST_DEBUG=1 builds with Cython's bounds and initialisation checks on and with
# AddressSanitizer, which also checks the raw-pointer loops (run the tests under it with
# LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0; see README).
DEBUG = os.environ.get("AUCFOREST_DEBUG", "0") == "1"

if sys.platform == "win32":
    compile_args, link_args = [], []
elif DEBUG:
    compile_args = ["-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"]
    link_args = ["-fsanitize=address"]
else:
    compile_args, link_args = ["-O3"], []
directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
}

extensions = [
    Extension(
        f"aucforest.{name.replace('/', '.')}",
        [f"aucforest/{name}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
    for name in ("_criterion", "_sort", "_split", "_binned", "_sparse_split", "_tree",
                 "_rfq", "_dask/_draws", "_dask/_entries", "_dask/_worker_kernels",
                 "_dask/_histogram_splitter",
                 "inspection/_permute",
                 "inspection/_treeshap", "metrics/_rank_sums")
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
