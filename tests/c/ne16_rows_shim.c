/*
 * ne16_rows_shim.c — test-only, for tests/test_ne16_pipeline.py: a tile's int32 outputs through
 * row jobs (tw_ne16_task_rows) in the discipline of bindings/ne16/templates/ne16_s8.c.j2, and
 * one job whose input is written while it is in flight.
 *   dims: as ne16_shim.c (kind, w_bits, stride, in_h, in_w, in_c, out_h, out_w, out_k, pad_t,
 *         pad_l, pad_b, pad_r, pad_value)
 */
#include <string.h>

#include "tw_ne16.h"

static void whole_task(tw_ne16_task_t *t, const int *dims, const uint8_t *in, const uint8_t *w,
                       void *out)
{
    tw_ne16_task_init(t, dims[0], dims[1], dims[2]);
    tw_ne16_task_set_dims(t, dims[3], dims[4], dims[5], dims[6], dims[7], dims[8], dims[9],
                          dims[10], dims[11], dims[12], (uint8_t)dims[13]);
    tw_ne16_task_set_addr_conv(t, in, w, out);
}

/* Jobs of `rows` output rows; job j + 1 is dispatched before job j's accumulators are copied to
 * out (where the cluster would requantize them). Two accumulator buffers in turn in `scratch`
 * (2 · rows · out_w · out_k words), or with `broken` one for every job: the copy then reads the
 * in-flight job's buffer. Returns the jobs dispatched so far. */
long shim_ne16_rows(const int *dims, const uint8_t *in, const uint8_t *w, int32_t *out, int rows,
                    int broken, int32_t *scratch)
{
    tw_ne16_task_t t, sub;
    const int out_h = dims[6], px = dims[7] * dims[8];
    const int jobs = (out_h + rows - 1) / rows;
    int32_t *acc[2];
    int j, id;
    acc[0] = scratch;
    acc[1] = broken ? scratch : scratch + rows * px;
    whole_task(&t, dims, in, w, NULL);
    tw_ne16_task_rows(&t, 0, rows < out_h ? rows : out_h, acc[0], &sub);
    id = tw_ne16_dispatch(&sub);
    for (j = 0; j < jobs; j++) {
        const int r0 = j * rows, h = j + 1 < jobs ? rows : out_h - r0;
        tw_ne16_wait(id);
        if (j + 1 < jobs) {
            const int r1 = r0 + rows, h1 = j + 2 < jobs ? rows : out_h - r1;
            tw_ne16_task_rows(&t, r1, h1, acc[(j + 1) & 1], &sub);
            id = tw_ne16_dispatch(&sub);
        }
        memcpy(out + (size_t)r0 * (size_t)px, acc[j & 1], (size_t)h * (size_t)px * 4);
    }
    return tw_ne16_jobs();
}

/* One whole job; between its dispatch and its wait the input's first byte becomes `poke`.
 * Returns the output's first word as read before the wait. */
int32_t shim_ne16_inflight(const int *dims, uint8_t *in, const uint8_t *w, int32_t *out, int poke)
{
    tw_ne16_task_t t;
    int32_t before;
    int id;
    whole_task(&t, dims, in, w, out);
    id = tw_ne16_dispatch(&t);
    in[0] = (uint8_t)poke;
    before = out[0];
    tw_ne16_wait(id);
    return before;
}
