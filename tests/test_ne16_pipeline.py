"""NE16 overlapped with the cluster (bindings/ne16/pipeline.py): a tile's int32 outputs as row
jobs into two accumulator buffers, NE16 running one while the cores requantize the previous.

The host HAL keeps a job in flight from dispatch to wait (c/tw_ne16.c: the output poisoned at
dispatch, the job computed at wait from its input as it is then), so these tests fail on a loop
that reads an in-flight job's output or writes its input: the C row-job discipline equals the
whole job, one buffer for every job does not; a generated layer whose loop requantizes from the
buffer of the job in flight is not bit-exact."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from tilewise.bindings.ne16 import arith, pipeline

from . import tw_c_build as build
from .test_ne16 import CASES, KIND, NE16_C, _layer, _ptr


@pytest.fixture(scope="module")
def lib():
    so = build.build_shared("ne16_rows", [NE16_C / "tw_ne16.c", build.TESTS_C / "ne16_rows_shim.c"],
                           [NE16_C, build.HAL])
    lib = ctypes.CDLL(str(so))
    lib.shim_ne16_rows.restype = ctypes.c_long
    lib.shim_ne16_inflight.restype = ctypes.c_int32
    return lib


def _dims(kind, job, u, oy, ox):
    h, w, c = u.shape
    return np.array([KIND[kind], job.bits, job.stride, h, w, c, oy, ox, job.k, *job.pads,
                     job.pad_value], np.int32)


def _case(case):
    kind, h, w, c, k, stride, bits = case
    rng = np.random.default_rng(sum(map(ord, str(case))) + 1)
    x, wt, zp_x, job = _layer(rng, kind, h, w, c, k, stride, bits)
    kind = "conv1x1" if kind == "linear" else kind
    packed = np.ascontiguousarray(arith.pack(wt, bits, depthwise=job.depthwise), np.uint8)
    u = np.ascontiguousarray(x + 128, np.uint8)
    want = arith.run(job, u, packed)
    return kind, job, u, packed, want


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}_s{c[5]}_c{c[3]}" for c in CASES])
def test_row_jobs_equal_the_whole_job(lib, case):
    """Row jobs of 1, 2 and 3 rows (tw_ne16_task_rows: input rows and padding per job, stride 2
    included) in two buffers give the whole job's accumulators; one buffer does not (its copy
    reads the poisoned output of the job in flight) whenever there are two jobs or more."""
    kind, job, u, packed, want = _case(case)
    oy, ox = want.shape[:2]
    dims = _dims(kind, job, u, oy, ox)
    for rows in (1, 2, 3):
        for broken in (0, 1):
            out = np.zeros_like(want, dtype=np.int32)
            scratch = np.zeros(2 * rows * ox * job.k, np.int32)
            lib.shim_ne16_rows(_ptr(dims), _ptr(u), _ptr(packed), _ptr(out), rows, broken,
                               _ptr(scratch))
            if broken and -(-oy // rows) > 1:
                assert not np.array_equal(out, want), (rows, "one buffer went unnoticed")
            else:
                assert np.array_equal(out, want), (rows, broken)


def test_in_flight_job_reads_its_input_at_wait(lib):
    """A job's output holds the poison until its wait, and the job sees its input as it is at the
    wait: writing it while the job is in flight changes the result, as on the chip."""
    kind, job, u, packed, want = _case(("conv1x1", 4, 5, 37, 12, 1, 8))
    oy, ox = want.shape[:2]
    dims = _dims(kind, job, u, oy, ox)
    out = np.zeros_like(want, dtype=np.int32)
    poke = int(u[0, 0, 0]) ^ 0xFF
    before = lib.shim_ne16_inflight(_ptr(dims), _ptr(u), _ptr(packed), _ptr(out), poke)
    assert np.uint32(before & 0xFFFFFFFF) == 0xA5A5A5A5
    u2 = u.copy()
    u2[0, 0, 0] = poke
    assert np.array_equal(out, arith.run(job, u2, packed))
    assert not np.array_equal(out, want)


def test_rows_of_a_tile():
    """pipeline.py: whole 3-row bands, at most JOBS_MAX jobs, the last job the rest."""
    oy = np.arange(1, 200)
    r, j, last = pipeline.rows(oy), pipeline.jobs(oy), pipeline.last_rows(oy)
    assert (j <= pipeline.JOBS_MAX).all() and (last >= 1).all() and (last <= r).all()
    assert ((r % 3 == 0) | (r == oy)).all()
    assert ((j - 1) * r + last == oy).all()
    assert [(int(pipeline.rows(n)), int(pipeline.jobs(n))) for n in (1, 3, 4, 16, 25, 48)] == \
        [(1, 1), (3, 1), (3, 2), (3, 6), (6, 5), (6, 8)]


def test_generated_loop_with_one_buffer_is_not_bit_exact(tmp_path, monkeypatch):
    """The generated layer (templates/ne16_s8.c.j2) bit-exact with several row jobs per tile;
    the same loop with the next job dispatched into the buffer being requantized is not."""
    import tilewise.bindings.ne16 as ne16
    from tilewise.pipeline import schedule_network
    from tilewise.validate import make_inputs, validate_network

    from .codegen_cases import LayerSpec, layer_graph
    from .test_ne16 import _ne16_forced

    lg = layer_graph(LayerSpec("conv", c=16, k=16, h=12, w=10, fy=3, fx=3, sy=1, sx=1,
                               pads=(1, 1, 1, 1), mode="tflite"), 1)
    ns = schedule_network(lg, _ne16_forced(), "model")
    i = len(lg.layers) - 1
    assert ns.placement(i).module.name == "ne16"
    assert ns.layer_jobs(i) > ns.schedules[i].n_tiles          # several row jobs per tile
    r, _ = validate_network(ns, tmp_path / "ok", make_inputs(lg, 2))
    j = r.to_json()
    assert j["bit_exact"] and j["jobs_measured"] == j["jobs_predicted"], j["mismatches"][:2]

    render = ne16._render

    def one_buffer(*a, **kw):
        text = render(*a, **kw)
        assert "acc[(j + 1) & 1]" in text
        return text.replace("acc[(j + 1) & 1]", "acc[j & 1]")

    monkeypatch.setattr(ne16, "_render", one_buffer)
    r, _ = validate_network(ns, tmp_path / "broken", make_inputs(lg, 2))
    assert not r.to_json()["bit_exact"]
