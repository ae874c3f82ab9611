/* RV32 C start-up: .data/.bss set-up, trap report (exit 97), stack
   high-water report and the exit: semihosting by default, a console's own bt_exit when it has one
   (common/rtt_io.c: report the code over RTT and wait, as a real part without a debugger must). */
#include <stdint.h>
#include "bt_platform.h"
BT_HARNESS_FOR_SIZE

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_bottom, __stack_top;
int sh_call(int op, void *arg); /* start.S */

__attribute__((noreturn)) static void sh_exit(int code) {
  uint32_t blk[2] = {0x20026u, (uint32_t)code}; /* SYS_EXIT_EXTENDED */
  sh_call(0x20, blk);
  sh_call(0x18, (void *)(uintptr_t)(code == 0 ? 0x20026u : 0x20023u));
  for (;;) {}
}

/* How the harness ends (weak: a console with no semihosting brings its own). */
__attribute__((weak, noreturn)) void bt_exit(int code) { sh_exit(code); }

static void puthex(uint32_t v) {
  char b[11] = "0x";
  for (int i = 0; i < 8; i++) b[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 15];
  b[10] = 0;
  bt_puts(b);
}

static uint32_t stack_high_water(void) {
  uint32_t *p = &__stack_bottom;
  while (p < &__stack_top && *p == 0xDEADBEEFu) p++;
  return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)p);
}

__attribute__((noreturn, used)) void trap_c(uint32_t mcause, uint32_t mepc, uint32_t mtval) {
  bt_puts("TRAP mcause=");
  puthex(mcause);
  bt_puts(" mepc=");
  puthex(mepc);
  bt_puts(" mtval=");
  puthex(mtval);
  bt_puts("\n");
  bt_exit(97);
}

__attribute__((noreturn, used)) void reset_c(void) {
  uint32_t *s = &__data_load, *d = &__data_start;
  while (d < &__data_end) *d++ = *s++;
  for (d = &__bss_start; d < &__bss_end; d++) *d = 0;
  int rc = bt_main();
  bt_puts("stack_high_water_bytes=");
  bt_putu(stack_high_water());
  bt_puts("\nstatic_ram_bytes=");
  bt_putu((uint32_t)((uintptr_t)&__bss_end - (uintptr_t)&__data_start));
  bt_puts("\n");
  bt_exit(rc);
}
