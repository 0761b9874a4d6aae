/*
 * tw_hal_pulp.c — tw_hal.h on PULP clusters (GAP8, GAP9, pulp-open) through PMSIS.
 *
 * Runs on the cluster: tw_fork is pi_cl_team_fork, tw_barrier the hardware team barrier, and
 * DMA copies are cluster-DMA (mchan) commands issued by the calling core. The cluster DMA
 * strides only the external (L2) side and keeps the local (L1) side contiguous (seed 001 §4.3
 * uses it that way), so a copy is decomposed into commands:
 *   - both sides contiguous                    -> 1D commands
 *   - L1 rows packed, L2 rows strided          -> one 2D command per plane (ext stride)
 *   - L1 rows strided                          -> one 1D command per row
 * each split so that no command moves more than TW_PULP_DMA_MAX_BYTES. Commands go into the ring
 * of tw_dma_ring.h, TW_PULP_DMA_RING entries (the number of DMA counters the code may hold);
 * tw_dma_wait(id) waits for the commands of transfer `id` still in it.
 *
 * The network must run inside a cluster task (the FC opens the cluster and sends the task);
 * DMA calls come from one core at a time, as tw_hal.h requires.
 */
#include "pmsis.h"

#include "tw_hal.h"
#include "tw_hal_chunks.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef TW_PULP_DMA_RING
#define TW_PULP_DMA_RING 16
#endif
#ifndef TW_PULP_DMA_MAX_BYTES
#define TW_PULP_DMA_MAX_BYTES 65532u
#endif

#define TW_DMA_RING TW_PULP_DMA_RING
typedef pi_cl_dma_cmd_t tw_dma_ring_cmd_t;
#include "tw_dma_ring.h"

static void tw_dma_ring_cmd_wait(pi_cl_dma_cmd_t *cmd)
{
    pi_cl_dma_cmd_wait(cmd);
}

static tw_dma_id_t g_next_id = 1;
static int g_in_fork;
static tw_hal_stats_t g_stats;

static uint32_t addr(const void *p)
{
    return (uint32_t)(uintptr_t)p;
}

static pi_cl_dma_dir_e pmsis_dir(tw_dma_dir_t dir)
{
    return dir == TW_DMA_L2_TO_L1 ? PI_CL_DMA_DIR_EXT2LOC : PI_CL_DMA_DIR_LOC2EXT;
}

/* Contiguous bytes on both sides, split into commands of at most TW_PULP_DMA_MAX_BYTES. */
static void copy_1d(uint8_t *l1, uint8_t *l2, uint32_t bytes, tw_dma_dir_t dir, tw_dma_id_t id)
{
    while (bytes > 0) {
        uint32_t n = bytes > TW_PULP_DMA_MAX_BYTES ? TW_PULP_DMA_MAX_BYTES : bytes;
        pi_cl_dma_cmd(addr(l2), addr(l1), n, pmsis_dir(dir), tw_dma_ring_push(id));
        l1 += n;
        l2 += n;
        bytes -= n;
    }
}

/* `rows` rows packed in L1, strided in L2: 2D commands of whole rows. */
static void copy_2d(uint8_t *l1, uint8_t *l2, uint32_t row_bytes, uint32_t rows,
                    uint32_t l2_row_stride, tw_dma_dir_t dir, tw_dma_id_t id)
{
    uint32_t rows_per_cmd = TW_PULP_DMA_MAX_BYTES / row_bytes;
    if (rows_per_cmd == 0) {                        /* a row larger than one command */
        uint32_t r;
        for (r = 0; r < rows; r++)
            copy_1d(l1 + (size_t)r * row_bytes, l2 + (size_t)r * l2_row_stride, row_bytes, dir, id);
        return;
    }
    while (rows > 0) {
        uint32_t n = rows > rows_per_cmd ? rows_per_cmd : rows;
        if (n == 1)
            pi_cl_dma_cmd(addr(l2), addr(l1), row_bytes, pmsis_dir(dir), tw_dma_ring_push(id));
        else
            pi_cl_dma_cmd_2d(addr(l2), addr(l1), n * row_bytes, l2_row_stride, row_bytes,
                             pmsis_dir(dir), tw_dma_ring_push(id));
        l1 += (size_t)n * row_bytes;
        l2 += (size_t)n * l2_row_stride;
        rows -= n;
    }
}

tw_dma_id_t tw_dma_copy_3d(void *l1, void *l2, uint32_t row_bytes, uint32_t rows,
                           uint32_t planes, uint32_t l1_row_stride, uint32_t l1_plane_stride,
                           uint32_t l2_row_stride, uint32_t l2_plane_stride, tw_dma_dir_t dir)
{
    tw_dma_id_t id = g_next_id++;
    uint8_t *b1 = (uint8_t *)l1, *b2 = (uint8_t *)l2;
    uint32_t plane_bytes = rows * row_bytes;
    int l1_rows_packed = rows == 1 || l1_row_stride == row_bytes;
    int l2_rows_packed = rows == 1 || l2_row_stride == row_bytes;
    uint32_t p, r;

    if (g_next_id == 0) g_next_id = 1;
    g_stats.dma_transfers++;
    g_stats.dma_bytes += (uint64_t)plane_bytes * planes;
    g_stats.dma_chunks += tw_l2_chunks(row_bytes, rows, planes, l2_row_stride, l2_plane_stride);
    if (row_bytes == 0 || rows == 0 || planes == 0)
        return id;

    if (l1_rows_packed && l2_rows_packed &&
        (planes == 1 || (l1_plane_stride == plane_bytes && l2_plane_stride == plane_bytes))) {
        copy_1d(b1, b2, plane_bytes * planes, dir, id);            /* all contiguous */
        return id;
    }
    for (p = 0; p < planes; p++) {
        uint8_t *p1 = b1 + (size_t)p * l1_plane_stride;
        uint8_t *p2 = b2 + (size_t)p * l2_plane_stride;
        if (l1_rows_packed && l2_rows_packed)
            copy_1d(p1, p2, plane_bytes, dir, id);
        else if (l1_rows_packed)
            copy_2d(p1, p2, row_bytes, rows, l2_row_stride, dir, id);
        else
            for (r = 0; r < rows; r++)
                copy_1d(p1 + (size_t)r * l1_row_stride, p2 + (size_t)r * l2_row_stride,
                        row_bytes, dir, id);
    }
    return id;
}

void tw_dma_wait(tw_dma_id_t id)
{
    tw_dma_ring_wait(id);
    g_stats.dma_waits++;
}

void tw_fork(int n_cores, tw_task_fn fn, void *arg)
{
    g_stats.forks++;
    g_in_fork = 1;
    pi_cl_team_fork(n_cores, fn, arg);
    g_in_fork = 0;
}

void tw_barrier(void)
{
    if (!g_in_fork)
        return;
    pi_cl_team_barrier();
    if (pi_core_id() == 0)
        g_stats.barriers++;
}

int tw_core_id(void)
{
    return g_in_fork ? pi_core_id() : 0;
}

int tw_core_count(void)
{
    return g_in_fork ? pi_cl_team_nb_cores() : 1;
}

void tw_hal_get_stats(tw_hal_stats_t *out)
{
    *out = g_stats;
    out->dma_pending = tw_dma_ring_pending();
}

void tw_hal_reset_stats(void)
{
    memset(&g_stats, 0, sizeof g_stats);
}
