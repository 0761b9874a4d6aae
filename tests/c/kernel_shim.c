/*
 * Test shim for tests/test_c_kernels.py: flat C entry points (scalars, arrays) that fill the
 * kernels' argument structs and run the kernel on n_cores cores through the host HAL's tw_fork,
 * each core calling the kernel with tw_core_id() / tw_core_count() as generated code does.
 * Marshalling only — no arithmetic of its own.
 *
 * geom[14] = in_h, in_w, out_h, out_w, k_h, k_w, s_h, s_w, d_h, d_w, pad_t, pad_l, pad_b, pad_r
 * rqi[5]   = mode, per_channel, zero_point, qmin, qmax
 */
#include <stddef.h>
#include <stdint.h>

#include "tw_hal.h"
#include "tw_kernels.h"

static tw_window_t window(const int32_t *g)
{
    tw_window_t w;
    w.in_h = g[0]; w.in_w = g[1]; w.out_h = g[2]; w.out_w = g[3];
    w.k_h = g[4]; w.k_w = g[5]; w.s_h = g[6]; w.s_w = g[7]; w.d_h = g[8]; w.d_w = g[9];
    w.pad_t = g[10]; w.pad_l = g[11]; w.pad_b = g[12]; w.pad_r = g[13];
    return w;
}

static tw_requant_t requant(const int32_t *rqi, const int32_t *mult, const int32_t *shift,
                            const int32_t *lambda, const float *scale)
{
    tw_requant_t rq;
    rq.mode = rqi[0];
    rq.per_channel = rqi[1];
    rq.zero_point = rqi[2];
    rq.qmin = rqi[3];
    rq.qmax = rqi[4];
    rq.mult = mult;
    rq.shift = shift;
    rq.lambda = lambda;
    rq.scale = scale;
    return rq;
}

/* ---- conv / pointwise */
typedef struct { tw_conv_args_t a; int pointwise; } conv_job_t;

static void conv_core(void *p)
{
    const conv_job_t *j = (const conv_job_t *)p;
    if (j->pointwise)
        tw_conv1x1_s8(&j->a, tw_core_id(), tw_core_count());
    else
        tw_conv2d_s8(&j->a, tw_core_id(), tw_core_count());
}

long shim_conv_scratch(const int32_t *geom, int in_c, int n_cores)
{
    tw_window_t w = window(geom);
    return (long)tw_conv2d_s8_scratch(&w, in_c, n_cores);
}

int shim_window_valid(const int32_t *geom)
{
    tw_window_t w = window(geom);
    return tw_window_valid(&w);
}

void shim_conv(const int32_t *geom, const int8_t *in, int in_c, const int8_t *w,
               const int32_t *bias, int8_t *out, int out_c, int pad_value, int32_t *psum,
               int acc_flags, const int32_t *rqi, const int32_t *mult, const int32_t *shift,
               const int32_t *lambda, const float *scale, int8_t *im2col, int pointwise,
               int n_cores)
{
    conv_job_t j;
    j.a.win = window(geom);
    j.a.in = in;
    j.a.in_c = in_c;
    j.a.w = w;
    j.a.bias = bias;
    j.a.out = out;
    j.a.out_c = out_c;
    j.a.pad_value = (int8_t)pad_value;
    j.a.psum = psum;
    j.a.acc_flags = acc_flags;
    j.a.acc_bits = 32;
    j.a.rq = requant(rqi, mult, shift, lambda, scale);
    j.a.im2col = im2col;
    j.pointwise = pointwise;
    tw_fork(n_cores, conv_core, &j);
}

/* ---- depthwise */
static void dw_core(void *p)
{
    tw_depthwise_s8((const tw_dw_args_t *)p, tw_core_id(), tw_core_count());
}

void shim_depthwise(const int32_t *geom, const int8_t *in, int in_c, int depth_mult,
                    const int8_t *w, const int32_t *bias, int8_t *out, int pad_value,
                    const int32_t *rqi, const int32_t *mult, const int32_t *shift,
                    const int32_t *lambda, const float *scale, int n_cores)
{
    tw_dw_args_t a;
    a.win = window(geom);
    a.in = in;
    a.in_c = in_c;
    a.depth_mult = depth_mult;
    a.w = w;
    a.bias = bias;
    a.out = out;
    a.pad_value = (int8_t)pad_value;
    a.rq = requant(rqi, mult, shift, lambda, scale);
    a.acc_bits = 32;
    tw_fork(n_cores, dw_core, &a);
}

/* ---- fully connected */
static void fc_core(void *p)
{
    tw_fully_connected_s8((const tw_fc_args_t *)p, tw_core_id(), tw_core_count());
}

void shim_fc(const int8_t *in, int n_rows, int in_c, const int8_t *w, const int32_t *bias,
             int8_t *out, int out_c, int32_t *psum, int acc_flags, const int32_t *rqi,
             const int32_t *mult, const int32_t *shift, const int32_t *lambda,
             const float *scale, int n_cores)
{
    tw_fc_args_t a;
    a.in = in;
    a.n_rows = n_rows;
    a.in_c = in_c;
    a.w = w;
    a.bias = bias;
    a.out = out;
    a.out_c = out_c;
    a.psum = psum;
    a.acc_flags = acc_flags;
    a.acc_bits = 32;
    a.rq = requant(rqi, mult, shift, lambda, scale);
    tw_fork(n_cores, fc_core, &a);
}

/* ---- elementwise: op 0 add, 1 sub, 2 mul; prm = a_zp a_mult a_shift b_zp b_mult b_shift
 *      left_shift out_mult out_shift out_zp qmin qmax (mul uses a_zp b_zp out_* qmin qmax) */
typedef struct {
    int op;
    tw_add_params_t add;
    tw_mul_params_t mul;
    const int8_t *a, *b;
    int8_t *out;
    int n;
} elt_job_t;

static void elt_core(void *p)
{
    const elt_job_t *j = (const elt_job_t *)p;
    if (j->op == 0)
        tw_add_s8(&j->add, j->a, j->b, j->out, j->n, tw_core_id(), tw_core_count());
    else if (j->op == 1)
        tw_sub_s8(&j->add, j->a, j->b, j->out, j->n, tw_core_id(), tw_core_count());
    else
        tw_mul_s8(&j->mul, j->a, j->b, j->out, j->n, tw_core_id(), tw_core_count());
}

void shim_elementwise(int op, const int32_t *prm, const int8_t *a, const int8_t *b, int8_t *out,
                      int n, int n_cores)
{
    elt_job_t j;
    j.op = op;
    j.add.a_zp = prm[0]; j.add.a_mult = prm[1]; j.add.a_shift = prm[2];
    j.add.b_zp = prm[3]; j.add.b_mult = prm[4]; j.add.b_shift = prm[5];
    j.add.left_shift = prm[6];
    j.add.out_mult = prm[7]; j.add.out_shift = prm[8]; j.add.out_zp = prm[9];
    j.add.qmin = prm[10]; j.add.qmax = prm[11];
    j.mul.a_zp = prm[0]; j.mul.b_zp = prm[3];
    j.mul.out_mult = prm[7]; j.mul.out_shift = prm[8]; j.mul.out_zp = prm[9];
    j.mul.qmin = prm[10]; j.mul.qmax = prm[11];
    j.a = a;
    j.b = b;
    j.out = out;
    j.n = n;
    tw_fork(n_cores, elt_core, &j);
}

/* ---- pooling: op 0 avg, 1 max */
typedef struct { tw_pool_args_t a; int op; } pool_job_t;

static void pool_core(void *p)
{
    const pool_job_t *j = (const pool_job_t *)p;
    if (j->op == 0)
        tw_avgpool_s8(&j->a, tw_core_id(), tw_core_count());
    else
        tw_maxpool_s8(&j->a, tw_core_id(), tw_core_count());
}

void shim_pool(int op, const int32_t *geom, const int8_t *in, int c, int8_t *out, int qmin,
               int qmax, int n_cores)
{
    pool_job_t j;
    j.op = op;
    j.a.win = window(geom);
    j.a.in = in;
    j.a.c = c;
    j.a.out = out;
    j.a.qmin = qmin;
    j.a.qmax = qmax;
    tw_fork(n_cores, pool_core, &j);
}

/* ---- onnx average pooling (QLinearAveragePool); f = x_scale y_scale,
 *      q = x_zp y_zp count_include_pad qmin qmax out_offset */
typedef struct { tw_pool_args_t a; tw_avgpool_onnx_params_t p; } avgpool_onnx_job_t;

static void avgpool_onnx_core(void *p)
{
    const avgpool_onnx_job_t *j = (const avgpool_onnx_job_t *)p;
    tw_avgpool_onnx_s8(&j->a, &j->p, tw_core_id(), tw_core_count());
}

void shim_avgpool_onnx(const int32_t *geom, const int8_t *in, int c, int8_t *out, const float *f,
                       const int32_t *q, int n_cores)
{
    avgpool_onnx_job_t j;
    j.a.win = window(geom);
    j.a.in = in;
    j.a.c = c;
    j.a.out = out;
    j.a.qmin = -128;
    j.a.qmax = 127;
    j.p.x_scale = f[0];
    j.p.y_scale = f[1];
    j.p.x_zp = q[0];
    j.p.y_zp = q[1];
    j.p.count_include_pad = q[2];
    j.p.qmin = q[3];
    j.p.qmax = q[4];
    j.p.out_offset = q[5];
    tw_fork(n_cores, avgpool_onnx_core, &j);
}

/* ---- global average pooling; prm = divisor in_zp mult shift out_zp qmin qmax */
static void gap_core(void *p)
{
    tw_global_avgpool_s8((const tw_gap_args_t *)p, tw_core_id(), tw_core_count());
}

void shim_gap(const int8_t *in, int pixels, int c, int32_t *acc, int acc_flags,
              const int32_t *prm, int8_t *out, int n_cores)
{
    tw_gap_args_t a;
    a.in = in;
    a.pixels = pixels;
    a.c = c;
    a.acc = acc;
    a.acc_flags = acc_flags;
    a.divisor = prm[0];
    a.in_zp = prm[1];
    a.mult = prm[2];
    a.shift = prm[3];
    a.out_zp = prm[4];
    a.qmin = prm[5];
    a.qmax = prm[6];
    a.out = out;
    tw_fork(n_cores, gap_core, &a);
}

/* ---- softmax */
static void softmax_core(void *p)
{
    tw_softmax_s8((const tw_softmax_args_t *)p, tw_core_id(), tw_core_count());
}

void shim_softmax(const int8_t *in, int8_t *out, int rows, int depth, int32_t multiplier,
                  int32_t left_shift, int32_t diff_min, int n_cores)
{
    tw_softmax_args_t a;
    a.in = in;
    a.out = out;
    a.rows = rows;
    a.depth = depth;
    a.input_beta_multiplier = multiplier;
    a.input_beta_left_shift = left_shift;
    a.diff_min = diff_min;
    tw_fork(n_cores, softmax_core, &a);
}

/* ---- onnx softmax (QLinearSoftmax) */
static void softmax_onnx_core(void *p)
{
    tw_softmax_onnx_s8((const tw_softmax_onnx_args_t *)p, tw_core_id(), tw_core_count());
}

void shim_softmax_onnx(const int8_t *in, int8_t *out, int rows, int depth, const float *table,
                       const float *y_scale_inv, int32_t y_zp, int32_t y_nonfinite, int n_cores)
{
    tw_softmax_onnx_args_t a;
    a.y_nonfinite = (int8_t)y_nonfinite;
    a.in = in;
    a.out = out;
    a.rows = rows;
    a.depth = depth;
    a.inner = 1;   /* the last axis */
    a.table = table;
    a.y_scale_inv = *y_scale_inv;
    a.y_zp = y_zp;
    tw_fork(n_cores, softmax_onnx_core, &a);
}

/* ---- 256-entry lookup table (logistic) */
typedef struct { const int8_t *table, *in; int8_t *out; int n; } lut_job_t;

static void lut_core(void *p)
{
    const lut_job_t *j = (const lut_job_t *)p;
    tw_lut_s8(j->table, j->in, j->out, j->n, tw_core_id(), tw_core_count());
}

void shim_lut(const int8_t *table, const int8_t *in, int8_t *out, int n, int n_cores)
{
    lut_job_t j;
    j.table = table;
    j.in = in;
    j.out = out;
    j.n = n;
    tw_fork(n_cores, lut_core, &j);
}

/* ---- concat of two tensors (QLinearConcat); a NULL table copies */
void shim_concat2(const int8_t *a, const int8_t *lut_a, int inner_a, const int8_t *b,
                  const int8_t *lut_b, int inner_b, int8_t *out, int outer)
{
    tw_concat2_s8(a, lut_a, inner_a, b, lut_b, inner_b, out, outer, 0, 1);
}

/* ---- fixed-point primitives, for direct checks against golden/fixedpoint.py */
int32_t shim_mbqm(int32_t x, int32_t m, int32_t shift, int single)
{
    return single ? tw_mbqm_single(x, m, shift) : tw_mbqm(x, m, shift);
}

/* ---- the div mode's clamped division (tw_requant.h tw_div64_clamp) on n values */
void shim_div64_clamp(const int64_t *q, int n, int64_t d, int trunc, int64_t lo, int64_t hi, int64_t *out)
{
    int i;
    for (i = 0; i < n; i++) out[i] = tw_div64_clamp(q[i], d, trunc, lo, hi);
}

/* ---- onnx-mode add (QLinearAdd); f = ratio_a ratio_b fixed, q = qmin qmax */
typedef struct {
    tw_add_onnx_params_t p;
    const int8_t *a, *b;
    int8_t *out;
    int n, u8;
} add_onnx_job_t;

static void add_onnx_core(void *p)
{
    const add_onnx_job_t *j = (const add_onnx_job_t *)p;
    if (j->u8)
        tw_add_onnx_u8(&j->p, j->a, j->b, j->out, j->n, tw_core_id(), tw_core_count());
    else
        tw_add_onnx_s8(&j->p, j->a, j->b, j->out, j->n, tw_core_id(), tw_core_count());
}

/* u8: tw_add_onnx_u8 (uint8 tensors stored as u - 128) */
void shim_add_onnx(const float *f, const int32_t *q, const int8_t *a, const int8_t *b, int8_t *out,
                   int n, int n_cores, int u8)
{
    add_onnx_job_t j;
    j.p.ratio_a = f[0];
    j.p.ratio_b = f[1];
    j.p.fixed = f[2];
    j.p.qmin = q[0];
    j.p.qmax = q[1];
    j.a = a;
    j.b = b;
    j.out = out;
    j.n = n;
    j.u8 = u8;
    tw_fork(n_cores, add_onnx_core, &j);
}

/* ---- onnx QLinearAdd in integers (tw_add_onnx_exact_s8) */
typedef struct {
    tw_add_onnx_exact_params_t p;
    const int8_t *a, *b;
    int8_t *out;
    int n;
} add_onnx_exact_job_t;

static void add_onnx_exact_core(void *p)
{
    const add_onnx_exact_job_t *j = (const add_onnx_exact_job_t *)p;
    tw_add_onnx_exact_s8(&j->p, j->a, j->b, j->out, j->n, tw_core_id(), tw_core_count());
}

/* w: ma, tb[256]; q: shift, qmin, qmax, out_off */
void shim_add_onnx_exact(const int64_t *w, const int32_t *q, const int8_t *a, const int8_t *b,
                         int8_t *out, int n, int n_cores)
{
    add_onnx_exact_job_t j;
    int i;
    j.p.ma = w[0];
    for (i = 0; i < 256; i++) j.p.tb[i] = w[1 + i];
    j.p.shift = q[0];
    j.p.qmin = q[1];
    j.p.qmax = q[2];
    j.p.out_off = q[3];
    j.a = a;
    j.b = b;
    j.out = out;
    j.n = n;
    tw_fork(n_cores, add_onnx_exact_core, &j);
}

/* ---- global average pooling with a tw_requant_t (onnx QLinearGlobalAveragePool) */
static void gap_rq_core(void *p)
{
    tw_global_avgpool_rq_s8((const tw_gap_rq_args_t *)p, tw_core_id(), tw_core_count());
}

void shim_gap_rq(const int8_t *in, int pixels, int c, int32_t *acc, int acc_flags, int in_zp,
                 const int32_t *rqi, const int32_t *mult, const int32_t *shift,
                 const int32_t *lambda, const float *scale, int8_t *out, int n_cores)
{
    tw_gap_rq_args_t a;
    a.in = in;
    a.pixels = pixels;
    a.c = c;
    a.acc = acc;
    a.acc_flags = acc_flags;
    a.in_zp = in_zp;
    a.rq = requant(rqi, mult, shift, lambda, scale);
    a.out = out;
    tw_fork(n_cores, gap_rq_core, &a);
}
