/* Freestanding RV32 start-up: gp/sp, stack painting, trap vector, then C.
   Adapted from the shared toolchain kit. */
  .option arch, +zicsr      /* csr instructions while keeping -march=rv32imac (multilib) */
  .file "start.S" /* not the compiler's temporary object name: the same inputs, the same image */
  .section .text.init,"ax",@progbits
  .globl _start
_start:
#ifdef BT_JUMP_TO_LINK_ADDRESS
  /* A part that boots from an alias of its flash (GD32VF103: flash at 0x08000000 is mapped at 0
     when BOOT0 is low, and the core starts there) continues at the address it was linked for; la
     would be pc-relative, so the address is built absolutely. */
  lui t0, %hi(1f)
  addi t0, t0, %lo(1f)
  jr t0
1:
#endif
  .option push
  .option norelax
  la gp, __global_pointer$
  .option pop
  la t0, __stack_bottom
  la t1, __stack_top
  li t2, 0xDEADBEEF
1:bgeu t0, t1, 2f
  sw t2, 0(t0)
  addi t0, t0, 4
  j 1b
2:la sp, __stack_top
  la t0, trap_entry
  csrw mtvec, t0
#ifdef BT_RVV
  li t0, (1 << 9)           /* mstatus.VS = Initial: the vector unit is usable */
  csrs mstatus, t0
#endif
  call reset_c
3:j 3b

  .balign 4
  .globl trap_entry
trap_entry:            /* any exception: fresh stack, report, exit(97) */
  la sp, __stack_top
  csrr a0, mcause
  csrr a1, mepc
  csrr a2, mtval
  call trap_c
4:j 4b

  /* semihosting: a0=op, a1=arg -> a0. The 3-instruction sequence must be
     uncompressed and inside one page: align with RVC still enabled. */
  .text
  .balign 16
  .globl sh_call
sh_call:
  .option push
  .option norvc
  slli x0, x0, 0x1f
  ebreak
  srai x0, x0, 7
  .option pop
  ret
