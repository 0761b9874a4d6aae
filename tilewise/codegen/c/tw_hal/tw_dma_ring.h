/*
 * tw_dma_ring.h — the ring of in-flight DMA commands of a cluster HAL (tw_hal_pulp.c over PMSIS,
 * tw_hal_pulp_open.c over the bare cluster DMA): one copy, included by the one HAL of a build.
 *
 * A cluster DMA holds a few commands at once (mchan has 16 counters) and strides only its L2
 * side, so a tw_dma_copy_3d becomes several commands that all belong to one transfer id
 * (tw_hal.h). The ring keeps them in issue order: TW_DMA_RING entries, each a command handle and
 * the transfer that owns it (0 once waited). A push into a full ring first waits for the oldest
 * command, which is always safe (it only ends overlap early); tw_dma_ring_wait(id) waits for the
 * commands of transfer `id` still in the ring, and waited entries leave from the head.
 *
 * The including HAL defines, before the #include:
 *   TW_DMA_RING           entries (at most the hardware's counters)
 *   tw_dma_ring_cmd_t     a command's handle (PMSIS: pi_cl_dma_cmd_t; mchan: its counter id)
 *   TW_DMA_RING_STATE     optional: where the ring lives (pulp-open: the L1 section)
 * and defines tw_dma_ring_cmd_wait(cmd): returns when that command is complete (and releases its
 * counter). The ring is the HAL's own state: static, one per build, touched by one core at a time
 * (DMA calls come from one core, tw_hal.h).
 */
#ifndef TW_DMA_RING_H
#define TW_DMA_RING_H

#include <stdint.h>

#include "tw_hal.h"

#ifndef TW_DMA_RING_STATE
#define TW_DMA_RING_STATE
#endif

static void tw_dma_ring_cmd_wait(tw_dma_ring_cmd_t *cmd);

static TW_DMA_RING_STATE tw_dma_ring_cmd_t g_ring_cmd[TW_DMA_RING];
static TW_DMA_RING_STATE tw_dma_id_t g_ring_owner[TW_DMA_RING];   /* its transfer; 0 = done */
static TW_DMA_RING_STATE uint32_t g_ring_head, g_ring_count;     /* oldest entry, entries */

/* Waits for entry `slot` and marks it done. */
static inline void tw_dma_ring_wait_slot(uint32_t slot)
{
    tw_dma_ring_cmd_wait(&g_ring_cmd[slot]);
    g_ring_owner[slot] = 0;
}

/* Retires the done entries at the head. */
static inline void tw_dma_ring_pop_done(void)
{
    while (g_ring_count > 0 && g_ring_owner[g_ring_head] == 0) {
        g_ring_head = (g_ring_head + 1) % TW_DMA_RING;
        g_ring_count--;
    }
}

/* The entry of a new command of transfer `id` (waits for the oldest when the ring is full): the
 * HAL fills in its handle and starts the command. */
static inline tw_dma_ring_cmd_t *tw_dma_ring_push(tw_dma_id_t id)
{
    uint32_t slot;
    if (g_ring_count == TW_DMA_RING) {
        tw_dma_ring_wait_slot(g_ring_head);
        tw_dma_ring_pop_done();
    }
    slot = (g_ring_head + g_ring_count) % TW_DMA_RING;
    g_ring_owner[slot] = id;
    g_ring_count++;
    return &g_ring_cmd[slot];
}

/* Returns when every command of transfer `id` is complete. */
static inline void tw_dma_ring_wait(tw_dma_id_t id)
{
    uint32_t i;
    for (i = 0; i < g_ring_count; i++) {
        uint32_t slot = (g_ring_head + i) % TW_DMA_RING;
        if (g_ring_owner[slot] == id)
            tw_dma_ring_wait_slot(slot);
    }
    tw_dma_ring_pop_done();
}

/* Commands issued and not yet waited (tw_hal_stats_t.dma_pending). */
static inline uint32_t tw_dma_ring_pending(void)
{
    uint32_t i, n = 0;
    for (i = 0; i < g_ring_count; i++)
        if (g_ring_owner[(g_ring_head + i) % TW_DMA_RING] != 0)
            n++;
    return n;
}

#endif /* TW_DMA_RING_H */
