/*
 * main.c — the firmware's program (Cortex-M): runs the network on each embedded input (inputs.c:
 * TW_FW_INPUTS samples, each one input per network input) and prints one block per inference:
 *
 *     TW_OUT <n> <output bytes in hex: every output, back to back in tw_network_run's order>
 *     TW_CYCLES <n> <core cycles of tw_network_run>           (a board that counts cycles)
 *     TW_LAYERS <n> <cycles of layer 0> <cycles of layer 1> ...  (the same)
 *     TW_DMA <n> <L2<->L1 bytes> <transfers> <contiguous L2 chunks>
 *
 * then "TW_DONE" and exits with status 0 (1 when a copy was left unwaited). The L1 arena is in
 * DTCM, the L2 arena in the AXI SRAM (sections.ld). Cycles come from the board layer's counter
 * (tw_board.h: the STM32H7's DWT at 480 MHz); QEMU counts none (its stub board prints no
 * cycle lines), and instruction counts come from outside (an instruction-counting emulator
 * stopping at tw_fw_mark).
 */
#include <stdint.h>

#include "tw_fw.h"

/* the arenas' placement (network.h): the firmware's own sections unless defined */
#ifndef TW_L1_SECTION
#define TW_L1_SECTION TW_FW_DTCM
#endif
#ifndef TW_L2_SECTION
#define TW_L2_SECTION TW_FW_L2
#endif

#include "inputs.h"
#include "network.h"
#include "tw_board.h"
#include "tw_hal.h"

static int8_t l1_arena[TW_NETWORK_L1_BYTES] TW_L1_SECTION __attribute__((aligned(4)));
static int8_t l2_arena[TW_NETWORK_L2_BYTES] TW_L2_SECTION __attribute__((aligned(4)));
/* the outputs of one inference, back to back in tw_network_run's order */
static int8_t output[TW_NETWORK_OUTPUT_TOTAL_BYTES];
static uint32_t layer_start[TW_NETWORK_LAYERS];
static uint32_t layer_cycles[TW_NETWORK_LAYERS];

/* network.c calls it when layer `index` starts (end 0) and returns (end 1): -DTW_PROFILE_LAYERS */
void tw_profile_layer(int index, int end)
{
    uint32_t now = tw_board_cycles();
    if (end)
        layer_cycles[index] = now - layer_start[index];
    else
        layer_start[index] = now;
}

/* the tiles' compute phases (layers.h): one core computes in place, nothing to separate */
void tw_profile_compute(int end)
{
    (void)end;
}

/* Called with 0 before an inference and 1 after it: a place for a counting emulator to stop. */
__attribute__((noinline)) void tw_fw_mark(int end)
{
    __asm__ volatile("" : : "r"(end) : "memory");
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
        tw_fw_mark(0);
        t0 = tw_board_cycles();
        /* tw_network_run(inputs…, outputs…, l1, l2) (network.h) */
        TW_NETWORK_RUN_IO(tw_fw_input_table[n], outs, l1_arena, l2_arena);
        t1 = tw_board_cycles();
        tw_fw_mark(1);
        tw_hal_get_stats(&st);
        put_line_start("TW_OUT", n);
        tw_fw_puts(" ");
        tw_fw_put_hex_bytes(output, TW_NETWORK_OUTPUT_TOTAL_BYTES);
        if (tw_board_clock_hz()) {
            put_line_start("\nTW_CYCLES", n);
            tw_fw_puts(" ");
            tw_fw_put_uint(t1 - t0);
            put_line_start("\nTW_LAYERS", n);
            for (i = 0; i < TW_NETWORK_LAYERS; i++) {
                tw_fw_puts(" ");
                tw_fw_put_uint(layer_cycles[i]);
            }
        }
        put_line_start("\nTW_DMA", n);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)st.dma_bytes);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)st.dma_transfers);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)st.dma_chunks);
        tw_fw_puts("\n");
        if (st.dma_pending || st.dma_bad_waits)
            status = 1;
    }
    tw_fw_puts("TW_DONE\n");
    return status;
}
