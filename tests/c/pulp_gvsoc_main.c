/*
 * Firmware program of tests/test_pulp_gvsoc.py: the pulp kernels on the pulp-open cluster (GVSoC),
 * case by case against golden outputs computed in Python, on the project's bare-metal runtime
 * (codegen/c/firmware/pulp_open: crt0, linker script, tw_fw.c; tw_hal_pulp_open.c for tw_fork).
 *
 * cases.c (generated) holds TW_CASES cases: a kernel kind, its requant variant, integer
 * parameters, buffers (L2 data copied into the L1 arena in order, word-aligned; NULL data = an
 * output or scratch buffer, filled with 0x5A) and the expected bytes of the output buffer. Each
 * case runs on 1, 3 and 8 cores (tw_fork); a line per run:
 *     TW_CASE <case> <cores> <mismatching bytes> <cycles of the fork>
 * then TW_DONE. Marshalling only: the arithmetic is the kernels'.
 */
#include <stdint.h>
#include <string.h>

#include "tw_fw.h"
#include "tw_hal.h"
#include "tw_pulp.h"

typedef struct {
    const void *data;          /* L2 contents, or NULL (output / scratch: 0x5A) */
    int bytes;
} tw_buf_t;

typedef struct {
    int kind, variant;
    int32_t prm[24];
    int nbuf;
    const tw_buf_t *bufs;
    int out;                   /* the buffer compared with want */
    const int8_t *want;
    int cores_mask;            /* bit c: run on c cores */
} tw_case_t;

enum { CONV, CONV1X1, FC, DW, ADD, SUB, MUL, MAXPOOL, AVGPOOL, GAP, GAP_ONNX, NOP };

#include "cases.h"

#define ARENA 49152
static TW_FW_L1 int8_t g_arena[ARENA] __attribute__((aligned(4)));
static int8_t *g_buf[32];
static const tw_case_t *g_case;

/* prm layout of windowed kinds: [0..14) the tw_window_t, then kind-specific */
static tw_window_t window(const int32_t *g)
{
    tw_window_t w;
    w.in_h = g[0]; w.in_w = g[1]; w.out_h = g[2]; w.out_w = g[3];
    w.k_h = g[4]; w.k_w = g[5]; w.s_h = g[6]; w.s_w = g[7]; w.d_h = 1; w.d_w = 1;
    w.pad_t = g[8]; w.pad_l = g[9]; w.pad_b = g[10]; w.pad_r = g[11];
    return w;
}

static tw_pulp_rq_t rq_of(const int32_t *p, int8_t *words, int n)
{
    tw_pulp_rq_t r;
    r.words = (const int32_t *)(const void *)words;
    r.n = n;
    r.zero_point = p[0];
    r.qmin = p[1];
    r.qmax = p[2];
    return r;
}

/* conv / 1x1 / dense: prm [12..) in_c per C tile (prm[12 + t], t < prm[16]), out_c prm[17],
 * pad prm[18], rq prm[19..22); bufs: out, im2col, psum, bias, words, then x_t, w_t per C tile */
static void run_mm(int core, int cores)
{
    const tw_case_t *c = g_case;
    const int32_t *p = c->prm;
    int t, tiles = p[16];
    for (t = 0; t < tiles; t++) {
        int flags = (t == 0 ? TW_ACC_FIRST : 0) | (t == tiles - 1 ? TW_ACC_LAST : 0);
        if (c->kind == FC) {
            tw_pulp_fc_args_t f;
            memset(&f, 0, sizeof f);
            f.a.in = g_buf[5 + 2 * t];
            f.a.n_rows = p[0];
            f.a.in_c = p[12 + t];
            f.a.w = g_buf[6 + 2 * t];
            f.a.bias = (const int32_t *)(const void *)g_buf[3];
            f.a.out = g_buf[0];
            f.a.out_c = p[17];
            f.a.psum = (int32_t *)(void *)g_buf[2];
            f.a.acc_flags = flags;
            f.rq = rq_of(p + 19, g_buf[4], p[17]);
            TW_PULP_BY_VARIANT(c->variant, tw_pulp_fully_connected_s8, (&f, core, cores));
        } else {
            tw_pulp_conv_args_t k;
            memset(&k, 0, sizeof k);
            k.a.win = window(p);
            k.a.in = g_buf[5 + 2 * t];
            k.a.in_c = p[12 + t];
            k.a.w = g_buf[6 + 2 * t];
            k.a.bias = (const int32_t *)(const void *)g_buf[3];
            k.a.out = g_buf[0];
            k.a.out_c = p[17];
            k.a.pad_value = (int8_t)p[18];
            k.a.psum = (int32_t *)(void *)g_buf[2];
            k.a.acc_flags = flags;
            k.a.im2col = g_buf[1];
            k.rq = rq_of(p + 19, g_buf[4], p[17]);
            if (c->kind == CONV)
                TW_PULP_BY_VARIANT(c->variant, tw_pulp_conv2d_s8, (&k, core, cores));
            else
                TW_PULP_BY_VARIANT(c->variant, tw_pulp_conv1x1_s8, (&k, core, cores));
        }
        tw_barrier();
    }
}

/* depthwise: prm [12] channels, [13] pad, [14..17) rq; bufs: out, scratch, x, w, bias, words */
static void run_dw(int core, int cores)
{
    const int32_t *p = g_case->prm;
    tw_pulp_dw_args_t d;
    memset(&d, 0, sizeof d);
    d.a.win = window(p);
    d.a.in = g_buf[2];
    d.a.in_c = p[12];
    d.a.depth_mult = 1;
    d.a.w = g_buf[3];
    d.a.bias = (const int32_t *)(const void *)g_buf[4];
    d.a.out = g_buf[0];
    d.a.pad_value = (int8_t)p[13];
    d.rq = rq_of(p + 14, g_buf[5], p[12]);
    d.scratch = g_buf[1];
    TW_PULP_BY_VARIANT(g_case->variant, tw_pulp_depthwise_s8, (&d, core, cores));
}

/* add / sub / mul: prm [0..12) the tw_add_params_t words (mul: a_zp b_zp out_mult out_shift
 * out_zp qmin qmax), [12] n, [13] the add's `right`, [14] 1 for the folded form with its
 * tw_add_fold_t in [15..21); bufs: out, a, b (add / sub: then the tables) */
static void run_elementwise(int core, int cores)
{
    const tw_case_t *c = g_case;
    const int32_t *p = c->prm;
    if (c->kind == MUL) {
        tw_mul_params_t m = {p[0], p[1], p[2], p[3], p[4], p[5], p[6]};
        tw_pulp_mul_s8(&m, g_buf[1], g_buf[2], g_buf[0], p[12], core, cores);
    } else {
        tw_add_params_t a = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10],
                             p[11]};
        tw_add_fold_t f = {p[15], p[16], p[17], p[18], p[19], p[20]};
        int32_t *tables = (int32_t *)(void *)g_buf[3];
        if (p[14]) {
            tw_pulp_add_fold_tables(&a, &f, tables, c->kind == SUB, core, cores);
            tw_barrier();
            tw_pulp_add_fold_s8(&a, tables, f.shift, g_buf[1], g_buf[2], g_buf[0], p[12], core,
                                cores);
            return;
        }
        tw_pulp_add_tables(&a, tables, c->kind == SUB, core, cores);
        tw_barrier();
        tw_pulp_add_s8(&a, tables, p[13], g_buf[1], g_buf[2], g_buf[0], p[12], core, cores);
    }
}

/* pools: windowed prm [12] c, [13] qmin, [14] qmax, bufs: out, x; global prm [0] pixels,
 * [1] c, [2] divisor, [3] in_zp, [4] mult, [5] shift, [6] out_zp, [7] qmin, [8] qmax (onnx:
 * [4] the scale's float bits), bufs: out, x */
static void run_pool(int core, int cores)
{
    const tw_case_t *c = g_case;
    const int32_t *p = c->prm;
    if (c->kind == MAXPOOL || c->kind == AVGPOOL) {
        tw_pool_args_t a;
        a.win = window(p);
        a.in = g_buf[1];
        a.c = p[12];
        a.out = g_buf[0];
        a.qmin = p[13];
        a.qmax = p[14];
        if (c->kind == MAXPOOL)
            tw_pulp_maxpool_s8(&a, core, cores);
        else
            tw_pulp_avgpool_s8(&a, core, cores);
    } else if (c->kind == GAP) {
        tw_gap_args_t g = {g_buf[1], p[0], p[1], NULL, TW_ACC_WHOLE, p[2], p[3], p[4], p[5],
                           p[6], p[7], p[8], g_buf[0]};
        tw_pulp_global_avgpool_s8(&g, core, cores);
    } else {
        tw_gap_rq_args_t g;
        float scale;
        memcpy(&scale, &p[4], sizeof scale);
        memset(&g, 0, sizeof g);
        g.in = g_buf[1];
        g.pixels = p[0];
        g.c = p[1];
        g.acc_flags = TW_ACC_WHOLE;
        g.in_zp = p[3];
        g.rq.mode = TW_RQ_ONNX;
        g.rq.scale = &scale;
        g.rq.zero_point = p[6];
        g.rq.qmin = p[7];
        g.rq.qmax = p[8];
        g.out = g_buf[0];
        tw_pulp_global_avgpool_rq_s8_onnx(&g, core, cores);
    }
}

static void job(void *arg)
{
    int core = tw_core_id(), cores = tw_core_count();
    (void)arg;
    switch (g_case->kind) {
    case CONV: case CONV1X1: case FC: run_mm(core, cores); break;
    case DW: run_dw(core, cores); break;
    case ADD: case SUB: case MUL: run_elementwise(core, cores); break;
    case NOP: break;                  /* the fork alone, to subtract from the timings */
    default: run_pool(core, cores);
    }
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

int tw_fw_main(void)
{
    int i, cores;
    for (i = 0; i < TW_CASES; i++) {
        const tw_case_t *c = &tw_cases[i];
        for (cores = 1; cores <= 8; cores++) {
            uint32_t t0, t1, bad = 0;
            int j;
            if (!(c->cores_mask & (1 << cores)))
                continue;
            if (!place(c))
                return 2;
            g_case = c;
            t0 = tw_fw_cycles();
            tw_fork(cores, job, NULL);
            t1 = tw_fw_cycles();
            for (j = 0; j < c->bufs[c->out].bytes; j++)
                bad += g_buf[c->out][j] != c->want[j];
            tw_fw_puts("TW_CASE ");
            tw_fw_put_uint((uint32_t)i);
            tw_fw_puts(" ");
            tw_fw_put_uint((uint32_t)cores);
            tw_fw_puts(" ");
            tw_fw_put_uint(bad);
            tw_fw_puts(" ");
            tw_fw_put_uint(t1 - t0);
            tw_fw_puts("\n");
        }
    }
    tw_fw_puts("TW_DONE\n");
    return 0;
}
