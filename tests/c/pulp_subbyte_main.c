/*
 * Harness of tests/test_pulp_subbyte.py and bench/pulp_subbyte.py: the pulp sub-byte conv
 * (tw_pulp_subbyte.h) case by case against outputs computed in Python (cases.h, written by
 * tests/pulp_subbyte_cases.py), on the pulp-open cluster (GVSoC, the project's bare-metal runtime
 * and tw_fork) or, built with -DTW_SB_HOST, on the host (the kernels' C path; the cores of a run
 * executed one after the other, which the kernels allow: no core reads what another writes).
 *
 * A case: prm [0..12) the window (in_h in_w out_h out_w k_h k_w s_h s_w pad_t pad_l pad_b pad_r),
 * [12] in_c, [13] out_c, [14] x_bits, [15] w_bits, [16] y_bits, [17] pad value, [18] zero point,
 * [19] qmin, [20] qmax, [21] 1 for the int8 kernel tw_pulp_conv2d_s8 (the bench's 8-bit
 * reference); buffers: out, im2col, x, w, bias, words (data copied into the arena word-aligned;
 * NULL data = filled with 0x5A). A line per run:
 *     TW_CASE <case> <cores> <mismatching bytes> <cycles>
 * then TW_DONE. Marshalling only: the arithmetic is the kernels'.
 */
#include <stdint.h>
#include <string.h>

#include "tw_pulp.h"

typedef struct {
    const void *data;
    int bytes;
} tw_buf_t;

typedef struct {
    int kind, variant;
    int32_t prm[24];
    int nbuf;
    const tw_buf_t *bufs;
    int out;
    const int8_t *want;
    int cores_mask;
} tw_case_t;

#include "cases.h"

#ifdef TW_SB_HOST
#include <stdio.h>
#define ARENA (1 << 20)
static int8_t g_arena[ARENA] __attribute__((aligned(4)));
static void put_text(const char *s) { fputs(s, stdout); }
static void put_uint(uint32_t v) { printf("%lu", (unsigned long)v); }
#else
#include "tw_fw.h"
#include "tw_hal.h"
#define ARENA 49152
static TW_FW_L1 int8_t g_arena[ARENA] __attribute__((aligned(4)));
static void put_text(const char *s) { tw_fw_puts(s); }
static void put_uint(uint32_t v) { tw_fw_put_uint(v); }
#endif

static int8_t *g_buf[8];
static const tw_case_t *g_case;

static tw_window_t window(const int32_t *g)
{
    tw_window_t w;
    w.in_h = g[0]; w.in_w = g[1]; w.out_h = g[2]; w.out_w = g[3];
    w.k_h = g[4]; w.k_w = g[5]; w.s_h = g[6]; w.s_w = g[7]; w.d_h = 1; w.d_w = 1;
    w.pad_t = g[8]; w.pad_l = g[9]; w.pad_b = g[10]; w.pad_r = g[11];
    return w;
}

static tw_pulp_rq_t rq_of(const int32_t *p)
{
    tw_pulp_rq_t r;
    r.words = (const int32_t *)(const void *)g_buf[5];
    r.n = p[13];
    r.zero_point = p[18];
    r.qmin = p[19];
    r.qmax = p[20];
    return r;
}

static void run_int8(const int32_t *p, int core, int cores)
{
    tw_pulp_conv_args_t k;
    memset(&k, 0, sizeof k);
    k.a.win = window(p);
    k.a.in = g_buf[2];
    k.a.in_c = p[12];
    k.a.w = g_buf[3];
    k.a.bias = (const int32_t *)(const void *)g_buf[4];
    k.a.out = g_buf[0];
    k.a.out_c = p[13];
    k.a.pad_value = (int8_t)p[17];
    k.a.acc_flags = TW_ACC_WHOLE;
    k.a.im2col = g_buf[1];
    k.rq = rq_of(p);
    TW_PULP_BY_VARIANT(g_case->variant, tw_pulp_conv2d_s8, (&k, core, cores));
}

static void job(void *arg)
{
    const int32_t *p = g_case->prm;
    tw_pulp_conv_sb_args_t a;
    int core, cores;
#ifdef TW_SB_HOST
    core = ((const int *)arg)[0];
    cores = ((const int *)arg)[1];
#else
    (void)arg;
    core = tw_core_id();
    cores = tw_core_count();
#endif
    if (p[21]) {
        run_int8(p, core, cores);
        return;
    }
    a.win = window(p);
    a.in = (const uint8_t *)g_buf[2];
    a.in_c = p[12];
    a.x_bits = p[14];
    a.w = (const uint8_t *)g_buf[3];
    a.bias = (const int32_t *)(const void *)g_buf[4];
    a.out = (uint8_t *)g_buf[0];
    a.out_c = p[13];
    a.y_bits = p[16];
    a.pad_value = p[17];
    a.im2col = (uint8_t *)g_buf[1];
    a.rq = rq_of(p);
    if (p[15] == 8)
        TW_PULP_BY_VARIANT(g_case->variant, tw_pulp_conv2d_sb_w8, (&a, core, cores));
    else if (p[15] == 4)
        TW_PULP_BY_VARIANT(g_case->variant, tw_pulp_conv2d_sb_w4, (&a, core, cores));
    else
        TW_PULP_BY_VARIANT(g_case->variant, tw_pulp_conv2d_sb_w2, (&a, core, cores));
}

/* Lay the case's buffers out in the arena; 0 when they do not fit. */
static int place(const tw_case_t *c)
{
    int i, off = 0;
    for (i = 0; i < c->nbuf; i++) {
        int n = (c->bufs[i].bytes + 3) & ~3;
        if (off + n > ARENA)
            return 0;
        g_buf[i] = g_arena + off;
        if (c->bufs[i].data)
            memcpy(g_buf[i], c->bufs[i].data, (size_t)c->bufs[i].bytes);
        else
            memset(g_buf[i], 0x5A, (size_t)n);
        off += n;
    }
    return 1;
}

static uint32_t run(int cores)
{
#ifdef TW_SB_HOST
    int core;
    for (core = 0; core < cores; core++) {
        int arg[2];
        arg[0] = core;
        arg[1] = cores;
        job(arg);
    }
    return 0;
#else
    uint32_t t0 = tw_fw_cycles();
    tw_fork(cores, job, NULL);
    return tw_fw_cycles() - t0;
#endif
}

static int run_cases(void)
{
    int i, cores;
    for (i = 0; i < TW_CASES; i++) {
        const tw_case_t *c = &tw_cases[i];
        for (cores = 1; cores <= 8; cores++) {
            uint32_t cycles, bad = 0;
            int j;
            if (!(c->cores_mask & (1 << cores)))
                continue;
            if (!place(c))
                return 2;
            g_case = c;
            cycles = run(cores);
            for (j = 0; j < c->bufs[c->out].bytes; j++)
                bad += g_buf[c->out][j] != c->want[j];
            put_text("TW_CASE ");
            put_uint((uint32_t)i);
            put_text(" ");
            put_uint((uint32_t)cores);
            put_text(" ");
            put_uint(bad);
            put_text(" ");
            put_uint(cycles);
            put_text("\n");
        }
    }
    put_text("TW_DONE\n");
    return 0;
}

#ifdef TW_SB_HOST
int main(void)
{
    return run_cases();
}
#else
int tw_fw_main(void)
{
    return run_cases();
}
#endif
