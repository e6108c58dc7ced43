"""A fitted forest outside Python: ONNX (`to_onnx`).

The ``onnx`` package is imported only when a model is exported
(``pip install "aucforest[onnx]"``).
"""
from ._onnx import to_onnx

__all__ = ["to_onnx"]
