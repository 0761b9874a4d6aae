/*
 * tw_diana_analog.c — the analog core's task API and its functional model (contract in
 * tw_diana_analog.h): the host HAL's analog core, which runs a dispatched job at once. On a DIANA
 * the same calls would program the array through the chip's runtime; no DIANA is simulated here.
 */
#include "tw_diana_analog.h"

#include <stddef.h>

static long g_jobs;

void tw_analog_task_init(tw_analog_task_t *t, int k_h, int k_w, int stride)
{
    tw_analog_task_t z = {0};
    *t = z;
    tw_job_set_kernel(&t->geom, k_h, k_w, stride);
    t->divisor = 1;
    t->adc_min = -32;
    t->adc_max = 31;
    t->qmin = -128;
    t->qmax = 127;
}

void tw_analog_task_set_dims(tw_analog_task_t *t, int in_h, int in_w, int in_c, int out_h,
                             int out_w, int out_k, int pad_t, int pad_l, int pad_b, int pad_r,
                             int8_t pad_value)
{
    tw_job_set_dims(&t->geom, in_h, in_w, in_c, out_h, out_w, out_k, pad_t, pad_l, pad_b, pad_r);
    t->pad_value = pad_value;
}

void tw_analog_task_set_addr(tw_analog_task_t *t, const int8_t *in, const uint8_t *w,
                             const int32_t *bias, int8_t *out)
{
    t->in = in;
    t->w = w;
    t->bias = bias;
    t->out = out;
}

void tw_analog_task_set_adc(tw_analog_task_t *t, int32_t divisor, int32_t adc_min,
                            int32_t adc_max)
{
    t->divisor = divisor;
    t->adc_min = adc_min;
    t->adc_max = adc_max;
}

void tw_analog_task_set_requant(tw_analog_task_t *t, const int32_t *m, const int32_t *a,
                                const int32_t *s, int32_t zero_point, int32_t qmin, int32_t qmax)
{
    t->m = m;
    t->a = a;
    t->s = s;
    t->zero_point = zero_point;
    t->qmin = qmin;
    t->qmax = qmax;
}

int tw_analog_dispatch(const tw_analog_task_t *t)
{
    tw_analog_run(t);
    return (int)g_jobs++;
}

void tw_analog_wait(int id)
{
    (void)id;                  /* the job ran in tw_analog_dispatch */
}

long tw_analog_jobs(void)
{
    return g_jobs;
}

/* The weight of column k at row j (j = (fy·k_w + fx)·in_c + c): its 2-bit code sign-extended. */
static int32_t weight(const tw_analog_task_t *t, int k, int j)
{
    size_t row_bytes = (size_t)t->geom.k_h * (size_t)t->geom.k_w * (size_t)t->geom.in_c / 4;
    int code = (t->w[(size_t)k * row_bytes + (size_t)(j / 4)] >> (2 * (j % 4))) & 3;
    return code >= 2 ? code - 4 : code;
}

/* The input at tile row iy, column ix, channel c (pad_value outside the tile). */
static int32_t input_at(const tw_analog_task_t *t, int iy, int ix, int c)
{
    return tw_job_inside(&t->geom, iy, ix) ? t->in[tw_job_in_at(&t->geom, iy, ix, c)]
                                           : t->pad_value;
}

/* The array's sum of output (oy, ox, k), bias included. */
static int32_t accumulate(const tw_analog_task_t *t, int oy, int ox, int k)
{
    int32_t acc = t->bias[k];
    int fy, fx, c;
    for (fy = 0; fy < t->geom.k_h; fy++) {
        for (fx = 0; fx < t->geom.k_w; fx++) {
            int iy = tw_job_in_y(&t->geom, oy, fy), ix = tw_job_in_x(&t->geom, ox, fx);
            int j = (fy * t->geom.k_w + fx) * t->geom.in_c;
            for (c = 0; c < t->geom.in_c; c++)
                acc += weight(t, k, j + c) * input_at(t, iy, ix, c);
        }
    }
    return acc;
}

/* floor(a / d), d > 0 */
static int32_t floor_div(int32_t a, int32_t d)
{
    int32_t q = a / d;
    return (a % d != 0 && a < 0) ? q - 1 : q;
}

/* The ADC and the digital stage of one sum (tw_diana_analog.h). */
static int8_t output(const tw_analog_task_t *t, int32_t acc, int k)
{
    int32_t a6 = floor_div(acc, t->divisor);
    int64_t v;
    a6 = a6 < t->adc_min ? t->adc_min : a6 > t->adc_max ? t->adc_max : a6;
    v = (int64_t)a6 * t->m[k] + t->a[k];
    v = v < 0 ? ~(~v >> t->s[k]) : v >> t->s[k];          /* arithmetic shift: floor */
    v += t->zero_point;
    return (int8_t)(v < t->qmin ? t->qmin : v > t->qmax ? t->qmax : v);
}

void tw_analog_run(const tw_analog_task_t *t)
{
    int oy, ox, k;
    for (oy = 0; oy < t->geom.out_h; oy++) {
        for (ox = 0; ox < t->geom.out_w; ox++) {
            size_t base = tw_job_out_at(&t->geom, oy, ox);
            for (k = 0; k < t->geom.out_k; k++)
                t->out[base + k] = output(t, accumulate(t, oy, ox, k), k);
        }
    }
}
