"""Build the compiled core: criteria, sorting, the exact and binned splitters, the tree builder.

Three things keep the build short (about a minute on two cores):

* Cython translates the modules and the C compiler compiles them on every core
  (``cythonize(nthreads=...)`` and ``build_ext``'s parallel mode);
* the code Cython repeats in every module (memoryviews, its own types) is
  generated once, in the shared module ``aucforest._cyutility``;
* what was built is kept under ``build/`` in the source folder, keyed by content:
  Cython's translations (its ``cache``) and the compiled modules (`CachedBuildExt`),
  so that a second ``pip install .`` (the tests' extras after the package, an
  extra later) compiles nothing that has not changed.
"""
import hashlib
import json
import os
import re
import shutil
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: Processes that translate and compile: AUCFOREST_BUILD_JOBS, else every core.
BUILD_JOBS = int(os.environ.get("AUCFOREST_BUILD_JOBS", "0")) or os.cpu_count() or 1
#: The module holding the utility code Cython would otherwise put in every module.
SHARED_UTILITY = "aucforest._cyutility"
#: Where translations and compiled modules are kept between builds, keyed by content.
BUILD_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build", "cache")

# AUCFOREST_DEBUG=1 builds with Cython's bounds and initialisation checks on and with
# AddressSanitizer, which also checks the raw-pointer loops (how to run the tests under it:
# docs/architecture.md, "Debugging the compiled core").
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
                 "_rfq", "_venn_abers", "_dask/_draws", "_dask/_entries", "_dask/_worker_kernels",
                 "_dask/_histogram_splitter",
                 "inspection/_permute",
                 "inspection/_treeshap", "metrics/_rank_sums")
]

extensions.append(Extension(SHARED_UTILITY, [SHARED_UTILITY.replace(".", "/") + ".c"],
                            extra_compile_args=compile_args, extra_link_args=link_args))


class CachedBuildExt(build_ext):
    """``build_ext`` compiling in parallel (unless ``-j`` says otherwise) and reusing a
    module compiled before from the same C text, flags, Python and numpy.

    The key leaves out Cython's metadata block at the top of the C file, which
    names the (temporary) folder numpy's headers were found in.
    """

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = BUILD_JOBS

    def build_extension(self, ext):
        target = self.get_ext_fullpath(ext.name)
        cached = os.path.join(BUILD_CACHE, "modules", f"{ext.name}-{self._key(ext)}"
                              + os.path.splitext(target)[1])
        if os.path.exists(cached):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            _copy_whole(cached, target)
            return
        super().build_extension(ext)
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        _copy_whole(target, cached)

    def _key(self, ext):
        digest = hashlib.sha256()
        for source in ext.sources:
            with open(source, encoding="utf-8") as stream:
                digest.update(re.sub(r"/\* BEGIN: Cython Metadata.*?END: Cython Metadata \*/",
                                     "", stream.read(), count=1, flags=re.DOTALL).encode())
        settings = [ext.extra_compile_args, ext.extra_link_args, ext.define_macros,
                    np.__version__, sys.version, sys.platform, self.compiler.compiler_so
                    if hasattr(self.compiler, "compiler_so") else None]
        digest.update(json.dumps(settings, default=str).encode())
        return digest.hexdigest()[:20]


def _copy_whole(source, target):
    """Copy to a temporary file beside ``target`` and rename it over ``target``: a new
    file, never one rewritten under a process that has it loaded."""
    shutil.copyfile(source, target + ".part")
    os.replace(target + ".part", target)


setup(ext_modules=cythonize(extensions, compiler_directives=directives, nthreads=BUILD_JOBS,
                            shared_utility_qualified_name=SHARED_UTILITY,
                            cache=os.path.join(BUILD_CACHE, "cython")),
      cmdclass={"build_ext": CachedBuildExt})
