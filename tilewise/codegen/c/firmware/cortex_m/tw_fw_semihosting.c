/*
 * tw_fw_semihosting.c — output and exit by Arm semihosting (`bkpt 0xAB`, r0 = operation, r1 =
 * argument): SYS_WRITE0 (0x04) writes a string to the host, SYS_EXIT (0x18) ends the run —
 * ADP_Stopped_ApplicationExit for status 0, a run-time error otherwise (QEMU then exits 1).
 * QEMU's -semihosting and `validate --on qemu|count` use it; on a board only with a debugger
 * attached (`make firmware LINK=stm32h7 OUTPUT=semihosting`): without one, `bkpt` halts the core.
 */
#include "tw_fw.h"

#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define ADP_STOPPED_APPLICATION_EXIT 0x20026
#define ADP_STOPPED_RUNTIME_ERROR 0x20023

static int semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void tw_fw_puts(const char *s)
{
    semihost(SYS_WRITE0, s);
}

void tw_fw_exit(int status)
{
    semihost(SYS_EXIT, (const void *)(status == 0 ? ADP_STOPPED_APPLICATION_EXIT
                                                    : ADP_STOPPED_RUNTIME_ERROR));
    for (;;)
        ;
}
