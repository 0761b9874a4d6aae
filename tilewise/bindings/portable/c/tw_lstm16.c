/*
 * tw_lstm16.c — TFLite Micro's 16x8 LSTM step (tw_lstm16.h; golden/lstm16.py is the same in numpy).
 */
#include "tw_lstm16.h"

#include "tw_requant.h"
#include "tw_s16.h"

#define TW_I16_MIN (-32768)
#define TW_I16_MAX 32767

/* sigmoid_table_uint16 (TFLite's kernels/internal/common.h): sigmoid(k / 24) in 0.16 */
static const uint16_t TW_SIGMOID_TABLE[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

static inline int32_t sat16(int32_t v)
{
    return v > TW_I16_MAX ? TW_I16_MAX : v < TW_I16_MIN ? TW_I16_MIN : v;
}

int16_t tw_lstm16_sigmoid(int16_t a)
{
    int32_t v = (int32_t)a * 3;
    uint32_t u = (uint32_t)(v < 0 ? -v : v), uh = u >> 9, r;
    if (uh >= 255) {
        r = 0x7FFFu << 10;
    } else {
        uint32_t ua = TW_SIGMOID_TABLE[uh], ub = TW_SIGMOID_TABLE[uh + 1];
        r = (ua << 9) + (u & 0x1FFu) * (ub - ua);
    }
    r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
    return (int16_t)(r >> 10);
}

int16_t tw_lstm16_tanh(int16_t a, int power)
{
    const int s = 15 + power - 3;
    int32_t v = s >= 0 ? (int32_t)a * (3 << s) : tw_asr32((int32_t)a * 3 + (1 << (-s - 1)), -s);
    uint32_t u = (uint32_t)(v < 0 ? -v : v), uh = u >> 8;
    int32_t r;
    if (uh >= 255) {
        r = (int32_t)(0xFFFFu << 8);
    } else {
        uint32_t ua = TW_SIGMOID_TABLE[uh], ub = TW_SIGMOID_TABLE[uh + 1];
        r = (int32_t)((ua << 8) + (u & 0xFFu) * (ub - ua));
    }
    r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return (int16_t)tw_asr32(r, 8);
}

int16_t tw_lstm16_rescale(int64_t acc, int32_t m0, int32_t shift)
{
    return (int16_t)sat16(tw_mbqm64(acc, m0, shift));
}

/* w . v over n terms: in int32 below 512 terms (exact: tw_lstm16.h), else in int64. */
static int64_t dot16(const int8_t *w, const int16_t *v, int n)
{
    int j;
    if (n < 512) {
        int32_t s = 0;
        for (j = 0; j < n; j++) s += (int32_t)w[j] * v[j];
        return s;
    } else {
        int64_t s = 0;
        for (j = 0; j < n; j++) s += (int32_t)w[j] * v[j];
        return s;
    }
}

void tw_lstm16_reset(const tw_lstm16_t *p, int16_t *h, int16_t *c)
{
    int k;
    for (k = 0; k < p->n_cell; k++) {
        h[k] = 0;
        c[k] = 0;
    }
}

void tw_lstm16_gates(const tw_lstm16_t *p, const int16_t *x, const int16_t *h, int16_t *gate)
{
    const int H = p->n_cell, I = p->n_input;
    const int8_t *wx = p->w_x, *wh = p->w_h;
    int g, r;
    for (g = 0; g < 4; g++) {
        for (r = 0; r < H; r++, wx += I, wh += H) {
            int32_t vx = tw_lstm16_rescale(dot16(wx, x, I) + p->b_x[g * H + r], p->in_mult[g], p->in_shift[g]);
            int32_t vh = tw_lstm16_rescale(dot16(wh, h, H), p->rec_mult[g], p->rec_shift[g]);
            gate[g * H + r] = (int16_t)sat16(vx + vh);
        }
    }
}

int16_t tw_lstm16_cell(const tw_lstm16_t *p, int16_t gi, int16_t gf, int16_t gg, int16_t go, int16_t *c)
{
    int16_t i = tw_lstm16_sigmoid(gi), f = tw_lstm16_sigmoid(gf), g = tw_lstm16_tanh(gg, -12);
    int16_t o = tw_lstm16_sigmoid(go);
    int32_t v = sat16(tw_mbqm((int32_t)f * *c, p->cell_mul[0], p->cell_mul[1]))
              + sat16(tw_mbqm((int32_t)i * g, p->cell_mul[2], p->cell_mul[3]));
    v = sat16(v);
    if (p->cell_clip > 0) v = v > p->cell_clip ? p->cell_clip : v < -p->cell_clip ? -p->cell_clip : v;
    *c = (int16_t)v;
    v = tw_mbqm((int32_t)tw_lstm16_tanh((int16_t)v, p->cell_scale) * o, p->hidden_mult, p->hidden_shift);
    return (int16_t)sat16(v + p->hidden_zp);
}

void tw_lstm16_update(const tw_lstm16_t *p, const int16_t *gate, int16_t *c, int16_t *h)
{
    const int H = p->n_cell;
    int k;
    for (k = 0; k < H; k++)
        h[k] = tw_lstm16_cell(p, gate[k], gate[H + k], gate[2 * H + k], gate[3 * H + k], &c[k]);
}
