/*
 * Test shim of the pulp kernel family (tilewise/bindings/pulp/c) for tests/test_pulp_kernels.py:
 * tests/c/kernel_shim.c's flat entry points, compiled with the portable kernels it calls renamed
 * to adapters that take the same arguments and run the pulp kernel of the request's requant mode
 * (shift mode: the 64-bit kernel, or the 32-bit one after shim_pulp_shift32(1); tflite mode: the
 * general kernel, or the right-shift one after shim_pulp_tflite_right(1)). Marshalling only:
 * each adapter hands its core the requantization words of the tile's tw_requant_t
 * (tw_pulp_rq_words) and, for depthwise, the channel-major copy of the [k_h][k_w][C] weights the
 * portable contract takes, and shared scratch.
 */
#include <stdlib.h>
#include <string.h>

#include "tw_hal.h"
#include "tw_pulp.h"

static int g_shift32, g_tflite_right;

void shim_pulp_shift32(int on)
{
    g_shift32 = on;
}

void shim_pulp_tflite_right(int on)
{
    g_tflite_right = on;
}

/* The kernel variant of a tw_requant_t's mode (shift: 32 bits after shim_pulp_shift32(1);
 * tflite: right shifts only after shim_pulp_tflite_right(1)). */
static int variant(int mode)
{
    if (mode == TW_RQ_TFLITE && g_tflite_right)
        return TW_PULP_RQ_TFLITE_RIGHT;
    return mode == TW_RQ_SHIFT && g_shift32 ? TW_PULP_RQ_SHIFT32 : mode;
}

/* Per-core copies of what the pulp kernels take in another form (no core writes what another
 * reads): the requantization words of the tile's channels, the depthwise weights channel-major;
 * one depthwise scratch for the team. */
#define MAX_CORES 16
#define MAX_CHANNELS 4096
#define DW_WEIGHTS 16384
#define DW_SCRATCH (1 << 20)
static int32_t g_words[MAX_CORES][4 * MAX_CHANNELS];
static int8_t g_dw_w[MAX_CORES][DW_WEIGHTS];
static int8_t g_dw_scratch[DW_SCRATCH];

/* The pulp requantization of a tile's n channels of rq (mode: the kernel's). */
static tw_pulp_rq_t words_of(const tw_requant_t *rq, int n, int core)
{
    tw_pulp_rq_t r;
    if (n > MAX_CHANNELS || core >= MAX_CORES)
        abort();
    tw_pulp_rq_words(rq, n, variant(rq->mode), g_words[core]);
    r.words = g_words[core];
    r.n = n;
    r.zero_point = rq->zero_point;
    r.qmin = rq->qmin;
    r.qmax = rq->qmax;
    return r;
}

static tw_pulp_conv_args_t conv_args(const tw_conv_args_t *a, int core)
{
    tw_pulp_conv_args_t p;
    p.a = *a;
    p.rq = words_of(&a->rq, a->out_c, core);
    return p;
}

static void pulp_conv2d(const tw_conv_args_t *a, int core, int cores)
{
    tw_pulp_conv_args_t p = conv_args(a, core);
    TW_PULP_BY_VARIANT(variant(a->rq.mode), tw_pulp_conv2d_s8, (&p, core, cores));
}

static void pulp_conv1x1(const tw_conv_args_t *a, int core, int cores)
{
    tw_pulp_conv_args_t p = conv_args(a, core);
    TW_PULP_BY_VARIANT(variant(a->rq.mode), tw_pulp_conv1x1_s8, (&p, core, cores));
}

static void pulp_fc(const tw_fc_args_t *a, int core, int cores)
{
    tw_pulp_fc_args_t p;
    p.a = *a;
    p.rq = words_of(&a->rq, a->out_c, core);
    TW_PULP_BY_VARIANT(variant(a->rq.mode), tw_pulp_fully_connected_s8, (&p, core, cores));
}

static void pulp_depthwise(const tw_dw_args_t *a, int core, int cores)
{
    tw_pulp_dw_args_t d;
    int taps = a->win.k_h * a->win.k_w, c, t;
    if (a->depth_mult != 1 || a->win.d_h != 1 || a->win.d_w != 1 || a->in_c * taps > DW_WEIGHTS ||
        core >= MAX_CORES || tw_pulp_depthwise_s8_scratch(&a->win, cores) > DW_SCRATCH)
        abort();
    for (c = 0; c < a->in_c; c++)
        for (t = 0; t < taps; t++)
            g_dw_w[core][c * taps + t] = a->w[t * a->in_c + c];
    d.a = *a;
    d.a.w = g_dw_w[core];
    d.rq = words_of(&a->rq, a->in_c, core);
    d.scratch = g_dw_scratch;
    TW_PULP_BY_VARIANT(variant(a->rq.mode), tw_pulp_depthwise_s8, (&d, core, cores));
}

static void pulp_gap_rq(const tw_gap_rq_args_t *a, int core, int cores)
{
    if (a->rq.mode != TW_RQ_ONNX)
        abort();
    tw_pulp_global_avgpool_rq_s8_onnx(a, core, cores);
}

/* MultiplyByQuantizedMultiplier through the words of one channel (single: single rounding). */
static int32_t pulp_mbqm_mode(int32_t x, int32_t m, int32_t shift, int single)
{
    tw_requant_t rq;
    int32_t w[4];
    tw_pulp_rqch_t c;
    memset(&rq, 0, sizeof rq);
    rq.mult = &m;
    rq.shift = &shift;
    tw_pulp_rq_words(&rq, 1, single ? TW_RQ_TFLITE_SINGLE : TW_RQ_TFLITE, w);
    c = tw_pulp_rq_channel(w, 1, 0);
    return single ? tw_pulp_rq_raw(&c, x, TW_RQ_TFLITE_SINGLE) : tw_pulp_rq_raw(&c, x, TW_RQ_TFLITE);
}

static int32_t pulp_mbqm(int32_t x, int32_t m, int32_t shift)
{
    return pulp_mbqm_mode(x, m, shift, 0);
}

static int32_t pulp_mbqm_single(int32_t x, int32_t m, int32_t shift)
{
    return pulp_mbqm_mode(x, m, shift, 1);
}

/* ADD / SUB as a generated layer runs them: every core its share of the tables, a barrier, the
 * elements (kernel_shim.c runs the cores as threads) */
static int32_t g_add_tables[2 * TW_PULP_ADD_VALUES];
static int g_add_right;

/* the one-rounding output of tw_pulp_add_s8 (right = 1) for the next adds / subs */
void shim_pulp_add_right(int right)
{
    g_add_right = right;
}

static int g_add_folded;
static tw_add_fold_t g_add_fold;

/* the folded form (tw_pulp_add_fold_*) with the words of addfold.Fold for the next adds / subs,
 * or (words NULL) tw_pulp_add_s8 again */
void shim_pulp_add_fold(const int32_t *words)
{
    g_add_folded = words != NULL;
    if (words != NULL) {
        g_add_fold.a_lo = words[0]; g_add_fold.a_hi = words[1];
        g_add_fold.b_lo = words[2]; g_add_fold.b_hi = words[3];
        g_add_fold.k = words[4]; g_add_fold.shift = words[5];
    }
}

static void pulp_add_or_sub(const tw_add_params_t *p, const int8_t *a, const int8_t *b,
                            int8_t *out, int n, int core, int cores, int sub)
{
    if (g_add_folded) {
        tw_pulp_add_fold_tables(p, &g_add_fold, g_add_tables, sub, core, cores);
        tw_barrier();
        tw_pulp_add_fold_s8(p, g_add_tables, g_add_fold.shift, a, b, out, n, core, cores);
        return;
    }
    tw_pulp_add_tables(p, g_add_tables, sub, core, cores);
    tw_barrier();
    tw_pulp_add_s8(p, g_add_tables, g_add_right, a, b, out, n, core, cores);
}

static void pulp_add(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                     int n, int core, int cores)
{
    pulp_add_or_sub(p, a, b, out, n, core, cores, 0);
}

static void pulp_sub(const tw_add_params_t *p, const int8_t *a, const int8_t *b, int8_t *out,
                     int n, int core, int cores)
{
    pulp_add_or_sub(p, a, b, out, n, core, cores, 1);
}

#define tw_conv2d_s8 pulp_conv2d
#define tw_conv1x1_s8 pulp_conv1x1
#define tw_conv2d_s8_scratch tw_pulp_conv2d_s8_scratch
#define tw_fully_connected_s8 pulp_fc
#define tw_depthwise_s8 pulp_depthwise
#define tw_add_s8 pulp_add
#define tw_sub_s8 pulp_sub
#define tw_mul_s8 tw_pulp_mul_s8
#define tw_avgpool_s8 tw_pulp_avgpool_s8
#define tw_maxpool_s8 tw_pulp_maxpool_s8
#define tw_global_avgpool_s8 tw_pulp_global_avgpool_s8
#define tw_global_avgpool_rq_s8 pulp_gap_rq
#define tw_mbqm pulp_mbqm
#define tw_mbqm_single pulp_mbqm_single

#include "kernel_shim.c"

/* tw_pulp_rq_words of a tw_requant_t (kernel_shim.c's arguments), for the Python words' test */
void shim_pulp_rq_words(const int32_t *rqi, const int32_t *mult, const int32_t *shift,
                        const int32_t *lambda, const float *scale, int n, int mode, int32_t *words)
{
    tw_requant_t rq = requant(rqi, mult, shift, lambda, scale);
    tw_pulp_rq_words(&rq, n, mode, words);
}

/* tw_pulp_depthwise_s8_scratch of a window, for the scratch formula's test */
long shim_pulp_dw_scratch(const int32_t *geom, int n_cores)
{
    tw_window_t w = window(geom);
    return (long)tw_pulp_depthwise_s8_scratch(&w, n_cores);
}
