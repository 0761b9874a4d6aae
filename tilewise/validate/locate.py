"""Name the first layer, tile and element where generated code departs from the golden model.

A dump build (-DTW_DUMP_LAYERS) writes every layer's output in execution order; they are compared
with `golden.layers.run_layers(keep_all=True)` layer by layer. The first differing element is
given in NHWC coordinates of the layer's output, and the tile that computed it is found from the
layer's schedule (tile index = coordinate // tile size along k, oy, ox), which is how the tiled
loop nest of that layer indexes its tiles.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..golden.layers import run_layers
from ..golden.samples import feeds
from ..ir.layer import LayerGraph
from ..ir.packing import unpack
from ..ir.tensor import dtype_bits, is_sub_byte, nhwc_view, np_dtype


def first_difference(lg: LayerGraph, manifest: dict[str, Any], x: Any,
                     dump: bytes) -> dict[str, Any] | None:
    """The first differing layer of a dump for sample `x` (golden/samples.py), or None when every layer
    matches."""
    golden = run_layers(lg, feeds(lg, x), keep_all=True)
    pos = 0
    for entry, layer in zip(manifest["layers"], lg.layers):
        n = int(entry["bytes"])
        if n == 0 and "chain" in entry:   # a fused chain's producer: its output is never in memory
            continue
        if pos + n > len(dump):
            return {"layer": layer.name, "index": entry["index"], "op": layer.op,
                    "error": "the dump ends before this layer (the run stopped here)"}
        t = lg.tensors[layer.output]
        want = np.asarray(golden[layer.output]).reshape(-1).astype(np.int64)
        if is_sub_byte(t.dtype):   # packed (ir/packing.py): compare the values
            got = unpack(dump[pos:pos + n], want.size, dtype_bits(t.dtype), signed=False)
        else:
            # int8 and uint8 (stored u - 128) as int8; int16 and int32 as themselves
            stored = np.int8 if t.dtype in ("int8", "uint8") else np_dtype(t.dtype)
            got = np.frombuffer(dump[pos:pos + n], dtype=stored)
            if t.dtype == "uint8":   # stored as u - 128 (bindings/portable/common.py)
                want = want - 128
            want = want.astype(stored)
        pos += n
        diff = np.flatnonzero(got != want)
        if diff.size == 0:
            continue
        flat = int(diff[0])
        shape = nhwc_view(tuple(lg.tensors[layer.output].shape))
        coord = [int(v) for v in np.unravel_index(flat, shape)]
        tiles = entry.get("tiles", {})
        tile = {}
        if not entry.get("untiled"):
            for dim, c in (("k", coord[3]), ("oy", coord[1]), ("ox", coord[2])):
                if dim in tiles:
                    tile[dim] = c // int(tiles[dim])
        return {"layer": layer.name, "index": entry["index"], "op": layer.op,
                "file": entry.get("file"), "element": coord, "expected": int(want[flat]),
                "got": int(got[flat]), "tile": tile, "differing_elements": int(diff.size),
                "elements": int(n)}
    return None
