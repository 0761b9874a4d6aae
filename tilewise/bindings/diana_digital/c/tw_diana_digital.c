/*
 * tw_diana_digital.c — the digital accelerator's job API and its functional model (contract in
 * tw_diana_digital.h): the host HAL's accelerator, which runs a dispatched job at once. On DIANA
 * the same calls would program the core; no DIANA simulator exists here.
 */
#include "tw_diana_digital.h"

#include <stddef.h>

static long g_jobs;

void tw_diana_job_init(tw_diana_job_t *j, int kind, int k_h, int k_w, int stride)
{
    tw_diana_job_t z = {0};
    *j = z;
    j->kind = kind;
    tw_job_set_kernel(&j->geom, k_h, k_w, stride);
}

void tw_diana_job_set_dims(tw_diana_job_t *j, int in_h, int in_w, int in_c, int out_h, int out_w,
                           int out_k, int pad_t, int pad_l, int pad_b, int pad_r,
                           int8_t pad_value)
{
    tw_job_set_dims(&j->geom, in_h, in_w, in_c, out_h, out_w, out_k, pad_t, pad_l, pad_b, pad_r);
    j->pad_value = pad_value;
}

void tw_diana_job_set_addr(tw_diana_job_t *j, const int8_t *in, const uint8_t *w,
                           const int32_t *bias, void *out)
{
    j->in = in;
    j->w = w;
    j->bias = bias;
    j->out = out;
}

void tw_diana_job_set_add(tw_diana_job_t *j, const int8_t *a, const int8_t *b, int8_t *out)
{
    j->in = a;
    j->in2 = b;
    j->out = out;
}

void tw_diana_job_set_requant(tw_diana_job_t *j, int shift, int qmin, int qmax)
{
    j->requant = 1;
    j->shift = shift;
    j->qmin = qmin;
    j->qmax = qmax;
}

int tw_diana_dispatch(const tw_diana_job_t *j)
{
    tw_diana_run(j);
    return (int)g_jobs++;
}

void tw_diana_wait(int id)
{
    (void)id;                  /* the job ran in tw_diana_dispatch */
}

long tw_diana_jobs(void)
{
    return g_jobs;
}

/* The weight of output channel k, tap (fy, fx), input channel c, from the core's layout: its
 * layout position, with every 4 bytes reversed (p ^ 3). */
static int32_t weight(const tw_diana_job_t *j, int k, int fy, int fx, int c)
{
    const tw_job_geom_t *g = &j->geom;
    size_t p;
    if (j->kind == TW_DIANA_DENSE) {
        size_t cpad = ((size_t)g->in_c + 15u) / 16u * 16u;
        p = (size_t)k * cpad + (size_t)c;
    } else if (j->kind == TW_DIANA_DEPTHWISE) {
        size_t row = 4u * (size_t)k;                  /* each channel, then 3 zero rows */
        p = (((row / 16u) * (size_t)g->k_h + (size_t)fy) * (size_t)g->k_w + (size_t)fx) * 16u
            + row % 16u;
    } else {
        p = ((((size_t)k / 16u * (size_t)g->in_c + (size_t)c) * (size_t)g->k_h + (size_t)fy)
             * (size_t)g->k_w + (size_t)fx) * 16u + (size_t)k % 16u;
    }
    return (int8_t)j->w[p ^ 3u];
}

/* The input at tile row iy, column ix, channel c (the pad value outside the tile). */
static int32_t input_at(const tw_diana_job_t *j, int iy, int ix, int c)
{
    return tw_job_inside(&j->geom, iy, ix) ? j->in[tw_job_in_at(&j->geom, iy, ix, c)]
                                           : j->pad_value;
}

/* acc of output (oy, ox, k): bias + sum of w * x, modulo 2^32. */
static int32_t accumulate(const tw_diana_job_t *j, int oy, int ox, int k)
{
    uint32_t acc = j->bias ? (uint32_t)j->bias[k] : 0u;
    int fy, fx, c;
    for (fy = 0; fy < j->geom.k_h; fy++) {
        for (fx = 0; fx < j->geom.k_w; fx++) {
            int iy = tw_job_in_y(&j->geom, oy, fy), ix = tw_job_in_x(&j->geom, ox, fx);
            if (j->kind == TW_DIANA_DEPTHWISE) {
                acc += (uint32_t)(weight(j, k, fy, fx, 0) * input_at(j, iy, ix, k));
                continue;
            }
            for (c = 0; c < j->geom.in_c; c++)
                acc += (uint32_t)(weight(j, k, fy, fx, c) * input_at(j, iy, ix, c));
        }
    }
    return (int32_t)acc;
}

/* clip(v >> shift, qmin, qmax), the shift arithmetic (floor) */
static int8_t requant(const tw_diana_job_t *j, int32_t v)
{
    v = v < 0 ? ~(~v >> j->shift) : v >> j->shift;
    return (int8_t)(v < j->qmin ? j->qmin : v > j->qmax ? j->qmax : v);
}

void tw_diana_run(const tw_diana_job_t *j)
{
    int oy, ox, k;
    if (j->kind == TW_DIANA_ADD) {
        size_t i, n = (size_t)j->geom.out_h * (size_t)j->geom.out_w * (size_t)j->geom.out_k;
        for (i = 0; i < n; i++)
            ((int8_t *)j->out)[i] = requant(j, (int32_t)j->in[i] + (int32_t)j->in2[i]);
        return;
    }
    for (oy = 0; oy < j->geom.out_h; oy++) {
        for (ox = 0; ox < j->geom.out_w; ox++) {
            size_t base = tw_job_out_at(&j->geom, oy, ox);
            for (k = 0; k < j->geom.out_k; k++) {
                int32_t acc = accumulate(j, oy, ox, k);
                if (!j->requant) {
                    ((int32_t *)j->out)[base + k] = acc;
                    continue;
                }
                ((int8_t *)j->out)[base + k] = requant(j, acc);
            }
        }
    }
}
