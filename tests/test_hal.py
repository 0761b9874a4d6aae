"""The HALs shipped with generated projects (tilewise/codegen/c/tw_hal).

Host HAL (tw_hal_host.c), through ctypes: a DMA transfer leaves garbage (the documented pattern) in
its destination until its wait, 1D/2D/3D strided copies in both directions land exactly where numpy
slicing says, writes to an in-flight source are counted as races, double waits as bad waits, and
the transfer/byte/chunk counters match the copies made; fork gives each core its id and the team
size, and the barrier holds every core at each round.
PULP HAL (tw_hal_pulp.c): compiles against the PMSIS stub (tests/pmsis_stub), and with a host fake
of the PMSIS DMA (tests/c/pmsis_fake.c) its decomposition of 3D copies into cluster-DMA commands
moves the right bytes, keeps within the command size and ring limits, and moves nothing before the
wait.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from . import tw_c_build as build

P, U32, I = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int
L2_TO_L1, L1_TO_L2 = 0, 1


class Stats(ctypes.Structure):
    _fields_ = [("dma_transfers", ctypes.c_uint64), ("dma_bytes", ctypes.c_uint64),
                ("dma_chunks", ctypes.c_uint64), ("dma_waits", ctypes.c_uint64),
                ("dma_bad_waits", ctypes.c_uint64), ("dma_races", ctypes.c_uint64),
                ("dma_pending", ctypes.c_uint32), ("dma_max_pending", ctypes.c_uint32),
                ("forks", ctypes.c_uint64), ("barriers", ctypes.c_uint64)]


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    lib.tw_dma_copy_3d.restype = U32
    lib.tw_dma_copy_3d.argtypes = [P, P, U32, U32, U32, U32, U32, U32, U32, I]
    lib.tw_dma_wait.argtypes = [U32]
    lib.tw_hal_get_stats.argtypes = [ctypes.POINTER(Stats)]
    return lib


@pytest.fixture(scope="module")
def host():
    path = build.build_shared("twhalhost", [build.HAL / "tw_hal_host.c", build.TESTS_C / "hal_shim.c"], [build.HAL])
    lib = _declare(ctypes.CDLL(str(path)))
    # tw_dma_copy_1d / _2d are static inline in tw_hal.h: hal_shim.c calls them
    lib.hal_copy_1d.restype = U32
    lib.hal_copy_1d.argtypes = [P, P, U32, I]
    lib.hal_copy_2d.restype = U32
    lib.hal_copy_2d.argtypes = [P, P, U32, U32, U32, U32, I]
    lib.tw_hal_host_garbage.restype = ctypes.c_uint8
    lib.tw_hal_host_garbage.argtypes = [U32, U32]
    lib.hal_team_check.argtypes = [I, I, P, P]
    return lib


def stats(lib) -> Stats:
    s = Stats()
    lib.tw_hal_get_stats(ctypes.byref(s))
    return s


def p(a: np.ndarray, offset: int = 0):
    return ctypes.c_void_p(a.ctypes.data + offset)


def garbage(lib, tid: int, n: int) -> np.ndarray:
    return np.array([lib.tw_hal_host_garbage(tid, i) for i in range(n)], dtype=np.uint8)


# ------------------------------------------------------------------------------ host DMA

def test_destination_is_garbage_until_wait(host):
    rng = np.random.default_rng(0)
    l2 = rng.integers(0, 256, 300, dtype=np.uint8)
    l1 = np.zeros(300, dtype=np.uint8)
    tid = host.hal_copy_1d(p(l1), p(l2), 300, L2_TO_L1)
    assert tid != 0
    assert np.array_equal(l1, garbage(host, tid, 300))      # a read before the wait sees the pattern
    assert (l1 != l2).mean() > 0.9
    l1[:10] = 7                                              # a write before the wait is lost
    host.tw_dma_wait(tid)
    assert np.array_equal(l1, l2)
    # the other direction, and a second transfer gets a different pattern
    back = np.zeros(300, dtype=np.uint8)
    tid2 = host.hal_copy_1d(p(l1), p(back), 300, L1_TO_L2)
    assert tid2 != tid
    assert np.array_equal(back, garbage(host, tid2, 300))
    assert not np.array_equal(garbage(host, tid, 300), garbage(host, tid2, 300))
    host.tw_dma_wait(tid2)
    assert np.array_equal(back, l2)


def test_2d_and_3d_strided_copies_both_ways(host):
    rng = np.random.default_rng(1)
    H, W, C = 9, 11, 6
    fmap = rng.integers(0, 256, (H, W, C), dtype=np.uint8)         # an HWC map in L2
    y0, x0, c0, h, w, c = 2, 3, 1, 4, 5, 3
    # 3D: an h x w x c tile (channel slice) into dense L1
    tile = np.zeros((h, w, c), dtype=np.uint8)
    off = ((y0 * W + x0) * C + c0)
    tid = host.tw_dma_copy_3d(p(tile), p(fmap, off), c, w, h, c, w * c, C, W * C, L2_TO_L1)
    host.tw_dma_wait(tid)
    assert np.array_equal(tile, fmap[y0:y0 + h, x0:x0 + w, c0:c0 + c])
    # 2D: full-channel rows of the map (rows of w*C bytes, L2 stride W*C)
    rows = np.zeros((h, w, C), dtype=np.uint8)
    tid = host.hal_copy_2d(p(rows), p(fmap, (y0 * W + x0) * C), w * C, h, w * C, W * C, L2_TO_L1)
    host.tw_dma_wait(tid)
    assert np.array_equal(rows, fmap[y0:y0 + h, x0:x0 + w])
    # 3D back: the tile into another L2 map, both sides strided (L1 tile inside a wider buffer)
    big_l1 = rng.integers(0, 256, (h, w + 2, c + 1), dtype=np.uint8)
    out = np.zeros_like(fmap)
    tid = host.tw_dma_copy_3d(p(big_l1, (1 * (c + 1)) + 1), p(out, off), c, w, h,
                              c + 1, (w + 2) * (c + 1), C, W * C, L1_TO_L2)
    host.tw_dma_wait(tid)
    want = np.zeros_like(fmap)
    want[y0:y0 + h, x0:x0 + w, c0:c0 + c] = big_l1[:, 1:w + 1, 1:c + 1]
    assert np.array_equal(out, want)                               # nothing outside the tile touched


def test_counters(host):
    host.tw_hal_reset_stats()
    a = np.zeros(4096, dtype=np.uint8)
    b = np.arange(4096, dtype=np.uint32).astype(np.uint8)
    ids = [
        host.hal_copy_1d(p(a), p(b), 100, L2_TO_L1),                                   # 1 chunk
        host.hal_copy_2d(p(a, 200), p(b, 200), 10, 8, 10, 64, L2_TO_L1),               # 8 chunks
        host.hal_copy_2d(p(a, 1600), p(b, 1600), 16, 4, 32, 16, L1_TO_L2),             # L2 packed: 1
        host.tw_dma_copy_3d(p(a, 800), p(b, 800), 5, 3, 2, 5, 15, 9, 100, L2_TO_L1),      # 6 chunks
        host.tw_dma_copy_3d(p(a, 1200), p(b, 1200), 4, 3, 5, 4, 12, 4, 12, L2_TO_L1),     # packed: 1
    ]
    s = stats(host)
    assert (s.dma_transfers, s.dma_pending, s.dma_max_pending) == (5, 5, 5)
    assert s.dma_bytes == 100 + 80 + 64 + 30 + 60
    assert s.dma_chunks == 1 + 8 + 1 + 6 + 1
    for tid in ids:
        host.tw_dma_wait(tid)
    s = stats(host)
    assert (s.dma_waits, s.dma_pending, s.dma_max_pending, s.dma_bad_waits, s.dma_races) == (5, 0, 5, 0, 0)


def test_races_and_bad_waits_are_counted(host):
    host.tw_hal_reset_stats()
    l2 = np.arange(64, dtype=np.uint8)
    l1 = np.zeros(64, dtype=np.uint8)
    tid = host.hal_copy_1d(p(l1), p(l2), 64, L2_TO_L1)
    l2[5] = 200                                # the program writes the source of an in-flight copy
    host.tw_dma_wait(tid)
    host.tw_dma_wait(tid)                      # waited twice
    host.tw_dma_wait(0)                        # never a valid id
    s = stats(host)
    assert (s.dma_races, s.dma_bad_waits, s.dma_waits) == (1, 2, 1)
    assert l1[5] == 200                        # the copy happens at the wait


def test_missing_wait_in_double_buffering_gives_wrong_result(host):
    """A double-buffered sum over tiles: with the wait it is right, computing before it is not."""
    rng = np.random.default_rng(3)
    data = rng.integers(0, 100, 8 * 32, dtype=np.uint8)
    bufs = [np.zeros(32, dtype=np.uint8), np.zeros(32, dtype=np.uint8)]

    def pipeline(wait_first: bool) -> int:
        total = 0
        pending = host.hal_copy_1d(p(bufs[0]), p(data), 32, L2_TO_L1)
        for t in range(8):
            cur = bufs[t % 2]
            if wait_first:
                host.tw_dma_wait(pending)
            nxt = host.hal_copy_1d(p(bufs[(t + 1) % 2]), p(data, 32 * (t + 1)), 32, L2_TO_L1) if t < 7 else None
            total += int(cur.astype(np.int64).sum())
            if not wait_first:
                host.tw_dma_wait(pending)
            pending = nxt
        return total

    assert pipeline(True) == int(data.astype(np.int64).sum())
    assert pipeline(False) != int(data.astype(np.int64).sum())


# ------------------------------------------------------------------------------ host cores

@pytest.mark.parametrize("n", [1, 3, 8])
def test_fork_ids_and_barrier(host, n):
    host.tw_hal_reset_stats()
    ids = np.full(n, -1, dtype=np.int32)
    counts = np.full(n, -1, dtype=np.int32)
    assert host.hal_team_check(n, 20, p(ids), p(counts)) == 0
    assert sorted(ids) == list(range(n))
    assert (counts == n).all()
    s = stats(host)
    assert (s.forks, s.barriers) == (1, 40)
    assert (host.tw_core_id(), host.tw_core_count()) == (0, 1)   # outside a fork


# ------------------------------------------------------------------------------ PULP HAL

def test_pulp_hal_compiles_against_pmsis_stub():
    build.compile_objects([build.HAL / "tw_hal_pulp.c"], [build.PMSIS_STUB, build.HAL], ("-fsyntax-only",))
    build.compile_objects([build.HAL / "tw_hal_pulp.c"], [build.PMSIS_STUB, build.HAL], ("-O2",))


@pytest.fixture(scope="module")
def pulp():
    path = build.build_shared(
        "twhalpulp", [build.HAL / "tw_hal_pulp.c", build.TESTS_C / "pmsis_fake.c"], [build.PMSIS_STUB, build.HAL],
        ("-DTW_PULP_DMA_RING=4", "-DTW_PULP_DMA_MAX_BYTES=64"))
    lib = _declare(ctypes.CDLL(str(path)))
    for name in ("pmsis_fake_commands", "pmsis_fake_commands_2d", "pmsis_fake_in_flight",
                 "pmsis_fake_max_in_flight", "pmsis_fake_bad"):
        getattr(lib, name).restype = I
    lib.pmsis_fake_max_size.restype = U32
    lib.pmsis_fake_set_base.argtypes = [P]
    return lib


def arena_4g(nbytes: int) -> np.ndarray:
    """A buffer whose addresses share their upper 32 bits (PULP addresses are 32-bit)."""
    for _ in range(8):
        a = np.zeros(nbytes, dtype=np.uint8)
        if a.ctypes.data >> 32 == (a.ctypes.data + nbytes) >> 32:
            return a
    raise RuntimeError("no buffer inside one 4 GiB window")


# (row_bytes, rows, planes, l1 row/plane strides, l2 row/plane strides): packed, 2D, 3D, L1-strided,
# rows longer than one command (64 B), 2D copies split into several commands, and more commands
# than the ring (4) holds
PULP_COPIES = [
    (40, 1, 1, 40, 40, 40, 40),
    (12, 5, 1, 12, 60, 30, 150),
    (6, 4, 3, 6, 24, 20, 100),
    (7, 3, 2, 9, 30, 11, 40),
    (100, 3, 2, 100, 300, 150, 500),
    (16, 4, 2, 16, 64, 16, 64),
    (10, 9, 1, 10, 90, 25, 300),
]


@pytest.mark.parametrize("geom", PULP_COPIES)
@pytest.mark.parametrize("direction", [L2_TO_L1, L1_TO_L2])
def test_pulp_hal_dma_decomposition(pulp, geom, direction):
    row, rows, planes, l1r, l1p, l2r, l2p = geom
    arena = arena_4g(1 << 16)
    pulp.pmsis_fake_set_base(p(arena))
    pulp.pmsis_fake_reset()
    rng = np.random.default_rng(sum(geom) + direction)
    arena[:] = rng.integers(0, 256, arena.size, dtype=np.uint8)
    l1_off, l2_off = 1000, 20000
    before = arena.copy()
    src_off, dst_off = (l2_off, l1_off) if direction == L2_TO_L1 else (l1_off, l2_off)
    src_r, src_p, dst_r, dst_p = (l2r, l2p, l1r, l1p) if direction == L2_TO_L1 else (l1r, l1p, l2r, l2p)
    tid = pulp.tw_dma_copy_3d(p(arena, l1_off), p(arena, l2_off), row, rows, planes, l1r, l1p, l2r, l2p, direction)
    n_cmds = pulp.pmsis_fake_commands()
    if n_cmds <= 4:                                  # everything still in flight: nothing moved yet
        assert np.array_equal(arena, before)
    pulp.tw_dma_wait(tid)
    want = before.copy()
    for pl in range(planes):
        for r in range(rows):
            s, d = src_off + pl * src_p + r * src_r, dst_off + pl * dst_p + r * dst_r
            want[d:d + row] = before[s:s + row]
    assert np.array_equal(arena, want)
    assert pulp.pmsis_fake_bad() == 0
    assert pulp.pmsis_fake_in_flight() == 0
    assert pulp.pmsis_fake_max_in_flight() <= 4
    assert pulp.pmsis_fake_max_size() <= 64
    if l1r == row and l2r != row and rows > 1 and row <= 32:
        assert pulp.pmsis_fake_commands_2d() > 0     # L1-packed, L2-strided rows use 2D commands
