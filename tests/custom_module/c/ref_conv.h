/*
 * ref_conv.h — a scalar reference 2-D convolution: the kernel of the test's "ref" module
 * (tests/custom_module). Whole NHWC tensors, one core, no tiles; weights [K][FY][FX][C];
 * int32 bias with the input zero point folded in (padding uses pad_value); onnxruntime's
 * QLinearConv requantization: y = clamp(round_half_even((float)acc * scale[k]) + zp).
 */
#ifndef REF_CONV_H
#define REF_CONV_H

#include <stdint.h>

typedef struct {
    int iy, ix, c;             /* input rows, columns, channels */
    int oy, ox, k;             /* output rows, columns, channels */
    int fy, fx, sy, sx;        /* kernel and stride */
    int pad_t, pad_l;          /* padding before the first row / column */
    int8_t pad_value;          /* the input zero point */
    int32_t zero_point, qmin, qmax;
} ref_conv_geom_t;

void ref_conv2d_s8(const ref_conv_geom_t *g, const int8_t *x, const int8_t *w,
                   const int32_t *bias, const float *scale, int8_t *y);

#endif /* REF_CONV_H */
