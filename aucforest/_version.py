"""The package's version, in one place: ``aucforest.__version__``, the model
files' ``aucforest_version``, ``aucforest --version`` and the build's metadata
(pyproject.toml reads it from here) all take it from this module."""
__version__ = "0.1.0"
