/* ref_conv.c — the scalar reference convolution of ref_conv.h. */
#include <math.h>

#include "ref_conv.h"

static int32_t requant(int32_t acc, float scale, const ref_conv_geom_t *g)
{
    float f = nearbyintf((float)acc * scale);
    int64_t v;
    if (f > 1073741824.0f) f = 1073741824.0f;      /* far outside int8: the clamp decides */
    if (f < -1073741824.0f) f = -1073741824.0f;
    v = (int64_t)f + g->zero_point;
    if (v < g->qmin) v = g->qmin;
    if (v > g->qmax) v = g->qmax;
    return (int32_t)v;
}

void ref_conv2d_s8(const ref_conv_geom_t *g, const int8_t *x, const int8_t *w,
                   const int32_t *bias, const float *scale, int8_t *y)
{
    int oy, ox, k, fy, fx, c;
    for (oy = 0; oy < g->oy; oy++) {
        for (ox = 0; ox < g->ox; ox++) {
            for (k = 0; k < g->k; k++) {
                int32_t acc = bias[k];
                for (fy = 0; fy < g->fy; fy++) {
                    int iy = oy * g->sy - g->pad_t + fy;
                    for (fx = 0; fx < g->fx; fx++) {
                        int ix = ox * g->sx - g->pad_l + fx;
                        int inside = iy >= 0 && iy < g->iy && ix >= 0 && ix < g->ix;
                        const int8_t *px = inside ? x + ((long)iy * g->ix + ix) * g->c : 0;
                        const int8_t *pw = w + (((long)k * g->fy + fy) * g->fx + fx) * g->c;
                        for (c = 0; c < g->c; c++)
                            acc += (int32_t)(inside ? px[c] : g->pad_value) * pw[c];
                    }
                }
                y[((long)oy * g->ox + ox) * g->k + k] = (int8_t)requant(acc, scale[k], g);
            }
        }
    }
}
