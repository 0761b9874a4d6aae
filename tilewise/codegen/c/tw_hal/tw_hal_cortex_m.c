/*
 * tw_hal_cortex_m.c — tw_hal.h on a single-core Cortex-M without a DMA engine the generated code
 * drives (the stm32h7 firmware, firmware/cortex_m): a "transfer" is the copy itself, done by the
 * core at issue, so a wait has nothing left to do; tw_fork runs the task on the calling core
 * (the team has one core) and tw_barrier returns at once. The counters count what the host HAL
 * counts (transfers, bytes, contiguous L2-side chunks: tw_hal_chunks.h), so a run is held against
 * the schedule's prediction exactly as on the host and on GVSoC. L3 is ordinary memory.
 *
 * State: the counters and the id sequence (the HAL is the one part of a project with globals),
 * kept as 32-bit words — static RAM the application pays (validate/ram_elf.py): 44 bytes, not
 * tw_hal_stats_t's 88 — and widened by tw_hal_get_stats; they count from tw_hal_reset_stats
 * (the firmware resets them before each inference) and wrap past 4 GiB moved.
 */
#include <string.h>

#include "tw_hal.h"
#include "tw_hal_chunks.h"

static struct {
    uint32_t transfers, bytes, chunks, waits, bad_waits, pending, max_pending, forks;
    uint32_t l3_transfers, l3_bytes;
} g_stats;
static tw_dma_id_t g_next_id;

static tw_dma_id_t issued(uint32_t bytes, uint32_t chunks)
{
    g_stats.transfers++;
    g_stats.bytes += bytes;
    g_stats.chunks += chunks;
    g_stats.pending++;
    if (g_stats.pending > g_stats.max_pending)
        g_stats.max_pending = g_stats.pending;
    if (++g_next_id == 0)
        g_next_id = 1;
    return g_next_id;
}

tw_dma_id_t tw_dma_copy_3d(void *l1, void *l2, uint32_t row_bytes, uint32_t rows,
                           uint32_t planes, uint32_t l1_row_stride, uint32_t l1_plane_stride,
                           uint32_t l2_row_stride, uint32_t l2_plane_stride, tw_dma_dir_t dir)
{
    uint32_t p, r;
    for (p = 0; p < planes; p++) {
        int8_t *a = (int8_t *)l1 + (size_t)p * l1_plane_stride;
        int8_t *b = (int8_t *)l2 + (size_t)p * l2_plane_stride;
        for (r = 0; r < rows; r++, a += l1_row_stride, b += l2_row_stride) {
            if (dir == TW_DMA_L2_TO_L1)
                memcpy(a, b, row_bytes);
            else
                memcpy(b, a, row_bytes);
        }
    }
    return issued(row_bytes * rows * planes,
                  (uint32_t)tw_l2_chunks(row_bytes, rows, planes, l2_row_stride, l2_plane_stride));
}

void tw_dma_wait(tw_dma_id_t id)
{
    if (id == 0 || g_stats.pending == 0) {
        g_stats.bad_waits++;
        return;
    }
    g_stats.pending--;
    g_stats.waits++;
}

void tw_fork(int n_cores, tw_task_fn fn, void *arg)
{
    (void)n_cores;                 /* one core: the schedule was made for cores = 1 */
    g_stats.forks++;
    fn(arg);
}

void tw_barrier(void)
{
}

int tw_core_id(void)
{
    return 0;
}

int tw_core_count(void)
{
    return 1;
}

void tw_hal_get_stats(tw_hal_stats_t *out)
{
    memset(out, 0, sizeof *out);   /* no races, no barriers: one core */
    out->dma_transfers = g_stats.transfers;
    out->dma_bytes = g_stats.bytes;
    out->dma_chunks = g_stats.chunks;
    out->dma_waits = g_stats.waits;
    out->dma_bad_waits = g_stats.bad_waits;
    out->dma_pending = g_stats.pending;
    out->dma_max_pending = g_stats.max_pending;
    out->forks = g_stats.forks;
}

void tw_hal_reset_stats(void)
{
    memset(&g_stats, 0, sizeof g_stats);
}

tw_dma_id_t tw_l3_read(void *l2, const void *l3, uint32_t bytes)
{
    memcpy(l2, l3, bytes);
    g_stats.l3_transfers++;
    g_stats.l3_bytes += bytes;
    return 1;
}

tw_dma_id_t tw_l3_write(void *l3, const void *l2, uint32_t bytes)
{
    memcpy(l3, l2, bytes);
    g_stats.l3_transfers++;
    g_stats.l3_bytes += bytes;
    return 1;
}

void tw_l3_wait(tw_dma_id_t id)
{
    (void)id;
}

void tw_hal_get_l3_stats(uint64_t *transfers, uint64_t *bytes)
{
    *transfers = g_stats.l3_transfers;
    *bytes = g_stats.l3_bytes;
}
