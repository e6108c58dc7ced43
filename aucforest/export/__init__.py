"""A fitted forest outside Python: ONNX (`to_onnx`, and a converter for skl2onnx
registered by `register_skl2onnx`) and treelite (`to_treelite`).

The ``onnx`` and ``treelite`` packages are imported only when a model is
exported (``pip install "aucforest[onnx]"``, ``"aucforest[treelite]"``).
"""
from ._onnx import to_onnx
from ._skl2onnx import register_skl2onnx
from ._treelite import to_treelite

__all__ = ["to_onnx", "register_skl2onnx", "to_treelite"]
