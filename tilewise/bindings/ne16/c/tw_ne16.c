/*
 * tw_ne16.c — the NE16 task API and its functional model (contract in tw_ne16.h): the host HAL's
 * NE16. On a GAP9 the same calls would program the accelerator (pulp-nnx's ne16 driver).
 *
 * A job is in flight from its dispatch to its wait, as on the chip, where NE16 reads its input and
 * writes its output while the cores run on: the model fills the job's output with a poison
 * pattern at dispatch (NE16 starts overwriting it) and computes the job at wait, from its input
 * as it is then. A caller that reads an in-flight job's output, or writes its input, before
 * waiting for it gets wrong outputs here, not only on the chip (tests/test_ne16_pipeline.py).
 *
 * Built with -DTW_NE16_ENGINE (the pulp-open-ne16 firmware, whose cluster has GVSoC's NE16), the
 * dispatch, wait and job count come from the HAL on NE16's registers instead
 * (tw_hal/tw_hal_ne16_pulp_open.c); the task set-up and the functional model stay here.
 */
#include "tw_ne16.h"

#include <stddef.h>
#include <string.h>

#ifndef TW_NE16_ENGINE
/* jobs NE16 holds at once (its two job slots, pulp-nnx's ne16 context count) */
#define TW_NE16_SLOTS 2
/* what an in-flight job's output holds before the job completes */
#define TW_NE16_POISON 0xA5

static long g_jobs;
static long g_done;                           /* jobs computed: ids [0, g_done) */
static tw_ne16_task_t g_slot[TW_NE16_SLOTS];  /* job id's task at g_slot[id % TW_NE16_SLOTS] */
#endif

void tw_ne16_task_init(tw_ne16_task_t *t, int kind, int w_bits, int stride)
{
    tw_ne16_task_t z = {0};
    int k = kind == TW_NE16_CONV1X1 ? 1 : 3;     /* the kernel: 1x1 or 3x3 */
    *t = z;
    t->kind = kind;
    t->w_bits = w_bits;
    t->w_offset = -(1 << (w_bits - 1));
    tw_job_set_kernel(&t->geom, k, k, stride);
}

void tw_ne16_task_set_dims(tw_ne16_task_t *t, int in_h, int in_w, int in_c, int out_h, int out_w,
                           int out_k, int pad_t, int pad_l, int pad_b, int pad_r,
                           uint8_t pad_value)
{
    tw_job_set_dims(&t->geom, in_h, in_w, in_c, out_h, out_w, out_k, pad_t, pad_l, pad_b, pad_r);
    t->pad_value = pad_value;
}

void tw_ne16_task_set_addr_conv(tw_ne16_task_t *t, const uint8_t *in, const uint8_t *w, void *out)
{
    t->in = in;
    t->w = w;
    t->out = out;
}

void tw_ne16_task_set_norm_quant(tw_ne16_task_t *t, const int32_t *scale, const int32_t *bias,
                                 int shift, int relu, int out_signed)
{
    t->norm_quant = 1;
    t->scale = scale;
    t->bias = bias;
    t->shift = shift;
    t->relu = relu;
    t->out_signed = out_signed;
}

void tw_ne16_task_rows(const tw_ne16_task_t *t, int r0, int h, void *out, tw_ne16_task_t *sub)
{
    *sub = *t;
    sub->in = t->in + tw_job_rows(&t->geom, r0, h, &sub->geom);
    sub->out = out;
}

void tw_ne16_rows_init(tw_ne16_rows_t *p, const tw_ne16_task_t *t, int rows)
{
    p->task = *t;
    p->rows = rows;
    p->jobs = (t->geom.out_h + rows - 1) / rows;
    p->built = 0;
    p->in_step = (uint32_t)rows * (uint32_t)t->geom.stride * (uint32_t)t->geom.in_w *
                 (uint32_t)t->geom.in_c;
}

#ifndef TW_NE16_ENGINE
void tw_ne16_rows_prepare(tw_ne16_rows_t *p)
{
    (void)p;
}

int tw_ne16_dispatch_rows(tw_ne16_rows_t *p, int j, void *out)
{
    const int r0 = j * p->rows, h = j + 1 < p->jobs ? p->rows : p->task.geom.out_h - r0;
    tw_ne16_task_t sub;
    tw_ne16_task_rows(&p->task, r0, h, out, &sub);
    return tw_ne16_dispatch(&sub);
}

/* Bytes of the job's output. */
static size_t out_bytes(const tw_ne16_task_t *t)
{
    size_t n = tw_job_out_elems(&t->geom);
    return t->norm_quant ? n : 4 * n;
}

int tw_ne16_dispatch(const tw_ne16_task_t *t)
{
    if (g_jobs - g_done >= TW_NE16_SLOTS)    /* both slots busy: the chip would stall here */
        tw_ne16_wait((int)g_done);
    g_slot[g_jobs % TW_NE16_SLOTS] = *t;
    memset(t->out, TW_NE16_POISON, out_bytes(t));
    return (int)g_jobs++;
}

void tw_ne16_wait(int id)
{
    while (g_done <= (long)id && g_done < g_jobs) {      /* jobs complete in order */
        tw_ne16_run(&g_slot[g_done % TW_NE16_SLOTS]);
        g_done++;
    }
}

long tw_ne16_jobs(void)
{
    return g_jobs;
}
#endif

/* The stored (unsigned) weight of weight row `row`, input channel c, tap `tap`, from its
 * bit planes. */
static uint32_t stored_weight(const tw_ne16_task_t *t, int row, int cin, int c, int tap)
{
    int taps = t->geom.k_h * t->geom.k_w, nb = (cin + 15) / 16, i;
    const uint8_t *p = t->w + (((size_t)row * nb + (size_t)(c / 16)) * (size_t)t->w_bits) * taps * 2;
    uint32_t v = 0;
    for (i = 0; i < t->w_bits; i++) {
        const uint8_t *q = p + ((size_t)i * taps + (size_t)tap) * 2;
        uint32_t word = (uint32_t)q[0] | (uint32_t)q[1] << 8;
        v |= ((word >> (c % 16)) & 1u) << i;
    }
    return v;
}

/* The input value u at tile row iy, column ix, channel c (the pad value outside the tile). */
static uint32_t input_at(const tw_ne16_task_t *t, int iy, int ix, int c)
{
    return tw_job_inside(&t->geom, iy, ix) ? t->in[tw_job_in_at(&t->geom, iy, ix, c)]
                                           : t->pad_value;
}

/* int32 accumulator of output (oy, ox, k): sum of (stored + offset) · u, modulo 2^32. */
static int32_t accumulate(const tw_ne16_task_t *t, int oy, int ox, int k)
{
    int fy, fx, c;
    uint32_t acc = 0;
    for (fy = 0; fy < t->geom.k_h; fy++) {
        for (fx = 0; fx < t->geom.k_w; fx++) {
            int iy = tw_job_in_y(&t->geom, oy, fy), ix = tw_job_in_x(&t->geom, ox, fx);
            int tap = fy * t->geom.k_w + fx;
            if (t->kind == TW_NE16_DEPTHWISE3X3) {
                uint32_t u = input_at(t, iy, ix, k);
                acc += (stored_weight(t, 0, t->geom.out_k, k, tap) + (uint32_t)t->w_offset) * u;
                continue;
            }
            for (c = 0; c < t->geom.in_c; c++) {
                uint32_t u = input_at(t, iy, ix, c);
                acc += (stored_weight(t, k, t->geom.in_c, c, tap) + (uint32_t)t->w_offset) * u;
            }
        }
    }
    return (int32_t)acc;
}

/* norm-quant of one accumulator (tw_ne16.h). */
static int32_t norm_quant(const tw_ne16_task_t *t, int32_t acc, int k)
{
    int64_t v = (int64_t)(int32_t)((uint32_t)acc * (uint32_t)t->scale[k]);   /* wrap to int32 */
    int32_t lo = t->out_signed ? -128 : 0, hi = t->out_signed ? 127 : 255;
    if (t->bias)
        v += t->bias[k];
    if (v > INT32_MAX)
        v = INT32_MAX;
    if (v < INT32_MIN)
        v = INT32_MIN;
    if (t->relu && v < 0)
        v = 0;
    v = v < 0 ? ~(~v >> t->shift) : v >> t->shift;       /* arithmetic shift: floor */
    return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}

void tw_ne16_run(const tw_ne16_task_t *t)
{
    int oy, ox, k;
    for (oy = 0; oy < t->geom.out_h; oy++) {
        for (ox = 0; ox < t->geom.out_w; ox++) {
            size_t base = tw_job_out_at(&t->geom, oy, ox);
            for (k = 0; k < t->geom.out_k; k++) {
                int32_t acc = accumulate(t, oy, ox, k);
                if (!t->norm_quant)
                    ((int32_t *)t->out)[base + k] = acc;
                else if (t->out_signed)
                    ((int8_t *)t->out)[base + k] = (int8_t)norm_quant(t, acc, k);
                else
                    ((uint8_t *)t->out)[base + k] = (uint8_t)norm_quant(t, acc, k);
            }
        }
    }
}
