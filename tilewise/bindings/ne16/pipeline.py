"""The pipelined tile of an NE16 binding whose int32 output the cluster requantizes: NE16 runs
one row job while the 8 cores requantize the previous one (templates/ne16_s8.c.j2), as DORY's and
MATCH's NE16 flows on GAP9 overlap the accelerator with the cluster.

A tile of oy_t output rows is cut into row jobs of `rows(oy_t)` rows (whole 3-row bands, NE16's
3×3 output subtile, at most `JOBS_MAX` jobs; the last job takes the rest), each writing its int32
accumulators into one of two L1 buffers in turn (tw_ne16_task_rows):

    cores convert the input tile to u8 (once; not with a u8 input); barrier
    core 0: dispatch job 0 → acc[0]
    for j in 0 .. J-1:
        core 0: wait for job j                   (acc[j & 1] complete)
        barrier                                  (every core is done reading acc[(j+1) & 1])
        core 0: dispatch job j+1 → acc[(j+1) & 1]   NE16 runs it ...
        all cores: requantize job j from acc[j & 1] ... while the cores do this

so a tile's cycles are fill + Σ max(NE16 job, cluster work) + drain (bindings/ne16/cost.py):
    convert + J·job + N(job 0) + Σ_{j<J-1} max(N(job j+1), R(job j)) + R(job J-1)
with N a job's NE16 cycles, R its requantization on the cores and `job` the programming of one
job by core 0 (on the critical path: core 0 programs job j+1 before its share of job j's
requantization). One job (J = 1: oy_t ≤ 3, dense layers) is the sequence convert, job, requant.
The second buffer is reserved in L1 (`acc_words`) only when a tile has more than one job.
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
