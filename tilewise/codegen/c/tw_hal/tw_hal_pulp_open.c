/*
 * tw_hal_pulp_open.c — tw_hal.h on the bare pulp-open cluster (GVSoC), no SDK.
 *
 * Cores. The cluster's 8 cores start in the firmware (crt0.S); core 0 runs the program and the
 * others wait in tw_hal_worker() for forks. No atomics on these cores: every flag below is
 * written by one core and read by others, in L1 (single-cycle loads, like the HAL's other
 * state: section .l1). tw_fork publishes (fn, arg, team) and bumps a generation counter; each
 * worker in the team runs fn(arg) and acknowledges the generation; core 0 runs its share and
 * waits for the acknowledgements. tw_barrier is a centralized barrier: each core stores the
 * episode number it reached, core 0 waits for all of them and releases the episode.
 *
 * DMA. The cluster DMA (mchan v7 at 0x10201800, ../shared/tools/gvsoc README): a command is a
 * transfer id read from the FIFO register, then `len | dir<<17 | inc<<18 [| 2d<<19]`, the L1
 * address, the L2 address [, the 2D row length and L2 stride]; `len` is 16 bits; the L1 side
 * is contiguous and only the L2 side strides. A tile copy becomes as few commands as that
 * allows: one 1D command when both sides are contiguous, one 2D command when every row has the
 * same L2 stride (a 3D HWC box whose rows span the full tensor width merges its planes), one 2D
 * command per plane otherwise, one 1D command per row when L1 rows are strided; commands of more
 * than 65532 bytes are split. The counter ids of a transfer's commands are kept in the ring of
 * tw_dma_ring.h (the hardware has 16 counters; the ring holds 8); a full ring waits for its
 * oldest command. tw_dma_wait(id) waits for the transfer's commands still in the ring, releasing
 * each counter.
 */
#include "tw_hal.h"
#include "tw_hal_chunks.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TW_L1 __attribute__((section(".l1")))
#define MCHAN ((volatile uint32_t *)0x10201800u)
#define MCHAN_CMD 0
#define MCHAN_STATUS 1
#define DMA_MAX_BYTES 65532u
#define CORES 8

#define TW_DMA_RING 8               /* a power of two, at most the DMA's 16 counters */
#define TW_DMA_RING_STATE TW_L1
typedef uint32_t tw_dma_ring_cmd_t;  /* the DMA counter of the command */
#include "tw_dma_ring.h"

static TW_L1 tw_dma_id_t g_next_id;
static TW_L1 tw_hal_stats_t g_stats;

static TW_L1 volatile tw_task_fn g_fn;
static TW_L1 void *volatile g_arg;
static TW_L1 volatile int g_team;               /* cores in the current fork; 0 outside */
static TW_L1 volatile uint32_t g_fork_gen;      /* bumped by core 0 to start a fork */
static TW_L1 volatile uint32_t g_fork_done[CORES];
static TW_L1 volatile uint32_t g_bar_arrive[CORES];
static TW_L1 volatile uint32_t g_bar_release;
static TW_L1 uint32_t g_bar_epoch[CORES];      /* each core's own episode count */

static inline int hart_core(void)
{
    uint32_t id;
    __asm__ volatile("csrr %0, mhartid" : "=r"(id));
    return (int)(id & 0x1f);
}

/* --- cores ------------------------------------------------------------------------------- */

void tw_hal_worker(int core)
{
    uint32_t seen = 0;
    for (;;) {
        uint32_t gen;
        while ((gen = g_fork_gen) == seen)
            ;
        seen = gen;
        if (core < g_team)
            g_fn(g_arg);
        g_fork_done[core] = gen;
    }
}

void tw_fork(int n_cores, tw_task_fn fn, void *arg)
{
    int i;
    uint32_t gen;
    if (n_cores > CORES) n_cores = CORES;
    if (n_cores < 1) n_cores = 1;
    g_stats.forks++;
    for (i = 0; i < CORES; i++) {       /* barrier episodes count from 0 in every fork */
        g_bar_epoch[i] = 0;
        g_bar_arrive[i] = 0;
    }
    g_bar_release = 0;
    g_fn = fn;
    g_arg = arg;
    g_team = n_cores;
    gen = g_fork_gen + 1;
    g_fork_gen = gen;
    fn(arg);
    for (i = 1; i < CORES; i++)
        while (g_fork_done[i] != gen)
            ;
    g_team = 0;
}

void tw_barrier(void)
{
    int core, i, team = g_team;
    uint32_t epoch;
    if (team <= 1)
        return;
    core = hart_core();
    epoch = ++g_bar_epoch[core];
    if (core == 0) {
        for (i = 1; i < team; i++)
            while (g_bar_arrive[i] != epoch)
                ;
        g_stats.barriers++;
        g_bar_release = epoch;
    } else {
        g_bar_arrive[core] = epoch;
        while (g_bar_release != epoch)
            ;
    }
}

int tw_core_id(void)
{
    return g_team ? hart_core() : 0;
}

int tw_core_count(void)
{
    return g_team ? g_team : 1;
}

/* --- DMA --------------------------------------------------------------------------------- */

/* Waits for the command on DMA counter *tid and releases the counter. */
static void tw_dma_ring_cmd_wait(uint32_t *tid)
{
    uint32_t bit = 1u << *tid;
    while (MCHAN[MCHAN_STATUS] & bit)
        ;
    MCHAN[MCHAN_STATUS] = bit;
}

/* One command: `bytes` (<= DMA_MAX_BYTES) from/to contiguous L1; with rows > 1, L2 rows of
 * `row_bytes` at `l2_stride` (2D). */
static void command(uint32_t l1, uint32_t l2, uint32_t bytes, uint32_t row_bytes,
                    uint32_t l2_stride, int two_d, tw_dma_dir_t dir, tw_dma_id_t id)
{
    uint32_t *tid = tw_dma_ring_push(id);   /* first: a full ring frees a counter */
    *tid = MCHAN[MCHAN_CMD];                /* the command's counter */
    MCHAN[MCHAN_CMD] = bytes | (uint32_t)(dir == TW_DMA_L2_TO_L1) << 17 | 1u << 18
                       | (uint32_t)two_d << 19;
    MCHAN[MCHAN_CMD] = l1;
    MCHAN[MCHAN_CMD] = l2;
    if (two_d) {
        MCHAN[MCHAN_CMD] = row_bytes;
        MCHAN[MCHAN_CMD] = l2_stride;
    }
}

static void copy_1d(uint32_t l1, uint32_t l2, uint32_t bytes, tw_dma_dir_t dir, tw_dma_id_t id)
{
    while (bytes > 0) {
        uint32_t n = bytes > DMA_MAX_BYTES ? DMA_MAX_BYTES : bytes;
        command(l1, l2, n, 0, 0, 0, dir, id);
        l1 += n;
        l2 += n;
        bytes -= n;
    }
}

/* `rows` rows packed in L1, every L2 row `l2_stride` after the previous one. */
static void copy_rows(uint32_t l1, uint32_t l2, uint32_t row_bytes, uint32_t rows,
                      uint32_t l2_stride, tw_dma_dir_t dir, tw_dma_id_t id)
{
    uint32_t per_cmd, r;
    if (l2_stride == row_bytes || rows == 1) {
        copy_1d(l1, l2, row_bytes * rows, dir, id);
        return;
    }
    per_cmd = DMA_MAX_BYTES / row_bytes;
    if (per_cmd == 0) {                              /* a row larger than one command */
        for (r = 0; r < rows; r++)
            copy_1d(l1 + r * row_bytes, l2 + r * l2_stride, row_bytes, dir, id);
        return;
    }
    while (rows > 0) {
        uint32_t n = rows > per_cmd ? per_cmd : rows;
        command(l1, l2, n * row_bytes, row_bytes, l2_stride, n > 1, dir, id);
        l1 += n * row_bytes;
        l2 += n * l2_stride;
        rows -= n;
    }
}

tw_dma_id_t tw_dma_copy_3d(void *l1, void *l2, uint32_t row_bytes, uint32_t rows,
                           uint32_t planes, uint32_t l1_row_stride, uint32_t l1_plane_stride,
                           uint32_t l2_row_stride, uint32_t l2_plane_stride, tw_dma_dir_t dir)
{
    tw_dma_id_t id = g_next_id ? g_next_id : 1;
    uint32_t a1 = (uint32_t)(uintptr_t)l1, a2 = (uint32_t)(uintptr_t)l2;
    uint32_t plane_bytes = rows * row_bytes, p, r;
    int l1_packed = rows == 1 || l1_row_stride == row_bytes;

    g_next_id = id + 1 ? id + 1 : 1;
    if (planes == 1 && (rows == 1 || (l2_row_stride == row_bytes && l1_row_stride == row_bytes))) {
        /* one contiguous run on both sides, a generated layer's usual copy: the commands of the
         * general path below with its bookkeeping skipped (~120 cycles less per copy on GVSoC) */
        uint32_t bytes = rows * row_bytes;
        g_stats.dma_transfers++;
        g_stats.dma_bytes += bytes;
        if (bytes == 0)
            return id;
        g_stats.dma_chunks++;
        copy_1d(a1, a2, bytes, dir, id);
        return id;
    }
    g_stats.dma_transfers++;
    g_stats.dma_bytes += (uint64_t)plane_bytes * planes;
    g_stats.dma_chunks += tw_l2_chunks(row_bytes, rows, planes, l2_row_stride, l2_plane_stride);
    if (row_bytes == 0 || rows == 0 || planes == 0)
        return id;
    if (l1_packed && (planes == 1 || l1_plane_stride == plane_bytes)) {
        if (planes == 1) {
            copy_rows(a1, a2, row_bytes, rows, l2_row_stride, dir, id);
            return id;
        }
        if (rows == 1 || l2_plane_stride == rows * l2_row_stride) {
            /* every row of every plane at the same L2 stride: one run of rows */
            uint32_t stride = rows == 1 ? l2_plane_stride : l2_row_stride;
            copy_rows(a1, a2, row_bytes, rows * planes, stride, dir, id);
            return id;
        }
    }
    for (p = 0; p < planes; p++) {
        uint32_t p1 = a1 + p * l1_plane_stride, p2 = a2 + p * l2_plane_stride;
        if (l1_packed)
            copy_rows(p1, p2, row_bytes, rows, l2_row_stride, dir, id);
        else
            for (r = 0; r < rows; r++)
                copy_1d(p1 + r * l1_row_stride, p2 + r * l2_row_stride, row_bytes, dir, id);
    }
    return id;
}

void tw_dma_wait(tw_dma_id_t id)
{
    tw_dma_ring_wait(id);
    g_stats.dma_waits++;
}

/* --- counters ---------------------------------------------------------------------------- */

void tw_hal_get_stats(tw_hal_stats_t *out)
{
    *out = g_stats;
    out->dma_pending = tw_dma_ring_pending();
}

void tw_hal_reset_stats(void)
{
    memset(&g_stats, 0, sizeof g_stats);
}
