"""An exporter's own golden data, layer by layer: DORY's folders and Deeploy's activations.npz.

DORY's folder form (`validate --golden DIR`, NEMO and QuantLab exports): `input.txt` (the network
input), `out_layerN.txt` (the output of DORY's N-th layer: a conv with its requantization and
activation is one layer; pooling, residual add and dense are layers) and, for some, `output.txt`
(the network output). A file is a comment line `# NAME (shape [..]),` then one value per line
(`36.000,`; some files end every line with a backslash), integer codes written as floats. The
values are in HWC order for 3-D shapes — or CHW (nemo/SmartAgri-net prints so): the order is
read from the header's shape against the tensor's, [C, H, W] meaning CHW and [H, W, C] HWC
(a header that fits both with different data takes the folder's order, HWC unless its other files
say CHW); 1-D tensors are [W, C], dense outputs [K], and an input header [1, 200, 200] is C, H, W
with C = 1 (one channel: both orders hold the same data).

Deeploy's `activations.npz` (beside `inputs.npz`, or `validate --activations FILE`): one array per
PyTorch module output, keyed by module name (not ONNX names), in execution order, in the model's
NCHW layout, one sample.

Either list of golden tensors is matched to the tensors the network computes —
graph.meta["onnx_tensors"] (frontend/onnx_lower.py `tensor_map`: every ONNX tensor with an IR
activation, in execution order, its IR name, to_ir_perm and ONNX shape) — by order and shape
(`match`): an order-keeping alignment with the most pairs, a golden tensor pairing with an IR
tensor when its shape fits the tensor's in one of the orders above and its values fit the tensor's
dtype; among equal alignments a golden tensor pairs with the first IR tensor that fits, an IR
tensor with the last golden tensor of a run that fits it (Deeploy lists a convolution's int32
output and its requantized activation, of one shape, where the network keeps the second only), and
an 8-bit golden tensor with an 8-bit IR tensor rather than an int32 one of the same shape (NEMO's
residual sum before its requantization). Given the golden model's values of the network's tensors
(`compare_layers` passes them), a golden tensor first takes a tensor whose golden-model values
equal its own (in any order it fits; the first such in execution order not taken already) —
EEGFormer's activations.npz lists its modules out of execution order — and the alignment pairs
the others among the rest — each between the value-equal pairs that enclose it in both orders
(the longest chain of them in order on both sides: CCT's activations.npz lists a projection's
int32 accumulator, which the network fuses into its dense layer, between two tensors the network
keeps; it pairs with nothing there, not with a later int32 tensor of its size): a value-equal pair
says only where to compare, the generated C's values are still compared against the golden file. A
golden tensor that pairs with none is reported as such — the frontend lost or reshaped it — never
hidden.

Each matched tensor is compared bit for bit with the generated C's values of it (the layer that
outputs it, from the per-layer dump build, -DTW_DUMP_LAYERS) and with the golden model's
(`golden_layers` rows: name, file, ir, elements, mismatches, golden_mismatches).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TilewiseError
from ..ir.graph import Graph
from ..ir.tensor import dtype_range

#: DORY's header: `# NAME (shape [d0, d1, ...]),`
_HEADER = re.compile(r"#\s*(?P<name>.*?)\s*\(\s*shape\s*\[(?P<shape>[^\]]*)\]\s*\)")
_LAYER_FILE = re.compile(r"out_layer(\d+)\.txt\Z")


@dataclass(frozen=True, eq=False)
class GoldenTensor:
    """One tensor of an exporter's golden data: its name (DORY's header, Deeploy's key), where it
    is (a file, or file:key), its shape as given (None: no header) and its values as integers in
    the order given."""

    name: str
    file: str
    shape: tuple[int, ...] | None
    values: np.ndarray

    @property
    def elements(self) -> int:
        return int(self.values.size)


@dataclass(frozen=True, eq=False)
class DoryFolder:
    """DORY's golden folder: input.txt, the out_layerN.txt in N order, output.txt if present."""

    path: Path
    input: GoldenTensor
    layers: tuple[GoldenTensor, ...]
    output: GoldenTensor | None


def _number(text: str, path: Path, line: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise TilewiseError(f"{path}: line {line} holds '{text[:40]}', not a number; DORY's golden "
                            f"files hold one value per line after a '# NAME (shape [..])' "
                            f"header") from None


def read_dory_file(path: Path) -> GoldenTensor:
    """One DORY golden file (module docstring)."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise TilewiseError(f"{path}: cannot read the golden file ({type(e).__name__})") from None
    name, shape, values = path.stem, None, []
    for i, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text:
            continue
        if text.startswith("#"):
            m = _HEADER.match(text)
            if m is not None and not values and shape is None:
                name = m.group("name").strip() or path.stem
                dims = [d.strip() for d in m.group("shape").split(",") if d.strip()]
                try:
                    shape = tuple(int(d) for d in dims)
                except ValueError:
                    raise TilewiseError(f"{path}: the header's shape [{m.group('shape')}] is not "
                                        f"a list of integers") from None
            continue
        text = text.rstrip("\\").strip().rstrip(",").strip()
        if text:
            values.append(_number(text, path, i))
    if not values:
        raise TilewiseError(f"{path}: the golden file holds no values")
    arr = np.asarray(values, dtype=np.float64)
    frac = np.flatnonzero(arr != np.round(arr))
    if frac.size:
        raise TilewiseError(f"{path}: value {int(frac[0]) + 1} is {arr[frac[0]]!r}, not an integer "
                            f"code; DORY's golden files hold integer codes")
    if shape is not None and int(np.prod(shape, dtype=np.int64)) != arr.size:
        raise TilewiseError(f"{path}: the header gives shape {list(shape)} "
                            f"({int(np.prod(shape, dtype=np.int64))} elements) but the file holds "
                            f"{arr.size} values")
    return GoldenTensor(name, str(path), shape, arr.astype(np.int64))


def read_dory_folder(path: str | Path) -> DoryFolder:
    """DORY's golden folder (module docstring); a missing or incomplete folder is one sentence."""
    p = Path(path)
    if not p.is_dir():
        raise TilewiseError(f"--golden {path}: {'not a directory' if p.exists() else 'no such directory'}"
                            f"; give DORY's golden folder (input.txt, out_layerN.txt)")
    if not (p / "input.txt").is_file():
        raise TilewiseError(f"--golden {path}: the folder has no input.txt; DORY's golden folder "
                            f"holds input.txt (the network input) and out_layerN.txt (each layer's "
                            f"output)")
    layers = sorted((int(m.group(1)), f) for f in p.iterdir()
                     if (m := _LAYER_FILE.match(f.name)) and f.is_file())
    output = p / "output.txt"
    if not layers and not output.is_file():
        raise TilewiseError(f"--golden {path}: the folder holds no out_layerN.txt and no "
                            f"output.txt: nothing to compare with")
    return DoryFolder(p, read_dory_file(p / "input.txt"),
                      tuple(read_dory_file(f) for _, f in layers),
                      read_dory_file(output) if output.is_file() else None)


def read_activations(path: str | Path) -> list[GoldenTensor]:
    """Deeploy's activations.npz: one GoldenTensor per array, in the file's order."""
    from .data import _npz_arrays, integral_codes

    p = Path(path)
    if not p.is_file():
        raise TilewiseError(f"--activations {path}: no such file (give Deeploy's activations.npz)")
    try:
        items = _npz_arrays(p, "activations")
    except TilewiseError as e:   # an empty file (Deeploy writes one for single-op kernels): none
        if "holds no arrays" in str(e):
            return []
        raise
    out = []
    for key, arr in items:
        if arr.dtype.kind not in "iuf":
            raise TilewiseError(f"{path}: array '{key}' of dtype {arr.dtype} holds no integer codes")
        vals = integral_codes(arr, f"{path}:{key}", "activations") if arr.dtype.kind == "f" \
            else arr.astype(np.int64)
        out.append(GoldenTensor(key, f"{p.name}:{key}", tuple(int(d) for d in arr.shape),
                                vals.reshape(-1)))
    return out


# -- the order of a golden tensor's values against an ONNX tensor ------------------------------

def orders(shape: tuple[int, ...] | None, elements: int, onnx_shape: tuple[int, ...]) -> list[str]:
    """The orders in which a golden tensor of `shape` (None: no header) may hold an ONNX tensor
    of `onnx_shape`: "CHW" (the ONNX order, with or without the batch), "HWC" (channels last,
    without the batch)."""
    o = tuple(int(d) for d in onnx_shape)
    if elements != int(np.prod(o, dtype=np.int64)):
        return []
    if shape is None:
        return ["HWC" if len(o) >= 3 and o[0] == 1 else "CHW"]
    out = []
    if shape == o or (o and o[0] == 1 and shape == o[1:]):
        out.append("CHW")
    if len(o) >= 3 and o[0] == 1 and shape == (*o[2:], o[1]):
        out.append("HWC")
    return out


def to_onnx(values: np.ndarray, order: str, onnx_shape: tuple[int, ...]) -> np.ndarray:
    """Golden values in `order` as the ONNX tensor (its shape, NCHW)."""
    o = tuple(int(d) for d in onnx_shape)
    if order == "HWC":
        return np.moveaxis(values.reshape(*o[2:], o[1]), -1, 0).reshape(o)
    return values.reshape(o)


def _distinct(t: GoldenTensor, onnx_shape: tuple[int, ...], cands: list[str]) -> bool:
    """Whether the candidate orders give different data (C = 1 or a single pixel: they agree)."""
    if len(cands) < 2:
        return False
    arrays = [to_onnx(t.values, c, onnx_shape) for c in cands]
    return any(not np.array_equal(arrays[0], a) for a in arrays[1:])


# -- matching golden tensors to the network's -------------------------------------------------

@dataclass(frozen=True)
class Match:
    """A golden tensor and the network tensor it pairs with (None: none), in `order`."""

    golden: GoldenTensor
    tensor: dict[str, Any] | None = None
    order: str | None = None


def candidates(graph: Graph) -> list[dict[str, Any]]:
    """The network's tensors a golden layer may be: graph.meta["onnx_tensors"] without the
    network inputs, each with its IR dtype."""
    entries = graph.meta.get("onnx_tensors")
    if entries is None:
        raise TilewiseError(f"{graph.source or graph.name}: per-layer golden data needs an ONNX "
                            f"model (the frontend's map of ONNX tensors to the network's)")
    return [{**e, "dtype": graph.tensors[e["ir"]].dtype} for e in entries
            if e["ir"] not in graph.inputs and e["ir"] in graph.tensors]


def _fits(t: GoldenTensor, c: dict[str, Any]) -> bool:
    if not orders(t.shape, t.elements, tuple(c["onnx_shape"])):
        return False
    lo, hi = dtype_range(c["dtype"])
    return lo <= int(t.values.min()) and int(t.values.max()) <= hi


def _penalty(t: GoldenTensor, c: dict[str, Any]) -> int:
    """1 when an 8-bit golden tensor would pair with an int32 network tensor."""
    small = -128 <= int(t.values.min()) and int(t.values.max()) <= 255
    return int(small and c["dtype"] == "int32")


def _aligned(golden: Sequence[GoldenTensor], cands: Sequence[dict[str, Any]]) -> dict[int, int]:
    """The order-keeping alignment (module docstring): golden index -> candidate index."""
    n, m = len(golden), len(cands)
    # best[i][j]: (pairs, -penalty) of golden[i:] against cands[j:]
    best = [[(0, 0)] * (m + 1) for _ in range(n + 1)]
    fits = [[_fits(g, c) for c in cands] for g in golden]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            opts = [best[i + 1][j], best[i][j + 1]]
            if fits[i][j]:
                p, q = best[i + 1][j + 1]
                opts.append((p + 1, q - _penalty(golden[i], cands[j])))
            best[i][j] = max(opts)
    pairs: dict[int, int] = {}
    i = j = 0
    while i < n and j < m:
        here = best[i][j]
        if best[i + 1][j] == here:          # a later golden tensor takes this one's place
            i += 1
        elif fits[i][j] and (best[i + 1][j + 1][0] + 1,
                             best[i + 1][j + 1][1] - _penalty(golden[i], cands[j])) == here:
            pairs[i] = j
            i += 1
            j += 1
        else:
            j += 1
    return pairs


def _chain(anchors: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of (golden, candidate) pairs increasing on both sides, from pairs sorted by
    golden index (the first such run where several are longest)."""
    best: list[list[tuple[int, int]]] = []
    for k, (_, c) in enumerate(anchors):
        prev = max((best[i] for i in range(k) if anchors[i][1] < c), key=len, default=[])
        best.append([*prev, anchors[k]])
    return max(best, key=len, default=[])


def _equal_order(t: GoldenTensor, c: dict[str, Any],
                 values: dict[str, np.ndarray]) -> str | None:
    """The order in which `t` equals the golden model's values of candidate `c` (None: none)."""
    got = values.get(c["ir"])
    if got is None or not _fits(t, c):
        return None
    got = np.asarray(got, np.int64).reshape(-1)
    shape = tuple(c["onnx_shape"])
    for order in orders(t.shape, t.elements, shape):
        want = to_onnx(t.values, order, shape).transpose(tuple(c["to_ir_perm"])).reshape(-1)
        if np.array_equal(got, want):
            return order
    return None


def match(golden: Sequence[GoldenTensor], cands: Sequence[dict[str, Any]],
          folder_order: str | None = None,
          values: dict[str, np.ndarray] | None = None) -> list[Match]:
    """Pair golden tensors with network tensors (module docstring): by the golden model's
    `values` (IR tensor -> IR-order values) where given and equal, the rest in execution order;
    `folder_order` resolves a header that fits HWC and CHW alike (None: from the other pairs,
    HWC unless they say otherwise)."""
    equal: dict[int, tuple[int, str]] = {}
    if values:
        taken: set[int] = set()
        for gi, g in enumerate(golden):
            for cj, c in enumerate(cands):
                if cj not in taken and (order := _equal_order(g, c, values)) is not None:
                    equal[gi] = (cj, order)
                    taken.add(cj)
                    break
    used = {cj for cj, _ in equal.values()}
    pairs = {gi: cj for gi, (cj, _) in equal.items()}
    # the rest aligned between consecutive anchors: the longest chain of value-equal pairs in
    # order on both sides (a golden tensor listed between two of them pairs between their tensors)
    chain = _chain(sorted((gi, cj) for gi, (cj, _) in equal.items()))
    bounds = [(-1, -1), *chain, (len(golden), len(cands))]
    for (g0, c0), (g1, c1) in zip(bounds, bounds[1:]):
        rest_g = [gi for gi in range(g0 + 1, g1) if gi not in equal]
        rest_c = [cj for cj in range(c0 + 1, c1) if cj not in used]
        aligned = _aligned([golden[gi] for gi in rest_g], [cands[cj] for cj in rest_c])
        pairs.update({rest_g[a]: rest_c[b] for a, b in aligned.items()})
    # the folder's order, from the pairs whose header says it where it matters
    seen = []
    for gi, cj in pairs.items():
        shape = tuple(cands[cj]["onnx_shape"])
        cs = orders(golden[gi].shape, golden[gi].elements, shape)
        if len(cs) == 1 and _both(shape) and _distinct(golden[gi], shape, ["CHW", "HWC"]):
            seen.append(cs[0])
    default = folder_order or ("CHW" if seen.count("CHW") > seen.count("HWC") else "HWC")
    out = []
    for gi, g in enumerate(golden):
        if gi not in pairs:
            out.append(Match(g))
            continue
        c = cands[pairs[gi]]
        cs = orders(g.shape, g.elements, tuple(c["onnx_shape"]))
        order = default if default in cs and _distinct(g, tuple(c["onnx_shape"]), cs) else cs[0]
        if gi in equal and _distinct(g, tuple(c["onnx_shape"]), cs):
            order = equal[gi][1]
        out.append(Match(g, c, order))
    return out


def _both(onnx_shape: tuple[int, ...]) -> bool:
    """Whether a tensor of this ONNX shape can be written HWC as well as CHW."""
    return len(onnx_shape) >= 3 and onnx_shape[0] == 1


def check_counts(golden: Sequence[GoldenTensor], graph: Graph, what: str) -> None:
    """A golden file whose element count is no tensor's of the network is not this network's
    data: one sentence."""
    sizes = {int(np.prod(e["onnx_shape"], dtype=np.int64))
             for e in graph.meta.get("onnx_tensors", ())}
    for g in golden:
        if g.elements not in sizes:
            raise TilewiseError(f"{g.file}: {g.elements} values, and no tensor of the network has "
                                f"{g.elements} elements ({what} of another network?)")


def input_array(t: GoldenTensor, onnx_shape: tuple[int, ...], what: str) -> np.ndarray:
    """The golden input in the ONNX layout (its shape), from DORY's file in HWC or CHW order."""
    cs = orders(t.shape, t.elements, onnx_shape)
    if not cs:
        raise TilewiseError(f"{t.file}: {what} of shape "
                            f"{list(t.shape) if t.shape else t.elements} does not fit the model's "
                            f"{what} {list(onnx_shape)} (as [H, W, C] or [C, H, W])")
    order = "HWC" if "HWC" in cs else cs[0]
    return to_onnx(t.values, order, onnx_shape)


# -- comparing ----------------------------------------------------------------------------------

def unmatched_note(t: GoldenTensor, cands: Sequence[dict[str, Any]]) -> str:
    """Why a golden tensor pairs with no network tensor, as a report note."""
    shaped = [c for c in cands if orders(t.shape, t.elements, tuple(c["onnx_shape"]))]
    if not shaped:
        return ("matches no tensor of the network in shape: the frontend lost or reshaped it "
                "(a frontend problem to report)")
    if not any(_fits(t, c) for c in shaped):
        return (f"its values [{int(t.values.min())}, {int(t.values.max())}] fit no network tensor "
                f"of its shape ({', '.join(sorted({c['dtype'] for c in shaped}))}): an "
                f"intermediate a layer computes inside (e.g. an accumulator before its "
                f"requantization) that the network does not keep")
    return ("the network's tensors of its shape pair with other golden tensors in order: the "
            "network keeps no tensor of its own for it")


def rows(matches: Sequence[Match], c_values: dict[str, np.ndarray],
         golden_values: dict[str, np.ndarray], layer_of: dict[str, tuple[int, str]],
         cands: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """The `golden_layers` rows: per golden tensor its match and the mismatching elements of the
    C's values (`c_values`, IR tensor -> flat IR-order values; missing: the generated C keeps no
    such tensor) and of the golden model's."""
    out = []
    for mt in matches:
        g = mt.golden
        row: dict[str, Any] = {"name": g.name, "file": g.file,
                               "shape": list(g.shape) if g.shape is not None else None,
                               "elements": g.elements, "ir": None, "onnx": None, "order": None,
                               "layer": None, "mismatches": None, "golden_mismatches": None}
        if mt.tensor is None:
            row["note"] = unmatched_note(g, cands)
            out.append(row)
            continue
        c = mt.tensor
        want = to_onnx(g.values, mt.order, tuple(c["onnx_shape"])).transpose(
            tuple(c["to_ir_perm"])).reshape(-1)
        row.update(ir=c["ir"], onnx=c["onnx"], order=mt.order)
        if c["ir"] in layer_of:
            idx, name = layer_of[c["ir"]]
            row["layer"] = {"index": idx, "name": name}
        got = c_values.get(c["ir"])
        if got is not None:
            row["mismatches"] = int((np.asarray(got, np.int64).reshape(-1) != want).sum())
        else:
            row["note"] = "the generated C keeps no such tensor (a layer fuses it)"
        gold = golden_values.get(c["ir"])
        if gold is not None:
            row["golden_mismatches"] = int((np.asarray(gold, np.int64).reshape(-1) != want).sum())
        out.append(row)
    return out


def compare_layers(project, lg, graph: Graph, x: Any, golden: Sequence[GoldenTensor],
                   cache: str | Path | None = None) -> list[dict[str, Any]]:
    """Match `golden` (execution order) to the network's tensors and compare each with the
    generated C's value of it — the dump build of `project` run on sample `x` — and the golden
    model's: the `golden_layers` rows."""
    from ..golden.layers import run_layers
    from ..golden.samples import feeds
    from .build import build_host
    from .layer_errors import split_dump
    from .run import run_harness

    cands = candidates(graph)
    values = {k: np.asarray(v) for k, v in run_layers(lg, feeds(lg, x), keep_all=True).items()}
    matches = match(golden, cands, values=values)
    exe = build_host(project, dump=True, cache=cache)
    res = run_harness(project, exe, [x], dump=True)
    if res.dump is None:
        raise TilewiseError(f"{project.path}: the per-layer dump run wrote no layer outputs "
                            f"({res.error or 'no dump file'})")
    dumped = split_dump(lg, project.manifest, res.dump, 1)
    # a fused chain's producer keeps no tensor (manifest bytes 0): not compared
    c_values = {layer.output: vals[0] for layer, vals, e in zip(lg.layers, dumped,
                                                                project.manifest["layers"])
                if int(e["bytes"]) or "chain" not in e}
    layer_of = {layer.output: (i, layer.name) for i, layer in enumerate(lg.layers)}
    return rows(matches, c_values, values, layer_of, cands)


def summary(rows_: Sequence[dict[str, Any]]) -> list[str]:
    """Text lines of the `golden_layers` rows: the count compared, the first wrong layer, and
    every golden tensor that could not be compared."""
    compared = [r for r in rows_ if r["mismatches"] is not None]
    wrong = [r for r in compared if r["mismatches"]]
    lines = [f"  golden data: {len(compared)} of {len(rows_)} golden tensors compared with the "
             f"generated C, {len(wrong)} differ"
             + (f"; golden model differs on {sum(1 for r in rows_ if r['golden_mismatches'])}"
                if any(r["golden_mismatches"] for r in rows_) else "")]
    if wrong:
        r = wrong[0]
        where = f", layer {r['layer']['index']} '{r['layer']['name']}'" if r["layer"] else ""
        lines.append(f"  first wrong layer: {Path(r['file']).name} '{r['name']}' = tensor "
                     f"'{r['ir']}'{where}: {r['mismatches']} of {r['elements']} elements differ "
                     f"(golden model: {r['golden_mismatches']})")
    for r in rows_:
        if r["mismatches"] is None:
            lines.append(f"  not compared: {Path(r['file']).name} '{r['name']}' "
                         f"{r['shape'] if r['shape'] is not None else ''}: {r.get('note')}")
    return lines


__all__ = ["DoryFolder", "GoldenTensor", "Match", "candidates", "check_counts", "compare_layers",
           "input_array", "match", "orders", "read_activations", "read_dory_file",
           "read_dory_folder", "rows", "summary", "to_onnx", "unmatched_note"]
