/*
 * crt0.S — start-up of a tilewise firmware on pulp-open (GVSoC; ../shared/tools/gvsoc README).
 *
 * GVSoC loads the ELF and starts the fabric controller (FC, mhartid cluster 31) at _start; the
 * cluster cores are idle. The FC sets its stack in L2, installs the trap handler, zeroes .bss
 * (L2) and the L1 sections (NOLOAD), enables the cluster instruction cache, points the boot
 * address of cluster cores 0-7 at _start and starts them, then sleeps. Each cluster core sets its
 * stack in L1 (TW_FW_STACK bytes each, top-down from __l1_stacks_end), installs the trap handler
 * and enters tw_fw_cluster_main (tw_fw.c): core 0 runs the program, the others wait for forks.
 */
    .section .text.start
    .globl _start
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    csrr    t0, mhartid
    srli    t1, t0, 5               /* cluster */
    andi    t0, t0, 0x1f            /* core */
    la      t2, tw_fw_trap
    csrw    mtvec, t2
    li      t3, 31
    beq     t1, t3, fc_start

cluster_start:
    la      sp, __l1_stacks_end
    li      t2, TW_FW_STACK
    mul     t2, t2, t0
    sub     sp, sp, t2
    mv      a0, t0
    call    tw_fw_cluster_main
1:  j       1b

fc_start:
    la      sp, __fc_stack_end
    la      a0, __bss_start
    la      a1, __bss_end
    call    zero_words
    la      a0, __l1_zero_start
    la      a1, __l1_zero_end
    call    zero_words
    li      t2, 0x10201400          /* cluster instruction cache: enable */
    li      t3, -1
    sw      t3, 0(t2)
    li      t2, 0x10200040          /* boot address of cluster cores 0..7 */
    la      t3, _start
    li      t4, 8
2:  sw      t3, 0(t2)
    addi    t2, t2, 4
    addi    t4, t4, -1
    bnez    t4, 2b
    li      t2, 0x10200008          /* fetch enable: cores 0..7 */
    li      t3, 0xff
    sw      t3, 0(t2)
3:  wfi
    j       3b

/* zero the words in [a0, a1) */
zero_words:
    bgeu    a0, a1, 5f
4:  sw      zero, 0(a0)
    addi    a0, a0, 4
    bltu    a0, a1, 4b
5:  ret
