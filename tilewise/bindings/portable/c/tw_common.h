/*
 * tw_common.h — shared definitions of the tilewise kernel library.
 *
 * What every kernel header relies on:
 *   - tw_window_t: the geometry of one spatial tile of a windowed layer (conv, depthwise, pool).
 *   - tw_core_range(): how a kernel splits its work across the cores of a cluster.
 *   - integer helpers (portable floor shift, clamp) used by the requantization code.
 *
 * Layout: all activations are HWC (channels innermost), as in PULP-NN (seed 004, ch. 3: "HWC
 * layout ... data along the channels is stored with a stride of 1"). A tile buffer is dense:
 * element (y, x, c) of a tile of width W and C channels is at index (y * W + x) * C + c.
 *
 * Tile geometry contract (tw_window_t), shared by conv / depthwise / pooling:
 *   The tile's input buffer holds in_h x in_w pixels. Output pixel (oy, ox) of the tile (0-based,
 *   tile-local) reads the input taps
 *       iy = oy * s_h - pad_t + fy * d_h,   ix = ox * s_w - pad_l + fx * d_w
 *   for fy < k_h, fx < k_w. A tap outside [0, in_h) x [0, in_w) is padding: convolutions read the
 *   tile's pad value there (the input zero point), pooling ignores it (TFLite semantics).
 *   The tiler gives each tile its own pads: an interior tile has pads 0 and carries its halo rows
 *   and columns as real data; a border tile has the layer's padding on the sides it touches. For a
 *   layer of input height H and padding PT, the output rows [oy0, oy1) need the global input rows
 *   [a, b) with a = oy0*s - PT and b = (oy1-1)*s - PT + d*(k-1) + 1; the tile then holds rows
 *   [max(a,0), min(b,H)), pad_t = max(-a, 0), pad_b = max(b - H, 0). Columns alike.
 *   pad_b / pad_r do not change the arithmetic (taps beyond the buffer are padding anyway); they
 *   are carried so that tw_window_valid() can check the tiler's arithmetic.
 *
 * Core split (seed 004 §3.3.2): a kernel called as f(args, core_id, n_cores) computes only its
 * share [begin, end) of one dimension, chunk = ceil(total / n_cores) (the PULP-NN chunking; the
 * last cores may get less or nothing). Every core of the team must call the kernel with the same
 * arguments; the caller puts a barrier (tw_barrier) after the call before anyone reads the output.
 * Kernels never call the HAL themselves and never allocate: scratch is passed in.
 */
#ifndef TW_COMMON_H
#define TW_COMMON_H

#include <stdint.h>
#include <stddef.h>

/* Geometry of one spatial tile of a windowed layer (see the contract above). */
typedef struct {
    int in_h, in_w;                     /* input pixels held in the tile buffer */
    int out_h, out_w;                   /* output pixels this tile produces */
    int k_h, k_w;                       /* window (kernel) size */
    int s_h, s_w;                       /* stride, >= 1 */
    int d_h, d_w;                       /* dilation, >= 1 (pooling: must be 1) */
    int pad_t, pad_l, pad_b, pad_r;     /* padding of this tile on each side, >= 0 */
} tw_window_t;

/* 1 when every tap of every output pixel lies in [-pad_t, in_h + pad_b) x [-pad_l, in_w + pad_r)
 * and all sizes are positive; 0 otherwise. For debug builds and tests, not called by kernels. */
int tw_window_valid(const tw_window_t *win);

/* The [*begin, *end) share of `total` items owned by core `core` of `n_cores`. */
static inline void tw_core_range(int total, int core, int n_cores, int *begin, int *end)
{
    int chunk = (total + n_cores - 1) / n_cores;
    int b = core * chunk;
    int e = b + chunk;
    if (b > total) b = total;
    if (e > total) e = total;
    *begin = b;
    *end = e;
}

/* Floor (arithmetic) right shift of a signed value, portable: C leaves >> of negative values
 * implementation-defined. For x < 0, ~x >= 0 and ~(~x >> n) == floor(x / 2^n). */
static inline int32_t tw_asr32(int32_t x, int n)
{
    return x < 0 ? ~(~x >> n) : x >> n;
}

static inline int64_t tw_asr64(int64_t x, int n)
{
    return x < 0 ? ~(~x >> n) : x >> n;
}

static inline int32_t tw_clamp32(int32_t x, int32_t lo, int32_t hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* The next row of a broadcasting walk over `rank` output dimensions (tw_binary, tw_int_binary):
 * an odometer over the outer ones (idx[0 .. rank-2]), the operands' element offsets *ia / *ib
 * moved by their strides (0 along a broadcast dimension). */
static inline void tw_broadcast_next_row(int32_t *idx, int rank, const int32_t *out_dims,
                                         const int32_t *a_stride, const int32_t *b_stride,
                                         int32_t *ia, int32_t *ib)
{
    int d;
    for (d = rank - 2; d >= 0; d--) {
        *ia += a_stride[d];
        *ib += b_stride[d];
        if (++idx[d] < out_dims[d]) break;
        *ia -= idx[d] * a_stride[d];
        *ib -= idx[d] * b_stride[d];
        idx[d] = 0;
    }
}

/* Accumulation flags of kernels that may be tiled along their reduction dimension (input
 * channels of conv / dense, pixels of global average pooling). */
#define TW_ACC_FIRST 1   /* this tile starts the sum: initialise from the bias (or 0) */
#define TW_ACC_LAST 2    /* this tile ends the sum: requantize and write the int8 output */
#define TW_ACC_WHOLE (TW_ACC_FIRST | TW_ACC_LAST)

/* A narrow accumulator register (seed 002 ch. 4: the IDSP's 16-bit accumulators): `acc` wrapped
 * to `bits` bits of two's complement, i.e. taken modulo 2^bits into [-2^(bits-1), 2^(bits-1)).
 * bits >= 32 returns acc unchanged (the int32 accumulators of every other module).
 * Where it applies: the kernels accumulate in int32 and wrap where the accumulator leaves the
 * register — before the requantization and when a partial sum is stored between input-channel
 * tiles. Addition modulo 2^bits is exact in any order, so this equals wrapping after every MAC
 * (seed 002 Fig. 4.6) and matches the golden model (golden/layers.py), which wraps once. Unsigned
 * arithmetic keeps every step defined C. */
static inline int32_t tw_acc_wrap(int32_t acc, int bits)
{
    uint32_t half, mask;
    if (bits >= 32)
        return acc;
    half = 1u << (bits - 1);
    mask = (half << 1) - 1u;
    return (int32_t)(((uint32_t)acc + half) & mask) - (int32_t)half;
}

#endif /* TW_COMMON_H */
