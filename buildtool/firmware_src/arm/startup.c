/* Cortex-M start-up: vector table, stack painting, .data/.bss set-up, VTOR,
   FPU enable, stack guard (MPU on v7-M, MSPLIM on v8-M), fault reporting and
   exit (semihosting, or a console's own bt_exit). Adapted from the shared
   toolchain kit. No libc, no vendor HAL: clocks, caches and flash wait states
   stay as the part leaves them at reset (its internal RC oscillator), which
   every part here runs code from flash at. */
#include <stdint.h>
#include "bt_platform.h"
BT_HARNESS_FOR_SIZE

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern uint32_t __stack_bottom, __stack_top;

#define STACK_PAINT 0xDEADBEEFu

int sh_call(int op, void *arg) {
  register int r0 __asm__("r0") = op;
  register void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

__attribute__((noreturn)) static void sh_exit(int code) {
  /* SYS_EXIT_EXTENDED: {ADP_Stopped_ApplicationExit, code}; qemu exits with code */
  uint32_t blk[2] = {0x20026u, (uint32_t)code};
  sh_call(0x20, blk);
  sh_call(0x18, (void *)(uintptr_t)(code == 0 ? 0x20026u : 0x20023u));
  for (;;) {}
}

/* How the harness ends. Semihosting exit by default (QEMU exits with the code); a console with no
   host call behind it (common/rtt_io.c) defines its own: report the code, then wait in a loop. */
__attribute__((weak, noreturn)) void bt_exit(int code) { sh_exit(code); }

extern const void *const bt_vectors[];

static uint32_t stack_high_water(void) {
  uint32_t *p = &__stack_bottom;
  while (p < &__stack_top && *p == STACK_PAINT) p++;
  return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)p);
}

static void mpu_off(void) {
  *(volatile uint32_t *)0xE000ED94 = 0;
  __asm__ volatile("dsb; isb");
}

static void stack_guard_enable(void) {
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8M_BASE__) || defined(__ARM_ARCH_8_1M_MAIN__)
  __asm__ volatile("msr msplim, %0" ::"r"(&__stack_bottom));
#elif defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_7M__)
  /* PMSAv7: 32-byte no-access region at the bottom of the stack */
  *(volatile uint32_t *)0xE000ED98 = 0;                                      /* RNR */
  *(volatile uint32_t *)0xE000ED9C = (uint32_t)(uintptr_t)&__stack_bottom & ~31u; /* RBAR */
  *(volatile uint32_t *)0xE000EDA0 = (1u << 28) | (4u << 1) | 1u;           /* RASR: XN, no access, 32 B */
  *(volatile uint32_t *)0xE000ED94 = (1u << 2) | 1u;                        /* CTRL: PRIVDEFENA | ENABLE */
  __asm__ volatile("dsb; isb");
#endif
}

__attribute__((noreturn, used)) void reset_c(void) {
  uint32_t *s = &__data_load, *d = &__data_start;
  while (d < &__data_end) *d++ = *s++;
  for (d = &__bss_start; d < &__bss_end; d++) *d = 0;
#if !defined(__ARM_ARCH_6M__)
  /* VTOR: exceptions use this image's table wherever it was linked (an STM32 boots from an alias of
     its flash at 0; a bootloader may have pointed VTOR elsewhere). */
  *(volatile uint32_t *)0xE000ED08 = (uint32_t)(uintptr_t)bt_vectors;
  __asm__ volatile("dsb; isb");
#endif
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  /* CP10/CP11 full access: the FPU and, on Armv8.1-M (Cortex-M55/M85), the Helium (MVE) unit, whose
     vector registers are the FPU's; until then any MVE instruction is a NOCP UsageFault */
  *(volatile uint32_t *)0xE000ED88 |= (0xFu << 20);
  __asm__ volatile("dsb; isb");
#endif
  stack_guard_enable();
  int rc = bt_main();
  mpu_off(); /* the guard covers the painted area we scan */
  bt_puts("stack_high_water_bytes=");
  bt_putu(stack_high_water());
  bt_puts("\nstatic_ram_bytes=");
  bt_putu((uint32_t)((uintptr_t)&__bss_end - (uintptr_t)&__data_start));
  bt_puts("\n");
  bt_exit(rc);
}

/* Paint the stack before any C frame exists, then enter C on a fresh stack. */
__attribute__((noreturn, naked)) void Reset_Handler(void) {
  __asm__ volatile(
      "ldr r0, =__stack_bottom\n"
      "ldr r1, =__stack_top\n"
      "ldr r2, =0xDEADBEEF\n"
      "1: cmp r0, r1\n"
      "bhs 2f\n"
      "str r2, [r0]\n"
      "add r0, #4\n" /* (no post-indexed store on ARMv6-M; inline asm is in divided syntax) */
      "b 1b\n"
      "2: ldr r0, =__stack_top\n"
      "msr msp, r0\n"
      "b reset_c\n");
}

void Default_Handler(void) {
  mpu_off();
  bt_puts("FAULT: unexpected exception\n");
  bt_exit(99);
}

__attribute__((noreturn, used)) void hardfault_c(uint32_t cfsr, uint32_t hfsr) {
  mpu_off();
  bt_puts("HardFault CFSR=");
  bt_putu(cfsr);
  bt_puts(" HFSR=");
  bt_putu(hfsr);
  bt_puts("\n");
  bt_exit(98);
}

/* Fresh stack first: the fault may be a stack overflow. */
__attribute__((naked)) void HardFault_Handler(void) {
  __asm__ volatile(
      "ldr r0, =__stack_top\n msr msp, r0\n"
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
      "movs r0, #0\n msr msplim, r0\n"
#endif
      "ldr r0, =0xE000ED28\n ldr r0, [r0]\n"
      "ldr r1, =0xE000ED2C\n ldr r1, [r1]\n"
      "b hardfault_c\n");
}

/* The 16 system exceptions only: the harness enables no interrupt, so no IRQ vector is ever read (VTOR's
   alignment is the table's address, flash's start, not its length). */
__attribute__((section(".isr_vector"), used)) const void *const bt_vectors[16] = {
    &__stack_top,    Reset_Handler,   Default_Handler, HardFault_Handler, Default_Handler, Default_Handler,
    Default_Handler, 0,               0,               0,                 0,               Default_Handler,
    Default_Handler, 0,               Default_Handler, Default_Handler,
};
