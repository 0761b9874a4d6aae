/*
 * app.cpp — a C++ application of a generated tilewise network (tests/test_c_api_cpp.py).
 *
 *   app N CODES_IN CODES_OUT REAL_0 [REAL_1 …]
 *
 * REAL_k: N samples of input k as float32, in the layout tw_network_run takes it. The application
 * reads the network from tw_network_info(), quantizes every sample of every input with that
 * input's scale and zero point (round half to even, clamped to its type), runs tw_network_run on
 * buffers of each tensor's own C type (TW_INPUT_TYPE …: no casts), appends the codes it fed to
 * CODES_IN and those it got to CODES_OUT (per sample, every tensor back to back, in
 * tw_network_run's order), and prints the description as JSON on stdout.
 * Networks with one input and one output, or two inputs and four outputs, without L3.
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "network.h"

#if TW_NETWORK_L3_BYTES != 0
#error "the test application runs networks without an L3 image"
#endif

namespace {

alignas(4) int8_t g_l1[TW_NETWORK_L1_BYTES + 4];
alignas(4) int8_t g_l2[TW_NETWORK_L2_BYTES + 4];

/* q = clamp(rint(x / scale) + zero_point) in the tensor's type, stored at dst */
void quantize(const tw_io_info_t &t, const float *x, void *dst)
{
    const long long lo = t.is_signed ? -(1LL << (t.bits - 1)) : 0;
    const long long hi = t.is_signed ? (1LL << (t.bits - 1)) - 1 : (1LL << t.bits) - 1;
    for (uint32_t i = 0; i < t.elements; i++) {
        const float r = std::nearbyint(x[i] / t.scale);   /* float32 division, half to even */
        long long q = static_cast<long long>(r) + t.zero_point;
        q = q < lo ? lo : q > hi ? hi : q;
        switch (t.bits) {
        case 8: static_cast<uint8_t *>(dst)[i] = static_cast<uint8_t>(q & 0xff); break;
        case 16: static_cast<uint16_t *>(dst)[i] = static_cast<uint16_t>(q & 0xffff); break;
        case 32: static_cast<uint32_t *>(dst)[i] = static_cast<uint32_t>(q & 0xffffffffLL); break;
        default: std::fprintf(stderr, "app: %u-bit tensors are not handled\n", t.bits); std::exit(3);
        }
    }
}

void print_tensors(const tw_io_info_t *ts, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        const tw_io_info_t &t = ts[k];
        std::printf("%s{\"name\": \"%s\", \"dtype\": \"%s\", \"c_type\": \"%s\", \"bits\": %u, "
                    "\"is_signed\": %s, \"bytes\": %u, \"elements\": %u, \"layout\": \"%s\", "
                    "\"quantized\": %s, \"scale\": %.9g, \"zero_point\": %d, \"dims\": [",
                    k ? ", " : "", t.name, t.dtype, t.c_type, t.bits, t.is_signed ? "true" : "false",
                    t.bytes, t.elements, t.layout, t.quantized ? "true" : "false",
                    static_cast<double>(t.scale), static_cast<int>(t.zero_point));
        for (uint32_t d = 0; d < t.rank; d++)
            std::printf("%s%u", d ? ", " : "", t.dims[d]);
        std::printf("]}");
    }
}

}  // namespace

int main(int argc, char **argv)
{
    const tw_network_info_t *info = tw_network_info();
    if (argc != 4 + static_cast<int>(info->inputs)) {
        std::fprintf(stderr, "usage: app N CODES_IN CODES_OUT REAL_0 … (%u inputs)\n", info->inputs);
        return 2;
    }
    const long n = std::strtol(argv[1], nullptr, 10);
    std::FILE *codes_in = std::fopen(argv[2], "wb");
    std::FILE *codes_out = std::fopen(argv[3], "wb");
    std::vector<std::FILE *> reals;
    for (uint32_t k = 0; k < info->inputs; k++)
        reals.push_back(std::fopen(argv[4 + k], "rb"));

    /* every tensor in its own C type, as network.h states it */
#if TW_NETWORK_INPUTS == 1 && TW_NETWORK_OUTPUTS == 1
    std::vector<TW_INPUT_TYPE> in0(TW_INPUT_BYTES / sizeof(TW_INPUT_TYPE));
    std::vector<TW_OUTPUT_TYPE> out0(TW_OUTPUT_BYTES / sizeof(TW_OUTPUT_TYPE));
    void *ins[] = { in0.data() };
    const void *outs[] = { out0.data() };
#elif TW_NETWORK_INPUTS == 2 && TW_NETWORK_OUTPUTS == 4
    std::vector<TW_INPUT0_TYPE> in0(TW_INPUT0_BYTES / sizeof(TW_INPUT0_TYPE));
    std::vector<TW_INPUT1_TYPE> in1(TW_INPUT1_BYTES / sizeof(TW_INPUT1_TYPE));
    std::vector<TW_OUTPUT0_TYPE> out0(TW_OUTPUT0_BYTES / sizeof(TW_OUTPUT0_TYPE));
    std::vector<TW_OUTPUT1_TYPE> out1(TW_OUTPUT1_BYTES / sizeof(TW_OUTPUT1_TYPE));
    std::vector<TW_OUTPUT2_TYPE> out2(TW_OUTPUT2_BYTES / sizeof(TW_OUTPUT2_TYPE));
    std::vector<TW_OUTPUT3_TYPE> out3(TW_OUTPUT3_BYTES / sizeof(TW_OUTPUT3_TYPE));
    void *ins[] = { in0.data(), in1.data() };
    const void *outs[] = { out0.data(), out1.data(), out2.data(), out3.data() };
#else
#error "the test application runs networks of 1 input and 1 output, or 2 inputs and 4 outputs"
#endif

    for (long s = 0; s < n; s++) {
        for (uint32_t k = 0; k < info->inputs; k++) {
            const tw_io_info_t &t = info->input[k];
            std::vector<float> x(t.elements);
            if (std::fread(x.data(), sizeof(float), t.elements, reals[k]) != t.elements) {
                std::fprintf(stderr, "app: %s: short read\n", argv[4 + k]);
                return 2;
            }
            quantize(t, x.data(), ins[k]);
            std::fwrite(ins[k], 1, t.bytes, codes_in);
        }
#if TW_NETWORK_INPUTS == 1
        const int rc = tw_network_run(in0.data(), out0.data(), g_l1, g_l2);
#else
        const int rc = tw_network_run(in0.data(), in1.data(), out0.data(), out1.data(), out2.data(),
                                      out3.data(), g_l1, g_l2);
#endif
        if (rc != 0)
            return 1;
        for (uint32_t k = 0; k < info->outputs; k++)
            std::fwrite(outs[k], 1, info->output[k].bytes, codes_out);
    }
    std::fclose(codes_in);
    std::fclose(codes_out);
    for (std::FILE *f : reals)
        std::fclose(f);

    std::printf("{\"name\": \"%s\", \"target\": \"%s\", \"inputs\": %u, \"outputs\": %u, "
                "\"l1_bytes\": %u, \"l2_bytes\": %u, \"l3_bytes\": %u, \"l2_image_bytes\": %u, "
                "\"flash_bytes\": %u, \"layers\": %u, \"input\": [",
                info->name, info->target, info->inputs, info->outputs, info->l1_bytes,
                info->l2_bytes, info->l3_bytes, info->l2_image_bytes, info->flash_bytes,
                info->layers);
    print_tensors(info->input, info->inputs);
    std::printf("], \"output\": [");
    print_tensors(info->output, info->outputs);
    std::printf("]}\n");
    return 0;
}
