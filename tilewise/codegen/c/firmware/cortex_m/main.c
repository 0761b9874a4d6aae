/*
 * main.c — the firmware's program (Cortex-M): runs the network on each embedded input (inputs.c:
 * TW_FW_INPUTS samples, each one input per network input) and prints one block per inference:
 *
 *     TW_OUT <n> <output bytes in hex: every output, back to back in tw_network_run's order>
 *     TW_DMA <n> <L2<->L1 bytes> <transfers> <contiguous L2 chunks>
 *
 * then "TW_DONE" and exits with status 0 (1 when a copy was left unwaited). The L1 arena is in
 * DTCM, the L2 arena in the main SRAM (link_*.ld). Instruction counts come from outside (an
 * instruction-counting emulator stopping at tw_fw_mark); QEMU counts nothing.
 */
#include <stdint.h>

#include "tw_fw.h"

/* the arenas' placement (network.h): the firmware's own sections unless defined */
#ifndef TW_L1_SECTION
#define TW_L1_SECTION TW_FW_DTCM
#endif

#include "inputs.h"
#include "network.h"
#include "tw_hal.h"

static int8_t l1_arena[TW_NETWORK_L1_BYTES] TW_L1_SECTION __attribute__((aligned(4)));
static int8_t l2_arena[TW_NETWORK_L2_BYTES] TW_L2_SECTION __attribute__((aligned(4)));
/* the outputs of one inference, back to back in tw_network_run's order */
static int8_t output[TW_NETWORK_OUTPUT_TOTAL_BYTES];

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
    int n, status = 0;
    int8_t *outs[TW_NETWORK_OUTPUTS];
    tw_network_output_pointers(output, outs);
    for (n = 0; n < TW_FW_INPUTS; n++) {
        tw_hal_stats_t st;
        tw_hal_reset_stats();
        tw_fw_mark(0);
        /* tw_network_run(inputs…, outputs…, l1, l2) (network.h) */
        TW_NETWORK_RUN_IO(tw_fw_input_table[n], outs, l1_arena, l2_arena);
        tw_fw_mark(1);
        tw_hal_get_stats(&st);
        put_line_start("TW_OUT", n);
        tw_fw_puts(" ");
        tw_fw_put_hex_bytes(output, TW_NETWORK_OUTPUT_TOTAL_BYTES);
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
