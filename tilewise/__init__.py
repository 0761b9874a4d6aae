"""tilewise: a deployment compiler from quantized networks (TFLite int8, ONNX) to tiled, bit-exact C.

Pipeline (see ../shared/DESIGN.md): frontend -> ir.Graph -> passes -> Layers -> schedule -> memory
-> codegen -> validate. Each stage is a pure function between frozen dataclasses.
"""

__version__ = "0.1.0"
