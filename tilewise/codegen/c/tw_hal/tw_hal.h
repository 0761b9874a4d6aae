/*
 * tw_hal.h — the hardware abstraction of generated tilewise code: the only target-specific C
 * (DESIGN.md "Generated C project"). One implementation per platform: tw_hal_host.c (pthreads, a
 * DMA that completes only at its wait), tw_hal_pulp.c (PMSIS cluster DMA and team fork),
 * tw_hal_pulp_open.c (the bare pulp-open cluster's registers), tw_hal_cortex_m.c (memcpy on one
 * core). Each implements tw_dma_copy_3d; the 1D and 2D copies below are its special cases.
 *
 * DMA — asynchronous copies between an L1 buffer and an L2 buffer (seed 001 §4.3: the cluster
 * DMA moves tiles L2<->L1 while the cores compute, Listing 1's double buffering).
 *   A copy moves `planes` x `rows` x `row_bytes` bytes. Byte b of row r of plane p is at
 *       l1 + p * l1_plane_stride + r * l1_row_stride + b   and
 *       l2 + p * l2_plane_stride + r * l2_row_stride + b,
 *   from L2 to L1 (TW_DMA_L2_TO_L1) or back (TW_DMA_L1_TO_L2). 1D and 2D are the special cases
 *   planes = 1 (and rows = 1). Typical HWC uses: an input tile of h x w pixels x c channels from
 *   an L2 map of width W and C channels is a 3D copy (planes = h, rows = w, row_bytes = c,
 *   l2 strides W*C and C, L1 dense); with c == C it is 2D (rows = h, row_bytes = w*C).
 *   The call returns a transfer id at once. The destination is undefined (garbage on the host)
 *   and the source must not be written until tw_dma_wait(id) returns. Each id is waited exactly
 *   once. DMA calls are made by one core at a time (the generated code uses core 0, between
 *   barriers, or outside tw_fork).
 *
 * Cores — tw_fork(n, fn, arg) runs fn(arg) on cores 0..n-1 (the caller's core is core 0) and
 *   returns when all have returned. Inside, tw_core_id() / tw_core_count() identify the core and
 *   team size, and tw_barrier() waits for the whole team. Outside a fork: id 0, count 1, and
 *   tw_barrier() returns at once. Forks do not nest.
 *
 * L3 — tw_l3_read(l2, l3, bytes) copies `bytes` from off-chip memory (L3) into L2, for weights
 *   streamed from L3 with the next layer's prefetch (seed 001 §4.4, DORY Listing 2). Same rules
 *   as DMA: asynchronous, the destination is undefined until tw_l3_wait(id), each id waited once.
 *   `l3` is an address in L3: on the host a pointer into memory the harness holds; on PULP an
 *   address in the RAM device the firmware opened (tw_hal_pulp_l3.c, tw_hal_pulp.h). Called outside
 *   forks (by the code that sequences layers). tw_l3_write(l3, l2, bytes) is the other direction
 *   (an output row tile of a layer tiled at L3->L2 written back, seed 001 §4.2.1), waited with
 *   tw_l3_wait; the L2 source must not change until then. Counted apart from L2<->L1 DMA:
 *   tw_hal_get_l3_stats() (reads and writes together).
 *
 * Counters — tw_hal_get_stats() reports DMA transfers and bytes (and, on the host, protocol
 *   errors) so that a run can be held against the schedule's prediction.
 *
 * State: the HAL is the one part of a generated project with mutable globals (the host's thread
 * team and pending-transfer table, the PULP command table); kernels and layers have none.
 */
#ifndef TW_HAL_H
#define TW_HAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {   /* a C++ application links the HAL's C symbols */
#endif

typedef uint32_t tw_dma_id_t;            /* 0 is never a valid id */

typedef enum {
    TW_DMA_L2_TO_L1 = 0,
    TW_DMA_L1_TO_L2 = 1
} tw_dma_dir_t;

/* the one copy each HAL implements */
tw_dma_id_t tw_dma_copy_3d(void *l1, void *l2, uint32_t row_bytes, uint32_t rows,
                           uint32_t planes, uint32_t l1_row_stride, uint32_t l1_plane_stride,
                           uint32_t l2_row_stride, uint32_t l2_plane_stride, tw_dma_dir_t dir);

/* 1D and 2D: its special cases (one plane; one row), the same for every HAL */
static inline tw_dma_id_t tw_dma_copy_2d(void *l1, void *l2, uint32_t row_bytes, uint32_t rows,
                                         uint32_t l1_row_stride, uint32_t l2_row_stride,
                                         tw_dma_dir_t dir)
{
    return tw_dma_copy_3d(l1, l2, row_bytes, rows, 1, l1_row_stride, 0, l2_row_stride, 0, dir);
}

static inline tw_dma_id_t tw_dma_copy_1d(void *l1, void *l2, uint32_t bytes, tw_dma_dir_t dir)
{
    return tw_dma_copy_3d(l1, l2, bytes, 1, 1, 0, 0, 0, 0, dir);
}

void tw_dma_wait(tw_dma_id_t id);

typedef void (*tw_task_fn)(void *arg);

void tw_fork(int n_cores, tw_task_fn fn, void *arg);
void tw_barrier(void);
int tw_core_id(void);
int tw_core_count(void);

typedef struct {
    uint64_t dma_transfers;      /* copy calls */
    uint64_t dma_bytes;          /* bytes moved */
    uint64_t dma_chunks;         /* contiguous runs on the L2 side (what DMA cost models count) */
    uint64_t dma_waits;          /* successful waits */
    uint64_t dma_bad_waits;      /* host: wait on an unknown or already-waited id */
    uint64_t dma_races;          /* host: source changed between issue and wait */
    uint32_t dma_pending;        /* issued, not yet waited */
    uint32_t dma_max_pending;    /* high-water mark of dma_pending */
    uint64_t forks;
    uint64_t barriers;           /* barrier episodes (one per team-wide barrier) */
} tw_hal_stats_t;

void tw_hal_get_stats(tw_hal_stats_t *out);
void tw_hal_reset_stats(void);

tw_dma_id_t tw_l3_read(void *l2, const void *l3, uint32_t bytes);
tw_dma_id_t tw_l3_write(void *l3, const void *l2, uint32_t bytes);
void tw_l3_wait(tw_dma_id_t id);

/* L3 transfers (reads and writes) issued and bytes moved since the last tw_hal_reset_stats(). */
void tw_hal_get_l3_stats(uint64_t *transfers, uint64_t *bytes);

#ifdef __cplusplus
}
#endif

#endif /* TW_HAL_H */
