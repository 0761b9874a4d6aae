/*
 * bench_main.c — timing harness of bench/ for a generated tilewise project (issue 5, table 1).
 *
 *   bench_main INPUT.bin WARMUP N OUTPUT.bin [WEIGHTS_L3.bin]
 *
 * Reads one input of TW_NETWORK_INPUT_BYTES bytes into memory, allocates the L1/L2 arenas the
 * project declares (network.h), runs tw_network_run WARMUP times untimed, then N times timed
 * with clock_gettime(CLOCK_MONOTONIC) around the whole loop, and prints
 *
 *   TW_BENCH {"inferences": N, "ns_per_inference": T}
 *
 * It writes the last output to OUTPUT.bin (so the run can be checked against the peers) and
 * returns 1 if the host HAL saw a DMA protocol error. N = 0 runs only the warm-up: the callgrind
 * baseline of bench/callgrind.py. Only the network's own sources and the host HAL are linked.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "network.h"
#include "tw_hal.h"

static unsigned char *read_exact(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = (unsigned char *)malloc(bytes + 1);
    size_t got;
    if (!f || !buf) {
        if (f) fclose(f);
        free(buf);
        return NULL;
    }
    got = fread(buf, 1, bytes + 1, f);
    fclose(f);
    if (got != bytes) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void run_once(const int8_t *in, int8_t *out, void *l1, void *l2, void *l3)
{
#if TW_NETWORK_L3_BYTES
    tw_network_run((const TW_INPUT_TYPE *)in, (TW_OUTPUT_TYPE *)out, l1, l2, l3);
#else
    (void)l3;
    tw_network_run((const TW_INPUT_TYPE *)in, (TW_OUTPUT_TYPE *)out, l1, l2);
#endif
}

int main(int argc, char **argv)
{
    unsigned char *input, *l3 = NULL;
    int8_t *output;
    void *l1, *l2;
    long warmup, n, i;
    struct timespec t0, t1;
    double ns;
    tw_hal_stats_t st;
    FILE *f;

    if (argc < 5 || (TW_NETWORK_L3_BYTES && argc < 6)) {
        fprintf(stderr, "usage: %s INPUT.bin WARMUP N OUTPUT.bin%s\n", argv[0],
                TW_NETWORK_L3_BYTES ? " WEIGHTS_L3.bin" : "");
        return 2;
    }
    warmup = strtol(argv[2], NULL, 10);
    n = strtol(argv[3], NULL, 10);
    input = read_exact(argv[1], TW_NETWORK_INPUT_BYTES);
    if (!input) {
        fprintf(stderr, "bench_main: %s must hold exactly %d bytes\n", argv[1], TW_NETWORK_INPUT_BYTES);
        return 1;
    }
    if (TW_NETWORK_L3_BYTES) {
        l3 = read_exact(argv[5], (size_t)TW_NETWORK_L3_BYTES);
        if (!l3) {
            fprintf(stderr, "bench_main: cannot read the L3 image %s\n", argv[5]);
            return 1;
        }
    }
    l1 = malloc(TW_NETWORK_L1_BYTES + 4);
    l2 = malloc(TW_NETWORK_L2_BYTES + 4);
    output = (int8_t *)malloc(TW_NETWORK_OUTPUT_BYTES);
    if (!l1 || !l2 || !output) {
        fprintf(stderr, "bench_main: out of memory\n");
        return 1;
    }
    memset(l1, 0xA5, TW_NETWORK_L1_BYTES + 4);
    memset(l2, 0x5A, TW_NETWORK_L2_BYTES + 4);

    for (i = 0; i < warmup; i++)
        run_once((const int8_t *)input, output, l1, l2, l3);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (i = 0; i < n; i++)
        run_once((const int8_t *)input, output, l1, l2, l3);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);

    f = fopen(argv[4], "wb");
    if (!f || fwrite(output, 1, TW_NETWORK_OUTPUT_BYTES, f) != TW_NETWORK_OUTPUT_BYTES) {
        fprintf(stderr, "bench_main: cannot write %s\n", argv[4]);
        return 1;
    }
    fclose(f);
    tw_hal_get_stats(&st);
    printf("TW_BENCH {\"inferences\": %ld, \"ns_per_inference\": %.1f}\n", n, n > 0 ? ns / (double)n : 0.0);
    free(input);
    free(output);
    free(l1);
    free(l2);
    free(l3);
    return (st.dma_races || st.dma_bad_waits || st.dma_pending) ? 1 : 0;
}
