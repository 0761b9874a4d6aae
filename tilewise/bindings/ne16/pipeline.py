"""The pipelined tile of an NE16 binding whose int32 output the cluster requantizes: NE16 runs
one row job while the 8 cores requantize the previous one (templates/ne16_s8.c.j2), as DORY's and
MATCH's NE16 flows on GAP9 overlap the accelerator with the cluster.

A tile of oy_t output rows is cut into row jobs of `rows(oy_t)` rows (whole 3-row bands, NE16's
3×3 output subtile, at most `JOBS_MAX` jobs; the last job takes the rest), each writing its int32
accumulators into one of two L1 buffers in turn (tw_ne16_task_rows):

    cores 1..7 convert the input tile to u8 (not with a u8 input)   core 0 sets the tile's job up
    barrier                                                          (its registers: job 0's image)
    core 0: dispatch job 0 → acc[0]
    for j in 0 .. J-1:
        core 0: wait for job j                   (acc[j & 1] complete)
        barrier                                  (every core is done reading acc[(j+1) & 1])
        core 0: dispatch job j+1 → acc[(j+1) & 1]   NE16 runs it ...
        all cores: requantize job j from acc[j & 1] ... while the cores do this
                   (core 0's share TW_NE16_DISPATCH_OUTPUTS outputs short of the others' when
                   it dispatched job j+1: c/tw_ne16_kernels.h)

so a tile's cycles are fill + Σ max(NE16 job, cluster work) + drain (bindings/ne16/cost.py):
    convert + J·job + N(job 0) + Σ_{j<J-1} max(N(job j+1), R(job j)) + R(job J-1)
with N a job's NE16 cycles, R its requantization on the cores and `job` the programming of one
job by core 0 (on the critical path: core 0 programs job j+1 before its share of job j's
requantization); core 0's set-up of the tile beside the conversion is in the tile's constant.
One job (J = 1: oy_t ≤ 3, dense layers) is the sequence convert, job, requant. The second
buffer is reserved in L1 (`acc_words`) only when a tile has more than one job.

Measured on GVSoC (pulp-open-ne16, validate --on gvsoc, bit-exact) and not kept:
- NE16's second job context kept full — jobs 0 and 1 dispatched at once, job j+2 queued behind
  job j+1 after job j's wait, three accumulator buffers — so that core 0's wait, barrier and
  programming leave NE16's path. On the MLPerf Tiny NE16 layers a step is bound by the cluster
  (job + R(job j) > N(job j+1) on 32 of the 36 layers as pulp-open-ne16 schedules them, 3 more
  are one job: the one-mulh requantization, 14.5 cycles per output and core, against NE16's 1×1
  and depthwise jobs), where the queue saves nothing, while the third buffer's L1 cut
  kws_dscnn's whole-layer tiles in two (398,118 cycles against 315,438) or, with up to 16 jobs
  per tile to keep the buffers' L1, added job set-ups (349,171); ic_resnet8 657,268 against
  633,088.
- Core 0's per-job work (kws_dscnn, mcycle probes): the wait that sees a finished job ~150–200
  cycles, the barrier ~120, the dispatch ~310 (ACQUIRE ~15, 24 register stores ~180–210). A job
  context keeps its registers on GVSoC (bit-exact with 2 stores for a middle job whose context
  held the previous middle job), which saved nothing measurable.
- Core 0's share of a job's requantization shortened by its wait and dispatch (kept,
  c/tw_ne16_kernels.c requant_share; the shares cut at pairs of outputs rather than whole
  pixels or channels): kws_dscnn's 9 NE16 layers 275,219 → 277,542 cycles (the finer cut costs
  that more than core 0's shorter share wins: 281,335 with equal shares), ic_resnet8's 5
  302,372 → 285,745 (its 16- and 32-channel layers had split unevenly).
- Job 0's input rows converted first and the others while NE16 runs it: the 36 layers measured
  1,424,803 cycles against 1,415,918 (the extra barrier and the uneven row split eat the
  overlap).
"""

from __future__ import annotations

import numpy as np

#: row jobs per tile at most (more jobs: less fill and drain, more job programming)
JOBS_MAX = 8


def rows(oy):
    """Output rows of a tile's row jobs (every job but the last): whole 3-row bands, enough for
    at most JOBS_MAX jobs, at most the tile's rows. Numpy-friendly (the tiler's grids)."""
    oy = np.asarray(oy)
    bands = (oy + 2) // 3
    return np.minimum(3 * ((bands + JOBS_MAX - 1) // JOBS_MAX), oy)


def jobs(oy):
    """Row jobs of a tile of oy output rows."""
    oy = np.asarray(oy)
    r = rows(oy)
    return (oy + r - 1) // r


def last_rows(oy):
    """Output rows of the tile's last row job."""
    oy = np.asarray(oy)
    return oy - rows(oy) * (jobs(oy) - 1)


def acc_words(k, oy, ox):
    """int32 words of the tile's accumulator buffers: one job's rows × ox × k, twice when the
    tile has more than one job (the C in templates/ne16_s8.c.j2 lays them out the same way)."""
    k, oy, ox = (np.asarray(v) for v in (k, oy, ox))
    return np.where(jobs(oy) > 1, 2, 1) * rows(oy) * ox * k
