"""Build the compiled core: the split kernel and the tree builder."""
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

# AUCFOREST_DEBUG=1 builds with bounds checking and assertions on (see issue on reliability).
DEBUG = os.environ.get("AUCFOREST_DEBUG", "0") == "1"

compile_args = [] if sys.platform == "win32" else (["-O0", "-g"] if DEBUG else ["-O3"])
directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
}

extensions = [
    Extension(
        f"aucforest.{name}",
        [f"aucforest/{name}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=compile_args,
    )
    for name in ("_sort", "_split", "_tree")
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
