/*
 * tw_job_geometry.h — the geometry of one accelerator job, the one copy the accelerator
 * families' job APIs and functional models share (bindings/ne16/c/tw_ne16.c,
 * bindings/diana_digital/c/tw_diana_digital.c, bindings/diana_analog/c/tw_diana_analog.c);
 * copied into tw_hal/ of the projects that use one of them (Family.hal_headers).
 *
 * A job reads a dense HWC input tile [in_h][in_w][in_c] and writes a dense HWC output
 * [out_h][out_w][out_k], at one stride in both directions, with pad_t / pad_l / pad_b / pad_r
 * rows and columns of padding around the tile (synthesized by the job: the tile holds none).
 * Output (oy, ox) reads, at kernel tap (fy, fx), tile row oy·stride - pad_t + fy and column
 * ox·stride - pad_l + fx; a tap outside [0, in_h) × [0, in_w) reads the job's pad value. The
 * output rows [r0, r0 + h) of a job read the input rows [r0·stride - pad_t,
 * (r0 + h - 1)·stride - pad_t + k_h): clipped to the tile, what lies outside is their padding
 * (tw_job_rows).
 *
 * What stays with each family: its job kinds (NE16's kernel follows from the kind: 3×3 or 1×1),
 * element types and pad value, weight layout, arithmetic and requantization, dispatch.
 */
#ifndef TW_JOB_GEOMETRY_H
#define TW_JOB_GEOMETRY_H

#include <stddef.h>

typedef struct {
    int k_h, k_w;              /* the kernel */
    int stride;                /* 1 or 2, both directions */
    int in_h, in_w, in_c, out_h, out_w, out_k;
    int pad_t, pad_l, pad_b, pad_r;
} tw_job_geom_t;

/* The kernel and stride of a job (set with its kind). */
static inline void tw_job_set_kernel(tw_job_geom_t *g, int k_h, int k_w, int stride)
{
    g->k_h = k_h;
    g->k_w = k_w;
    g->stride = stride;
}

/* The extents and padding of a job. */
static inline void tw_job_set_dims(tw_job_geom_t *g, int in_h, int in_w, int in_c, int out_h,
                                   int out_w, int out_k, int pad_t, int pad_l, int pad_b,
                                   int pad_r)
{
    g->in_h = in_h;
    g->in_w = in_w;
    g->in_c = in_c;
    g->out_h = out_h;
    g->out_w = out_w;
    g->out_k = out_k;
    g->pad_t = pad_t;
    g->pad_l = pad_l;
    g->pad_b = pad_b;
    g->pad_r = pad_r;
}

/* The tile row output row oy reads at kernel row fy (negative or past in_h: padding). */
static inline int tw_job_in_y(const tw_job_geom_t *g, int oy, int fy)
{
    return oy * g->stride - g->pad_t + fy;
}

/* The tile column output column ox reads at kernel column fx. */
static inline int tw_job_in_x(const tw_job_geom_t *g, int ox, int fx)
{
    return ox * g->stride - g->pad_l + fx;
}

/* Whether tile row iy, column ix is in the tile (else the tap reads the pad value). */
static inline int tw_job_inside(const tw_job_geom_t *g, int iy, int ix)
{
    return iy >= 0 && iy < g->in_h && ix >= 0 && ix < g->in_w;
}

/* The element of the input tile at row iy, column ix, channel c (inside the tile). */
static inline size_t tw_job_in_at(const tw_job_geom_t *g, int iy, int ix, int c)
{
    return ((size_t)iy * (size_t)g->in_w + (size_t)ix) * (size_t)g->in_c + (size_t)c;
}

/* The element of output (oy, ox) channel 0. */
static inline size_t tw_job_out_at(const tw_job_geom_t *g, int oy, int ox)
{
    return ((size_t)oy * (size_t)g->out_w + (size_t)ox) * (size_t)g->out_k;
}

/* Elements of the job's output. */
static inline size_t tw_job_out_elems(const tw_job_geom_t *g)
{
    return (size_t)g->out_h * (size_t)g->out_w * (size_t)g->out_k;
}

/* The geometry `sub` of output rows [r0, r0 + h) of job `g`: its input rows, clipped to the tile
 * (in_h), the padding they synthesize at the tile's top and bottom (pad_t, pad_b), out_h = h,
 * the rest as g. Returns the element of g's input tile where sub's starts. */
static inline size_t tw_job_rows(const tw_job_geom_t *g, int r0, int h, tw_job_geom_t *sub)
{
    int lo = r0 * g->stride - g->pad_t;                       /* first input row it reads */
    int hi = (r0 + h - 1) * g->stride - g->pad_t + g->k_h;    /* one past the last */
    *sub = *g;
    sub->pad_t = lo < 0 ? -lo : 0;
    sub->pad_b = hi > g->in_h ? hi - g->in_h : 0;
    lo = lo < 0 ? 0 : lo;
    hi = hi > g->in_h ? g->in_h : hi;
    sub->in_h = hi - lo;
    sub->out_h = h;
    return (size_t)lo * (size_t)g->in_w * (size_t)g->in_c;
}

#endif /* TW_JOB_GEOMETRY_H */
