/*
 * tw_hal_pulp_l3.c — the L3 part of tw_hal.h on PULP (GAP8 HyperRAM, GAP9 octo-SPI RAM) through
 * PMSIS: tw_l3_read is a cluster-side RAM read (pi_cl_ram_read, the µDMA behind it) into L2,
 * tw_l3_write a cluster-side RAM write (pi_cl_ram_write) of an L2 buffer,
 * tw_l3_wait the matching pi_cl_ram_read_wait / pi_cl_ram_write_wait (seed 001 §4.4: weights of
 * the next layer stream from L3
 * while the current layer runs). Only projects that use L3 compile this file.
 *
 * The firmware opens the RAM device and gives it to tw_hal_pulp_set_ram() (declared in
 * tw_hal_pulp.h) before running the network, and loads the project's weights_l3.bin image at RAM
 * address TW_L3_BASE (network.h), which tw_network_run receives as its `l3` argument
 * (gap_sdk/main.c does all three). Requests live in a small ring of TW_PULP_L3_REQS entries;
 * when it is full the oldest is waited for, which is always safe.
 */
#include "pmsis.h"

#include "tw_hal.h"
#include "tw_hal_pulp.h"

#include <stddef.h>
#include <stdint.h>

#ifndef TW_PULP_L3_REQS
#define TW_PULP_L3_REQS 4
#endif

static struct pi_device *g_ram;
static pi_cl_ram_req_t g_req[TW_PULP_L3_REQS];
static tw_dma_id_t g_owner[TW_PULP_L3_REQS];      /* transfer of each entry; 0 = free */
static uint8_t g_write[TW_PULP_L3_REQS];          /* entry is a write (L2 -> L3) */
static tw_dma_id_t g_next = 1;
static uint64_t g_transfers, g_bytes;

void tw_hal_pulp_set_ram(struct pi_device *ram)
{
    g_ram = ram;
}

static int oldest(void)
{
    int i, best = -1;
    for (i = 0; i < TW_PULP_L3_REQS; i++)
        if (g_owner[i] != 0 && (best < 0 || g_owner[i] < g_owner[best]))
            best = i;
    return best;
}

static void finish(int slot)
{
    if (g_write[slot])
        pi_cl_ram_write_wait(&g_req[slot]);
    else
        pi_cl_ram_read_wait(&g_req[slot]);
}

static tw_dma_id_t start(void *l2, uint32_t l3, uint32_t bytes, int write)
{
    int i, slot = -1;
    tw_dma_id_t id = g_next++;
    if (g_next == 0) g_next = 1;
    for (i = 0; i < TW_PULP_L3_REQS && slot < 0; i++)
        if (g_owner[i] == 0)
            slot = i;
    if (slot < 0) {                                  /* ring full: finish the oldest */
        slot = oldest();
        finish(slot);
    }
    g_owner[slot] = id;
    g_write[slot] = (uint8_t)write;
    g_transfers++;
    g_bytes += bytes;
    if (write)
        pi_cl_ram_write(g_ram, l3, l2, bytes, &g_req[slot]);
    else
        pi_cl_ram_read(g_ram, l3, l2, bytes, &g_req[slot]);
    return id;
}

tw_dma_id_t tw_l3_read(void *l2, const void *l3, uint32_t bytes)
{
    return start(l2, (uint32_t)(uintptr_t)l3, bytes, 0);
}

tw_dma_id_t tw_l3_write(void *l3, const void *l2, uint32_t bytes)
{
    return start((void *)(uintptr_t)l2, (uint32_t)(uintptr_t)l3, bytes, 1);
}

void tw_l3_wait(tw_dma_id_t id)
{
    int i;
    for (i = 0; i < TW_PULP_L3_REQS; i++)
        if (g_owner[i] == id && id != 0) {
            finish(i);
            g_owner[i] = 0;
        }
}

void tw_hal_get_l3_stats(uint64_t *transfers, uint64_t *bytes)
{
    *transfers = g_transfers;
    *bytes = g_bytes;
}
