/* What the firmware harness needs from a board: console output, input/output
   transfer and a stack measurement. Implemented once per platform
   (arm/, riscv/ share semihost_io.c; host/ uses stdio). */
#ifndef BT_PLATFORM_H
#define BT_PLATFORM_H
#include <stddef.h>
#include <stdint.h>

void bt_puts(const char *s);
/* The harness's files (start-up, bt_main, semihosting I/O) compiled for size, each after its includes: run once or
   on a fault, outside every profile region; no loop turned into a memcpy/memset call (no libc). */
#if defined(__GNUC__) && !defined(__clang__)
#define BT_HARNESS_FOR_SIZE _Pragma("GCC optimize(\"Os\", \"no-tree-loop-distribute-patterns\")")
#else
#define BT_HARNESS_FOR_SIZE
#endif
/* v in decimal, through bt_puts (every platform's, so defined once here). Weak, not static: every file of the
   harness including this emits the same definition and the link keeps one (a static copy per caller was 68 B
   twice on cortex-m4). */
void bt_putu(uint32_t v);
__attribute__((weak)) void bt_putu(uint32_t v) {
  char b[12];
  int i = 11;
  b[i] = 0;
  do { b[--i] = (char)('0' + v % 10); v /= 10; } while (v);
  bt_puts(&b[i]);
}
/* Read exactly n bytes of model input; 0 on success, BT_INPUT_END when the input had ended
   (no byte read), another non-zero value on a short read or error. */
int bt_read_input(void *buf, size_t n);
/* Read `rows` runs of n bytes of the (single, streamed) model input, the first at byte `offset`,
   in_stride bytes apart, into dst, dst_stride bytes apart; in any order and as often as needed
   (the fused runtime pulls rows of a streamed input); 0 on success. */
int bt_read_input_rows(uint32_t offset, uint32_t n, uint32_t rows, uint32_t in_stride, void *dst,
                       uint32_t dst_stride);
/* Write n bytes of model output; 0 on success. */
int bt_write_output(const void *buf, size_t n);
/* The harness body, called by the platform start-up code; returns the exit code. */
int bt_main(void);

/* Exit codes shared by every board (see docs/firmware.md). */
#define BT_EXIT_OK 0
#define BT_EXIT_IO 2
#define BT_EXIT_IMAGE 3
#define BT_EXIT_INVOKE 4
#define BT_INPUT_END 1
#endif
