/*
 * main.c — the firmware's program (pulp-open): runs the network on each embedded input
 * (inputs.c: TW_FW_INPUTS samples, each one input per network input), on the cluster cores, and prints
 * one block per inference:
 *
 *     TW_OUT <n> <output bytes in hex: every output, back to back in tw_network_run's order>
 *     TW_CYCLES <n> <cycles of tw_network_run, core 0's mcycle>
 *     TW_LAYERS <n> <cycles of layer 0> <cycles of layer 1> ...
 *     TW_COMPUTE <n> <cycles of layer 0's compute phases> ...   (barrier to barrier, per tile)
 *     TW_DMA <n> <L2<->L1 bytes> <transfers> <contiguous L2 chunks>
 *
 * then "TW_DONE" and exits with status 0 (1 when a DMA transfer was left pending).
 */
#include <stdint.h>

#include "tw_fw.h"

/* the arenas' placement (network.h): the firmware's own sections unless defined */
#ifndef TW_L1_SECTION
#define TW_L1_SECTION TW_FW_L1
#endif

#include "inputs.h"
#include "network.h"
#include "tw_hal.h"

static int8_t l1_arena[TW_NETWORK_L1_BYTES] TW_L1_SECTION __attribute__((aligned(4)));
static int8_t l2_arena[TW_NETWORK_L2_BYTES] TW_L2_SECTION __attribute__((aligned(4)));
/* the outputs of one inference, back to back in tw_network_run's order */
static int8_t output[TW_NETWORK_OUTPUT_TOTAL_BYTES];
static uint32_t layer_start[TW_NETWORK_LAYERS];
static uint32_t layer_cycles[TW_NETWORK_LAYERS];
static uint32_t compute_cycles[TW_NETWORK_LAYERS];
static int current_layer;
static uint32_t phase_start;

void tw_profile_layer(int index, int end)
{
    uint32_t now = tw_fw_cycles();
    if (end) {
        layer_cycles[index] = now - layer_start[index];
    } else {
        layer_start[index] = now;
        compute_cycles[index] = 0;
        current_layer = index;
    }
}

void tw_profile_compute(int end)
{
    uint32_t now = tw_fw_cycles();
    if (end)
        compute_cycles[current_layer] += now - phase_start;
    else
        phase_start = now;
}

static void put_line_start(const char *tag, int n)
{
    tw_fw_puts(tag);
    tw_fw_puts(" ");
    tw_fw_put_uint((uint32_t)n);
}

int tw_fw_main(void)
{
    int n, i, status = 0;
    int8_t *outs[TW_NETWORK_OUTPUTS];
    tw_network_output_pointers(output, outs);
    for (n = 0; n < TW_FW_INPUTS; n++) {
        tw_hal_stats_t st;
        uint32_t t0, t1;
        tw_hal_reset_stats();
        t0 = tw_fw_cycles();
        /* tw_network_run(inputs…, outputs…, l1, l2) (network.h) */
        TW_NETWORK_RUN_IO(tw_fw_input_table[n], outs, l1_arena, l2_arena);
        t1 = tw_fw_cycles();
        tw_hal_get_stats(&st);
        put_line_start("TW_OUT", n);
        tw_fw_puts(" ");
        tw_fw_put_hex_bytes(output, TW_NETWORK_OUTPUT_TOTAL_BYTES);
        put_line_start("\nTW_CYCLES", n);
        tw_fw_puts(" ");
        tw_fw_put_uint(t1 - t0);
        put_line_start("\nTW_LAYERS", n);
        for (i = 0; i < TW_NETWORK_LAYERS; i++) {
            tw_fw_puts(" ");
            tw_fw_put_uint(layer_cycles[i]);
        }
        put_line_start("\nTW_COMPUTE", n);
        for (i = 0; i < TW_NETWORK_LAYERS; i++) {
            tw_fw_puts(" ");
            tw_fw_put_uint(compute_cycles[i]);
        }
        put_line_start("\nTW_DMA", n);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)st.dma_bytes);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)st.dma_transfers);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)st.dma_chunks);
        tw_fw_puts("\n");
        if (st.dma_pending)
            status = 1;
    }
    tw_fw_puts("TW_DONE\n");
    return status;
}
