"""Packed sub-byte storage: the byte layout of 4- and 2-bit tensors (docs/subbyte.md).

The contract every kernel family follows (the issue-15 sub-byte contract): a b-bit tensor
(b ∈ {8, 4, 2}) is stored packed little-endian within a byte — element i of the flattened
tensor, in the tensor's stored layout (HWC activations, the binding's weight order), sits in
byte ⌊i·b/8⌋ at bit offset (i mod (8/b))·b, element 0 in the low bits. Rows are not padded. The
bits hold the value's two's complement (signed weights i4 / i2) or the value itself (unsigned
activations u4 / u2); 8-bit tensors are the plain bytes.

Python keeps values as ordinary integers everywhere (golden, IR constants); these functions are
used only where bytes are laid out (codegen constants, the network's input and output files,
validate's reading of dumped layer outputs).
"""

from __future__ import annotations

import numpy as np


def pack(values: np.ndarray, bits: int) -> bytes:
    """The packed bytes of `values` (flattened in C order) at `bits` bits per element (8: bytes)."""
    v = np.asarray(values).reshape(-1).astype(np.int64)
    if bits == 8:
        return (v & 0xFF).astype(np.uint8).tobytes()
    if bits not in (4, 2):
        raise ValueError(f"cannot pack {bits}-bit elements (8, 4 and 2 are packed)")
    per = 8 // bits
    n = v.size
    codes = np.zeros(-(-n // per) * per, dtype=np.int64)
    codes[:n] = v & ((1 << bits) - 1)
    codes = codes.reshape(-1, per) << (np.arange(per, dtype=np.int64) * bits)
    return codes.sum(axis=1).astype(np.uint8).tobytes()


def unpack(data: bytes | np.ndarray, count: int, bits: int, signed: bool) -> np.ndarray:
    """`count` elements of `bits` bits read from packed `data` (int64, sign-extended if `signed`)."""
    raw = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) else \
        np.asarray(data, dtype=np.uint8).reshape(-1)
    if bits == 8:
        v = raw[:count].astype(np.int64)
    else:
        per = 8 // bits
        need = -(-count // per)
        if raw.size < need:
            raise ValueError(f"{raw.size} bytes hold fewer than {count} {bits}-bit elements")
        shifts = np.arange(per, dtype=np.int64) * bits
        v = ((raw[:need].astype(np.int64)[:, None] >> shifts) & ((1 << bits) - 1)).reshape(-1)[:count]
    if signed:
        half = 1 << (bits - 1)
        v = np.where(v >= half, v - 2 * half, v)
    return v


def tensor_bytes(values: np.ndarray, dtype: str) -> bytes:
    """The bytes of a tensor of IR dtype `dtype` as the generated C stores it at the network's
    input and output: packed for the sub-byte dtypes, the element type's bytes otherwise."""
    from .tensor import dtype_bits, is_sub_byte, np_dtype

    if is_sub_byte(dtype):
        return pack(values, dtype_bits(dtype))
    return np.asarray(values).astype(np_dtype(dtype)).tobytes()


def tensor_values(data: bytes | np.ndarray, dtype: str, count: int) -> np.ndarray:
    """`count` values of IR dtype `dtype` read from the bytes `tensor_bytes` lays out (the
    element type's array; sub-byte values in their int8 / uint8 container)."""
    from .tensor import dtype_bits, dtype_range, is_sub_byte, np_dtype

    raw = bytes(data) if not isinstance(data, np.ndarray) else np.asarray(data).tobytes()
    if is_sub_byte(dtype):
        v = unpack(raw, count, dtype_bits(dtype), signed=dtype_range(dtype)[0] < 0)
        return v.astype(np_dtype(dtype))
    return np.frombuffer(raw, dtype=np_dtype(dtype))[:count]
