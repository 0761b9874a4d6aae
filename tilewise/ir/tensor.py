"""Tensors of the integer IR: shape, dtype, quantization parameters and (for constants) data.

Layout convention: every 4-D activation is NHWC (TFLite's native order; the ONNX frontend converts
NCHW models at import and records the source layout on the Graph). Convolution weights are stored
[K, FY, FX, C/groups] (OHWI), fully-connected weights [K, C].
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: dtypes the IR knows, with their numpy equivalent
DTYPES: dict[str, type] = {
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "float32": np.float32,
    "bool": np.bool_,
    # sub-byte integers (docs/subbyte.md): values live in an int8 / uint8 container
    # everywhere in Python; only codegen and the C kernels pack them (ir/packing.py)
    "int4": np.int8,
    "uint4": np.uint8,
    "int2": np.int8,
    "uint2": np.uint8,
}

#: bits per element of the sub-byte dtypes (the others: their numpy item size)
SUB_BYTE_BITS: dict[str, int] = {"int4": 4, "uint4": 4, "int2": 2, "uint2": 2}


def np_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of an IR dtype name."""
    return np.dtype(DTYPES[dtype])


def dtype_bits(dtype: str) -> int:
    """Bits per element of an IR dtype (bool counts as 8: one byte per element; int4 / uint4 4,
    int2 / uint2 2: packed, ir/packing.py)."""
    if dtype in SUB_BYTE_BITS:
        return SUB_BYTE_BITS[dtype]
    return np_dtype(dtype).itemsize * 8


def is_sub_byte(dtype: str) -> bool:
    """A packed 4- or 2-bit dtype."""
    return dtype in SUB_BYTE_BITS


def bits_to_bytes(elems, bits: int):
    """Bytes of `elems` elements of `bits` bits, packed (⌈elems·bits/8⌉); ints or numpy arrays."""
    return (elems * bits + 7) // 8


def nhwc_view(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """(N, H, W, C) view of an activation shape (missing dims are 1; rank 3 is N, W, C; beyond rank
    4 the dims between the first and the last two fold into H)."""
    s = tuple(int(d) for d in shape)
    if len(s) > 4:
        return (s[0], int(np.prod(s[1:-2], dtype=np.int64)), s[-2], s[-1])
    if len(s) == 4:
        return s  # type: ignore[return-value]
    if len(s) == 3:
        return (s[0], 1, s[1], s[2])
    if len(s) == 2:
        return (s[0], 1, 1, s[1])
    if len(s) == 1:
        return (1, 1, 1, s[0])
    return (1, 1, 1, 1)


def dtype_range(dtype: str) -> tuple[int, int]:
    """(min, max) of an integer IR dtype."""
    if dtype in SUB_BYTE_BITS:
        b = SUB_BYTE_BITS[dtype]
        return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if dtype.startswith("int") else (0, (1 << b) - 1)
    info = np.iinfo(np_dtype(dtype))
    return int(info.min), int(info.max)


@dataclass(frozen=True, eq=False)
class QuantParams:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per `axis`.

    `scale` and `zero_point` have one entry per tensor (axis None) or one per channel along `axis`.
    Scales are kept as float32 values exactly as the model stores them (TFLite derives its fixed-point
    multipliers from them in double precision).
    """

    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int | None = None

    @property
    def per_channel(self) -> bool:
        return self.axis is not None and len(self.scale) > 1

    def scale_array(self) -> np.ndarray:
        return np.asarray(self.scale, dtype=np.float32)

    def zp_array(self) -> np.ndarray:
        return np.asarray(self.zero_point, dtype=np.int64)

    @property
    def zp(self) -> int:
        """The single zero point of a per-tensor quantized tensor."""
        return int(self.zero_point[0]) if self.zero_point else 0


@dataclass(frozen=True, eq=False)
class Tensor:
    """A value of the graph: an activation (data None) or a constant (data set)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    quant: QuantParams | None = None
    data: np.ndarray | None = field(default=None, repr=False)

    @property
    def is_const(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return bits_to_bytes(self.size, dtype_bits(self.dtype))
