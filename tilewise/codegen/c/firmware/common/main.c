/*
 * main.c — the program of a bare-metal tilewise firmware, one for every platform that has one
 * (pulp-open, Cortex-M: codegen/c/firmware/common, copied into the project's firmware/): runs the
 * network on each embedded input (inputs.c: TW_FW_INPUTS samples, each one input per network
 * input) and prints one block per inference, the output protocol validate/firmware_run.py reads:
 *
 *     TW_OUT <n> <output bytes in hex: every output, back to back in tw_network_run's order>
 *     TW_CYCLES <n> <cycles of tw_network_run>              (a platform that counts cycles)
 *     TW_LAYERS <n> <cycles of layer 0> <cycles of layer 1> ...  (the same)
 *     TW_COMPUTE <n> <cycles of layer 0's compute phases> ...    (TW_FW_COMPUTE_PHASES: barrier
 *                                                                  to barrier, per tile)
 *     TW_DMA <n> <L2<->L1 bytes> <transfers> <contiguous L2 chunks>
 *     TW_NE16 <n> <jobs> <NE16 cycles of layer 0> <its jobs that ended before their wait> ...
 *                                                  (-DTW_NE16_ENGINE: NE16 in the cluster,
 *                                                  tw_hal_ne16_pulp_open.c)
 *
 * (the output printed from the L2 arena where network.h defines TW_OUTPUT_IN_ARENA: the network
 * then copies nothing out), then "TW_DONE" and exits with status 0 (1 when a DMA transfer was left pending or waited
 * wrongly). What differs between platforms comes from the platform's tw_fw.h:
 *   TW_FW_L1, TW_FW_L2        the arenas' sections (unless network.h's TW_L1_SECTION /
 *                             TW_L2_SECTION are defined)
 *   tw_fw_cycles()            the cycle counter (pulp-open: core 0's mcycle; Cortex-M: the board
 *                             layer's, tw_board.h: the STM32H7's DWT at 480 MHz)
 *   tw_fw_counts_cycles()     0 where there is none (QEMU's stub board): no cycle lines
 *   TW_FW_COMPUTE_PHASES      1 where the cores' compute phases are timed apart from the DMA
 *                             (pulp-open's cluster); 0 where one core computes in place
 *   tw_fw_puts / tw_fw_put_uint / tw_fw_put_hex_bytes / tw_fw_exit (tw_fw.c)
 * Instruction counts come from outside (an instruction-counting emulator stopping at
 * tw_fw_mark).
 */
#include <stdint.h>

#include "tw_fw.h"

/* the arenas' placement (network.h): the firmware's own sections unless defined */
#ifndef TW_L1_SECTION
#define TW_L1_SECTION TW_FW_L1
#endif
#ifndef TW_L2_SECTION
#define TW_L2_SECTION TW_FW_L2
#endif

#include "inputs.h"
#include "network.h"
#include "tw_hal.h"

static int8_t l1_arena[TW_NETWORK_L1_BYTES] TW_L1_SECTION __attribute__((aligned(4)));
static int8_t l2_arena[TW_NETWORK_L2_BYTES] TW_L2_SECTION __attribute__((aligned(4)));
#ifdef TW_OUTPUT_IN_ARENA
/* the output is read where the network leaves it in the L2 arena (network.h): no buffer */
#define output (l2_arena + TW_OUTPUT_IN_ARENA)
#else
/* the outputs of one inference, back to back in tw_network_run's order */
static int8_t output[TW_NETWORK_OUTPUT_TOTAL_BYTES];
#endif
/* the HAL's counters of one inference (printed as TW_DMA): the firmware's own, static like the
 * profiling arrays, so that the stack measured (tw_fw.c) is the network's and main's calls */
static tw_hal_stats_t st;
static uint32_t layer_start[TW_NETWORK_LAYERS];
static uint32_t layer_cycles[TW_NETWORK_LAYERS];
#ifdef TW_NE16_ENGINE
uint32_t tw_ne16_cycles(void);
long tw_ne16_early(void);
long tw_ne16_jobs(void);
static uint32_t ne16_start[TW_NETWORK_LAYERS], ne16_early_start[TW_NETWORK_LAYERS];
static uint32_t ne16_cycles[TW_NETWORK_LAYERS], ne16_early[TW_NETWORK_LAYERS];
#endif
#if TW_FW_COMPUTE_PHASES
static uint32_t compute_cycles[TW_NETWORK_LAYERS];
static int current_layer;
static uint32_t phase_start;
#endif

/* network.c calls it when layer `index` starts (end 0) and returns (end 1): -DTW_PROFILE_LAYERS */
void tw_profile_layer(int index, int end)
{
    uint32_t now = tw_fw_cycles();
#ifdef TW_NE16_ENGINE
    if (end) {
        ne16_cycles[index] = tw_ne16_cycles() - ne16_start[index];
        ne16_early[index] = (uint32_t)tw_ne16_early() - ne16_early_start[index];
    } else {
        ne16_start[index] = tw_ne16_cycles();
        ne16_early_start[index] = (uint32_t)tw_ne16_early();
    }
#endif
    if (end) {
        layer_cycles[index] = now - layer_start[index];
    } else {
        layer_start[index] = now;
#if TW_FW_COMPUTE_PHASES
        compute_cycles[index] = 0;
        current_layer = index;
#endif
    }
}

/* the tiles' compute phases (layers.h): start (end 0) and end (end 1) */
void tw_profile_compute(int end)
{
#if TW_FW_COMPUTE_PHASES
    uint32_t now = tw_fw_cycles();
    if (end)
        compute_cycles[current_layer] += now - phase_start;
    else
        phase_start = now;
#else
    (void)end;
#endif
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

/* " <v0> <v1> ..." */
static void put_uints(const uint32_t *v, int n)
{
    int i;
    for (i = 0; i < n; i++) {
        tw_fw_puts(" ");
        tw_fw_put_uint(v[i]);
    }
}

int tw_fw_main(void)
{
    int n, status = 0;
#ifdef TW_NE16_ENGINE
    int i;
#endif
    int8_t *outs[TW_NETWORK_OUTPUTS];
    tw_network_output_pointers(output, outs);
#ifdef TW_NETWORK_STATE_BYTES
    tw_network_reset(l2_arena);   /* the inputs are consecutive inferences from a zero state */
#endif
    for (n = 0; n < TW_FW_INPUTS; n++) {
        uint32_t t0, t1;
#ifdef TW_NE16_ENGINE
        long jobs0 = tw_ne16_jobs();
#endif
        tw_hal_reset_stats();
        tw_fw_mark(0);
        t0 = tw_fw_cycles();
        /* tw_network_run(inputs…, outputs…, l1, l2) (network.h) */
        TW_NETWORK_RUN_IO(tw_fw_input_table[n], outs, l1_arena, l2_arena);
        t1 = tw_fw_cycles();
        tw_fw_mark(1);
        tw_hal_get_stats(&st);
        put_line_start("TW_OUT", n);
        tw_fw_puts(" ");
        tw_fw_put_hex_bytes(output, TW_NETWORK_OUTPUT_TOTAL_BYTES);
        if (tw_fw_counts_cycles()) {
            put_line_start("\nTW_CYCLES", n);
            tw_fw_puts(" ");
            tw_fw_put_uint(t1 - t0);
            put_line_start("\nTW_LAYERS", n);
            put_uints(layer_cycles, TW_NETWORK_LAYERS);
#if TW_FW_COMPUTE_PHASES
            put_line_start("\nTW_COMPUTE", n);
            put_uints(compute_cycles, TW_NETWORK_LAYERS);
#endif
        }
        put_line_start("\nTW_DMA", n);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)st.dma_bytes);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)st.dma_transfers);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)st.dma_chunks);
#ifdef TW_NE16_ENGINE
        put_line_start("\nTW_NE16", n);
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)(tw_ne16_jobs() - jobs0));
        for (i = 0; i < TW_NETWORK_LAYERS; i++) {
            tw_fw_puts(" ");
            tw_fw_put_uint(ne16_cycles[i]);
            tw_fw_puts(" ");
            tw_fw_put_uint(ne16_early[i]);
        }
#endif
        tw_fw_puts("\n");
        if (st.dma_pending || st.dma_bad_waits)
            status = 1;
    }
    tw_fw_puts("TW_DONE\n");
    return status;
}
