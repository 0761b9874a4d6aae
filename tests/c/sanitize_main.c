/*
 * Driver for the sanitizer test (tests/test_c_kernels.py::test_kernels_clean_under_sanitizers):
 * built with -fsanitize=address,undefined -fno-sanitize-recover=all, it calls every kernel on
 * random tiles held in exactly-sized heap buffers (so any out-of-bounds access is caught), on 1
 * and 3 cores through the host HAL, plus 3D DMA copies. Beyond running clean it checks results
 * that must agree: core counts, C-tiled partial sums vs one tile, 1x1 vs im2col conv, DMA copies.
 * Exit status: 0 clean, 1 on a mismatch (sanitizer findings abort).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_hal.h"
#include "tw_kernels.h"

static uint32_t g_rng = 12345u;
static int g_fail;

static int8_t rnd8(void)
{
    g_rng = g_rng * 1664525u + 1013904223u;
    return (int8_t)(g_rng >> 24);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

static int8_t *random_i8(size_t n)
{
    int8_t *p = (int8_t *)xmalloc(n);
    size_t i;
    for (i = 0; i < n; i++) p[i] = rnd8();
    return p;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "mismatch: %s\n", what);
        g_fail = 1;
    }
}

/* ---- running a kernel on n cores */
typedef struct { void (*fn)(const void *, int, int); const void *args; } job_t;

static void job_core(void *p)
{
    const job_t *j = (const job_t *)p;
    j->fn(j->args, tw_core_id(), tw_core_count());
}

static void run(void (*fn)(const void *, int, int), const void *args, int cores)
{
    job_t j;
    j.fn = fn;
    j.args = args;
    tw_fork(cores, job_core, &j);
}

static void conv_fn(const void *a, int c, int n) { tw_conv2d_s8((const tw_conv_args_t *)a, c, n); }
static void pw_fn(const void *a, int c, int n) { tw_conv1x1_s8((const tw_conv_args_t *)a, c, n); }
static void dw_fn(const void *a, int c, int n) { tw_depthwise_s8((const tw_dw_args_t *)a, c, n); }
static void fc_fn(const void *a, int c, int n) { tw_fully_connected_s8((const tw_fc_args_t *)a, c, n); }
static void avg_fn(const void *a, int c, int n) { tw_avgpool_s8((const tw_pool_args_t *)a, c, n); }
static void max_fn(const void *a, int c, int n) { tw_maxpool_s8((const tw_pool_args_t *)a, c, n); }
static void gap_fn(const void *a, int c, int n) { tw_global_avgpool_s8((const tw_gap_args_t *)a, c, n); }
static void sm_fn(const void *a, int c, int n) { tw_softmax_s8((const tw_softmax_args_t *)a, c, n); }

static tw_window_t window(int in_h, int in_w, int out_h, int out_w, int k, int s, int pt, int pl, int pb, int pr)
{
    tw_window_t w;
    w.in_h = in_h; w.in_w = in_w; w.out_h = out_h; w.out_w = out_w;
    w.k_h = k; w.k_w = k; w.s_h = s; w.s_w = s; w.d_h = 1; w.d_w = 1;
    w.pad_t = pt; w.pad_l = pl; w.pad_b = pb; w.pad_r = pr;
    return w;
}

static void test_conv(int mode)
{
    enum { H = 7, W = 9, C = 5, K = 7, KS = 3, OH = 4, OW = 5 };
    static const int32_t m0[K] = {1500000000, 1400000000, 1300000000, 1200000000, 1100000000, 1600000000, 2000000000};
    static const int32_t sh[K] = {-9, -9, -10, -8, -9, -9, -10};
    static const int32_t kk[K] = {300, 280, 260, 240, 220, 200, 180};
    static const int32_t lam[K] = {5, -5, 100, 0, 7, -1000, 3};
    static const float sc[K] = {0.0031f, 0.0025f, 0.002f, 0.0011f, 0.0042f, 0.0033f, 0.0051f};
    tw_conv_args_t a;
    int8_t *in = random_i8(H * W * C), *w = random_i8(K * KS * KS * C);
    int8_t *in0 = random_i8(H * W * 3), *in1 = random_i8(H * W * 2), *w0, *w1;
    int8_t *out1 = (int8_t *)xmalloc(OH * OW * K), *out3 = (int8_t *)xmalloc(OH * OW * K);
    int8_t *outc = (int8_t *)xmalloc(OH * OW * K);
    int32_t *bias = (int32_t *)xmalloc(K * sizeof(int32_t));
    int32_t *psum = (int32_t *)xmalloc(OH * OW * K * sizeof(int32_t));
    int8_t *scratch;
    int i, k, p;

    for (k = 0; k < K; k++) bias[k] = (int32_t)(k * 1000 - 3000);
    a.win = window(H, W, OH, OW, KS, 2, 1, 1, 1, 1);
    scratch = (int8_t *)xmalloc(tw_conv2d_s8_scratch(&a.win, C, 3));   /* exactly the documented size */
    a.in = in; a.in_c = C; a.w = w; a.bias = bias; a.out = out1; a.out_c = K;
    a.pad_value = -3; a.psum = NULL; a.acc_flags = TW_ACC_WHOLE; a.im2col = scratch;
    a.acc_bits = 32;
    a.rq.mode = mode; a.rq.per_channel = 1; a.rq.mult = mode == TW_RQ_SHIFT ? kk : m0;
    a.rq.shift = sh; a.rq.lambda = lam; a.rq.scale = sc;
    a.rq.zero_point = 3; a.rq.qmin = -128; a.rq.qmax = 127;
    if (mode == TW_RQ_ONNX) {   /* the scales alone: tw_requant.h derives the integer constants */
        a.rq.mult = NULL;
        a.rq.shift = NULL;
    }
    if (mode == TW_RQ_SHIFT) {
        static const int32_t d[K] = {16, 16, 16, 16, 16, 16, 16};
        a.rq.shift = d;
    }
    check(tw_window_valid(&a.win), "conv window");
    run(conv_fn, &a, 1);
    a.out = out3;
    run(conv_fn, &a, 3);
    check(memcmp(out1, out3, OH * OW * K) == 0, "conv 1 vs 3 cores");

    /* the same layer with C split 3 + 2 through int32 partial sums */
    w0 = (int8_t *)xmalloc(K * KS * KS * 3);
    w1 = (int8_t *)xmalloc(K * KS * KS * 2);
    for (p = 0; p < H * W; p++) {
        memcpy(in0 + p * 3, in + p * C, 3);
        memcpy(in1 + p * 2, in + p * C + 3, 2);
    }
    for (i = 0; i < K * KS * KS; i++) {
        memcpy(w0 + i * 3, w + i * C, 3);
        memcpy(w1 + i * 2, w + i * C + 3, 2);
    }
    a.out = outc; a.psum = psum;
    a.in = in0; a.in_c = 3; a.w = w0; a.acc_flags = TW_ACC_FIRST;
    run(conv_fn, &a, 3);
    a.in = in1; a.in_c = 2; a.w = w1; a.acc_flags = TW_ACC_LAST;
    run(conv_fn, &a, 3);
    check(memcmp(out1, outc, OH * OW * K) == 0, "conv C-tiled vs whole");

    free(in); free(w); free(in0); free(in1); free(w0); free(w1); free(out1); free(out3); free(outc);
    free(bias); free(psum); free(scratch);
}

static void test_pointwise(void)
{
    enum { H = 5, W = 3, C = 6, K = 5 };
    static const int32_t m0[1] = {1200000000}, sh[1] = {-8};
    tw_conv_args_t a;
    int8_t *in = random_i8(H * W * C), *w = random_i8(K * C);
    int8_t *o1 = (int8_t *)xmalloc(H * W * K), *o2 = (int8_t *)xmalloc(H * W * K);
    int8_t *scratch = (int8_t *)xmalloc(3 * 2 * C);
    a.win = window(H, W, H, W, 1, 1, 0, 0, 0, 0);
    a.in = in; a.in_c = C; a.w = w; a.bias = NULL; a.out = o1; a.out_c = K; a.pad_value = 0;
    a.psum = NULL; a.acc_flags = TW_ACC_WHOLE; a.im2col = NULL; a.acc_bits = 32;
    a.rq.mode = TW_RQ_TFLITE; a.rq.per_channel = 0; a.rq.mult = m0; a.rq.shift = sh;
    a.rq.lambda = NULL; a.rq.scale = NULL; a.rq.zero_point = 0; a.rq.qmin = -128; a.rq.qmax = 127;
    run(pw_fn, &a, 3);
    a.out = o2; a.im2col = scratch;
    run(conv_fn, &a, 3);
    check(memcmp(o1, o2, H * W * K) == 0, "1x1 vs im2col");
    free(in); free(w); free(o1); free(o2); free(scratch);
}

static void test_depthwise_fc_pool_softmax(void)
{
    enum { H = 6, W = 7, C = 5, M = 2, K = C * M, N = 3, FC_C = 19, FC_K = 6 };
    static const float sc[1] = {0.01f};
    static const int32_t m0[1] = {1300000000}, sh[1] = {-7};
    int8_t *in = random_i8(H * W * C), *w = random_i8(3 * 3 * K);
    int8_t *o1 = (int8_t *)xmalloc(3 * 4 * K), *o3 = (int8_t *)xmalloc(3 * 4 * K);
    int8_t *x = random_i8(N * FC_C), *fw = random_i8(FC_K * FC_C);
    int8_t *f1 = (int8_t *)xmalloc(N * FC_K), *f3 = (int8_t *)xmalloc(N * FC_K);
    int8_t *p1 = (int8_t *)xmalloc(3 * 4 * C), *p3 = (int8_t *)xmalloc(3 * 4 * C);
    int8_t *g1 = (int8_t *)xmalloc(C), *g3 = (int8_t *)xmalloc(C);
    int8_t *s1 = (int8_t *)xmalloc(N * FC_C), *s3 = (int8_t *)xmalloc(N * FC_C);
    int32_t *gacc = (int32_t *)xmalloc(C * sizeof(int32_t));
    tw_dw_args_t d;
    tw_fc_args_t f;
    tw_pool_args_t pa;
    tw_gap_args_t g;
    tw_softmax_args_t s;

    d.win = window(H, W, 3, 4, 3, 2, 1, 1, 0, 1);
    d.in = in; d.in_c = C; d.depth_mult = M; d.w = w; d.bias = NULL; d.out = o1; d.pad_value = 5;
    d.acc_bits = 32;
    d.rq.mode = TW_RQ_ONNX; d.rq.per_channel = 0; d.rq.mult = NULL; d.rq.shift = NULL;
    d.rq.lambda = NULL; d.rq.scale = sc; d.rq.zero_point = -4; d.rq.qmin = -128; d.rq.qmax = 127;
    check(tw_window_valid(&d.win), "dw window");
    run(dw_fn, &d, 1);
    d.out = o3;
    run(dw_fn, &d, 3);
    check(memcmp(o1, o3, 3 * 4 * K) == 0, "depthwise 1 vs 3 cores");

    f.in = x; f.n_rows = N; f.in_c = FC_C; f.w = fw; f.bias = NULL; f.out = f1; f.out_c = FC_K;
    f.psum = NULL; f.acc_flags = TW_ACC_WHOLE; f.acc_bits = 32;
    f.rq.mode = TW_RQ_TFLITE; f.rq.per_channel = 0; f.rq.mult = m0; f.rq.shift = sh;
    f.rq.lambda = NULL; f.rq.scale = NULL; f.rq.zero_point = 1; f.rq.qmin = -128; f.rq.qmax = 127;
    run(fc_fn, &f, 1);
    f.out = f3;
    run(fc_fn, &f, 3);
    check(memcmp(f1, f3, N * FC_K) == 0, "fc 1 vs 3 cores");

    pa.win = window(H, W, 3, 4, 3, 2, 1, 1, 0, 1);
    pa.in = in; pa.c = C; pa.out = p1; pa.qmin = -128; pa.qmax = 127;
    run(avg_fn, &pa, 1);
    pa.out = p3;
    run(avg_fn, &pa, 3);
    check(memcmp(p1, p3, 3 * 4 * C) == 0, "avgpool 1 vs 3 cores");
    run(max_fn, &pa, 3);
    pa.out = p1;
    run(max_fn, &pa, 1);
    check(memcmp(p1, p3, 3 * 4 * C) == 0, "maxpool 1 vs 3 cores");

    g.in = in; g.pixels = H * W; g.c = C; g.acc = NULL; g.acc_flags = TW_ACC_WHOLE; g.divisor = H * W;
    g.in_zp = 0; g.mult = 1 << 30; g.shift = 1; g.out_zp = 0; g.qmin = -128; g.qmax = 127; g.out = g1;
    run(gap_fn, &g, 1);
    g.acc = gacc; g.out = g3; g.pixels = 20; g.acc_flags = TW_ACC_FIRST;
    run(gap_fn, &g, 3);
    g.in = in + 20 * C; g.pixels = H * W - 20; g.acc_flags = TW_ACC_LAST;
    run(gap_fn, &g, 3);
    check(memcmp(g1, g3, C) == 0, "global avgpool tiled vs whole");

    s.in = x; s.out = s1; s.rows = N; s.depth = FC_C;
    s.input_beta_multiplier = 1717986918; s.input_beta_left_shift = 23; s.diff_min = -248;
    run(sm_fn, &s, 1);
    s.out = s3;
    run(sm_fn, &s, 3);
    check(memcmp(s1, s3, N * FC_C) == 0, "softmax 1 vs 3 cores");

    free(in); free(w); free(o1); free(o3); free(x); free(fw); free(f1); free(f3); free(p1); free(p3);
    free(g1); free(g3); free(s1); free(s3); free(gacc);
}

static void test_elementwise(void)
{
    enum { N = 101 };
    tw_add_params_t ap = {3, 1073741824, -1, -5, 1500000000, -2, 20, 1300000000, -18, 2, -128, 127};
    tw_mul_params_t mp = {3, -5, 1300000000, -8, 2, -128, 127};
    int8_t *a = random_i8(N), *b = random_i8(N);
    int8_t *o1 = (int8_t *)xmalloc(N), *o3 = (int8_t *)xmalloc(N);
    tw_add_s8(&ap, a, b, o1, N, 0, 1);
    tw_add_s8(&ap, a, b, o3, N, 0, 3); tw_add_s8(&ap, a, b, o3, N, 1, 3); tw_add_s8(&ap, a, b, o3, N, 2, 3);
    check(memcmp(o1, o3, N) == 0, "add split");
    tw_sub_s8(&ap, a, b, o1, N, 0, 1);
    tw_mul_s8(&mp, a, b, o3, N, 0, 1);
    free(a); free(b); free(o1); free(o3);
}

static void test_dma(void)
{
    enum { H = 6, W = 7, C = 5, h = 3, w = 4, c = 2 };
    uint8_t *l2 = (uint8_t *)random_i8(H * W * C), *l1 = (uint8_t *)xmalloc(h * w * c);
    uint8_t *back = (uint8_t *)xmalloc(H * W * C);
    int y, x, k;
    tw_dma_id_t id = tw_dma_copy_3d(l1, l2 + (1 * W + 2) * C + 3, c, w, h, c, w * c, C, W * C, TW_DMA_L2_TO_L1);
    tw_dma_wait(id);
    for (y = 0; y < h; y++)
        for (x = 0; x < w; x++)
            for (k = 0; k < c; k++)
                check(l1[(y * w + x) * c + k] == l2[((1 + y) * W + 2 + x) * C + 3 + k], "dma 3d");
    memset(back, 0, H * W * C);
    id = tw_dma_copy_3d(l1, back + 3, c, w, h, c, w * c, C, W * C, TW_DMA_L1_TO_L2);
    tw_dma_wait(id);
    check(back[3] == l1[0] && back[(2 * W + 3) * C + 3 + 1] == l1[(2 * w + 3) * c + 1], "dma 3d back");
    free(l2); free(l1); free(back);
}

int main(void)
{
    tw_hal_stats_t st;
    test_conv(TW_RQ_TFLITE);
    test_conv(TW_RQ_SHIFT);
    test_conv(TW_RQ_ONNX);
    test_pointwise();
    test_depthwise_fc_pool_softmax();
    test_elementwise();
    test_dma();
    tw_hal_get_stats(&st);
    check(st.dma_pending == 0 && st.dma_races == 0 && st.dma_bad_waits == 0, "hal stats");
    printf("forks %lu dma %lu\n", (unsigned long)st.forks, (unsigned long)st.dma_transfers);
    return g_fail;
}
