"""A fitted forest outside Python: ONNX (`to_onnx`, and a converter for skl2onnx
registered by `register_skl2onnx`).

The ``onnx`` package is imported only when a model is exported
(``pip install "aucforest[onnx]"``).
"""
from ._onnx import to_onnx
from ._skl2onnx import register_skl2onnx

__all__ = ["to_onnx", "register_skl2onnx"]
