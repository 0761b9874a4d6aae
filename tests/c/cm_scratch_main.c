/*
 * Firmware program of tests/test_qemu.py's scratch test: the scratch bytes the pulp conv and
 * depthwise kernels take when built for the Cortex-M7 (their Arm paths), one core, for each window
 * of windows.h (generated: in_h, in_w, out_h, out_w, k_h, k_w, s_h, s_w, in_c). A line per window:
 *     TW_SCRATCH <conv2d scratch> <depthwise scratch>
 * then TW_DONE.
 */
#include <stdint.h>

#include "tw_fw.h"
#include "tw_pulp.h"
#include "windows.h"

int tw_fw_main(void)
{
    int i;
    for (i = 0; i < N_WINDOWS; i++) {
        const int *g = g_windows[i];
        tw_window_t w = {g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], 1, 1, 0, 0, 0, 0};
        tw_fw_puts("TW_SCRATCH ");
        tw_fw_put_uint((uint32_t)tw_pulp_conv2d_s8_scratch(&w, g[8], 1));
        tw_fw_puts(" ");
        tw_fw_put_uint((uint32_t)tw_pulp_depthwise_s8_scratch(&w, 1));
        tw_fw_puts("\n");
    }
    tw_fw_puts("TW_DONE\n");
    return 0;
}
