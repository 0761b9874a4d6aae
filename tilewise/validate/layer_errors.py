"""Per-layer error statistics of the generated C against the golden model, on the user's inputs.

The project is rebuilt with -DTW_DUMP_LAYERS (build.py) and run on every input (run.py): the
harness writes every layer's output, in execution order, input after input. Each layer's dumped
values are held against `golden.layers.run_layers(keep_all=True)` on the same input, over all
inputs, as one CSV row (accumulated chunk by chunk, `LayerErrors`): elements compared, mismatching elements and the
largest integer difference, then in real terms — each layer's output dequantized with its own scale and zero point
(integer units where the tensor has no per-tensor quantization, `scale` left empty) — the largest
absolute difference, rmse, mean error (C − golden) and cosine similarity (metrics.py). A bit-exact
network has 0 mismatches and cos 1 on every layer; a deviation shows in which layer it starts and
how it propagates.

With a float model (`validate --float-model`, float_layers.py) each row also holds the C's
layer output against the float model's value of the same tensor, in real units (FLOAT_COLUMNS).

The dump stores int8 and uint8 outputs as int8 (uint8 as u − 128, bindings/portable/common.py), any
other dtype as itself (locate.py reads the same dump for one input).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..codegen.project import Project
from ..errors import TilewiseError
from ..golden.layers import run_layers
from ..golden.samples import feeds
from ..ir.layer import LayerGraph
from ..ir.packing import unpack
from ..ir.tensor import dtype_bits, is_sub_byte, np_dtype
from . import metrics as M
from .build import build_host
from .csv_files import write_csv
from .float_layers import FLOAT_COLUMNS, FloatReference
from .run import run_harness

LAYER_COLUMNS = ("index", "name", "op", "module", "binding", "dtype", "scale", "elements",
                 "mismatches", "max_abs_diff_q", "max_abs_diff", "rmse", "mean_error", "cos")


def _stored(dtype: str) -> np.dtype:
    return np.dtype(np.int8) if dtype in ("int8", "uint8") else np_dtype(dtype)


def split_dump(lg: LayerGraph, manifest: dict[str, Any], dump: bytes, n: int) -> list[list[np.ndarray]]:
    """The dump of n inputs as [layer][input] integer arrays (values as the IR holds them)."""
    sizes = [int(e["bytes"]) for e in manifest["layers"]]
    per_input = sum(sizes)
    if len(dump) != per_input * n:
        raise TilewiseError(f"the layer dump holds {len(dump)} bytes, not the {per_input * n} of "
                            f"{n} inputs: the dump run stopped early (rerun with -o DIR to keep "
                            f"the project and run its network_host_dump)")
    out: list[list[np.ndarray]] = [[] for _ in sizes]
    pos = 0
    for _ in range(n):
        for li, (size, layer) in enumerate(zip(sizes, lg.layers)):
            t = lg.tensors[layer.output]
            dt = t.dtype
            if is_sub_byte(dt):   # packed (ir/packing.py)
                v = unpack(dump[pos:pos + size], t.size, dtype_bits(dt), signed=False)
            else:
                v = np.frombuffer(dump[pos:pos + size], dtype=_stored(dt)).astype(np.int64)
            if dt == "uint8":
                v = v + 128
            out[li].append(v)
            pos += size
    return out


#: layer-dump bytes per harness run at most (the dump and its int64 copy stay a few tens of MB)
DUMP_BYTES = 16 << 20


class LayerErrors:
    """Per-layer error statistics accumulated over chunks of inputs (`add`), as LAYER_COLUMNS
    rows (`rows`): sums of the dequantized differences, squares and products, so that any number
    of inputs takes one chunk's memory. The dump build is made once."""

    def __init__(self, project: Project, lg: LayerGraph, cache: str | Path | None = None,
                 floats: FloatReference | None = None) -> None:
        self.project, self.lg, self.floats = project, lg, floats
        self.exe = build_host(project, dump=True, cache=cache)
        per_input = sum(int(e["bytes"]) for e in project.manifest["layers"])
        self.per_run = max(1, DUMP_BYTES // max(per_input, 1))
        self.params = []
        for layer in lg.layers:
            q = lg.tensors[layer.output].quant
            per_tensor = q is not None and len(q.scale) == 1
            self.params.append((float(q.scale[0]), q.zp) if per_tensor else None)
        n = len(lg.layers)
        self.elements = np.zeros(n, np.int64)
        self.mismatches = np.zeros(n, np.int64)
        self.max_q = np.zeros(n, np.int64)
        self.max_abs = np.zeros(n)
        self.sums = np.zeros((n, 5))   # Σd, Σd², Σcg, Σc², Σg over the dequantized values

    def add(self, inputs: Sequence[Any]) -> None:
        """Run the dump build on `inputs` (in runs of at most DUMP_BYTES of dump) and add them."""
        for i in range(0, len(inputs), self.per_run):
            self._add_run(inputs[i:i + self.per_run])

    def _add_run(self, inputs: Sequence[Any]) -> None:
        lg = self.lg
        res = run_harness(self.project, self.exe, inputs, dump=True)
        if res.dump is None:
            raise TilewiseError(f"{self.project.path}: the per-layer dump run wrote no layer "
                                f"outputs ({res.error or 'no dump file'})")
        got = split_dump(lg, self.project.manifest, res.dump, len(inputs))
        goldens = [run_layers(lg, feeds(lg, x), keep_all=True) for x in inputs]
        floats = [self.floats.values(x) for x in inputs] if self.floats is not None else None
        entries = self.project.manifest["layers"]
        for li, layer in enumerate(lg.layers):
            if int(entries[li]["bytes"]) == 0 and "chain" in entries[li]:
                continue     # a fused chain's producer: its output is never in memory (no row)
            c = np.concatenate(got[li])
            g = np.concatenate([np.asarray(gd[layer.output]).reshape(-1).astype(np.int64)
                                for gd in goldens])
            scale, zp = self.params[li] or (1.0, 0)
            cf, gf = M.dequantize(c, scale, zp), M.dequantize(g, scale, zp)
            d = cf - gf
            self.elements[li] += c.size
            self.mismatches[li] += int((c != g).sum())
            self.max_q[li] = max(self.max_q[li], int(np.abs(c - g).max(initial=0)))
            self.max_abs[li] = max(self.max_abs[li], float(np.abs(d).max(initial=0.0)))
            self.sums[li] += (d.sum(), (d * d).sum(), (cf * gf).sum(), (cf * cf).sum(),
                              (gf * gf).sum())
            if floats is not None and floats[0][li] is not None:
                self.floats.add(li, c, [f[li] for f in floats])

    def rows(self) -> list[dict[str, Any]]:
        """One row (LAYER_COLUMNS) per layer: the C's per-layer outputs vs the golden model's."""
        rows = []
        for li, (entry, layer) in enumerate(zip(self.project.manifest["layers"], self.lg.layers)):
            n = int(self.elements[li])
            sd, sdd, scg, scc, sgg = (float(v) for v in self.sums[li])
            rows.append({
                "index": entry["index"], "name": layer.name, "op": layer.op,
                "module": entry.get("module"), "binding": entry.get("binding"),
                "dtype": self.lg.tensors[layer.output].dtype,
                "scale": self.params[li][0] if self.params[li] else None, "elements": n,
                "mismatches": int(self.mismatches[li]), "max_abs_diff_q": int(self.max_q[li]),
                "max_abs_diff": float(self.max_abs[li]),
                "rmse": float(np.sqrt(sdd / n)) if n else 0.0,
                "mean_error": sd / n if n else 0.0, "cos": M.cos_of_sums(scg, scc, sgg),
                **(self.floats.columns(li) if self.floats is not None else {}),
            })
        return rows


def write_layer_csv(rows: list[dict[str, Any]], path: str | Path) -> None:
    """The rows as CSV: LAYER_COLUMNS, and FLOAT_COLUMNS when the rows hold them."""
    float_cols = FLOAT_COLUMNS if rows and FLOAT_COLUMNS[0] in rows[0] else ()
    write_csv(rows, LAYER_COLUMNS + float_cols, path, "per-layer error CSV")


__all__ = ["LAYER_COLUMNS", "LayerErrors", "split_dump", "write_layer_csv"]
