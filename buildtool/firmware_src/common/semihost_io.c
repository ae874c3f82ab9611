/* Input/output through semihosting files (SYS_OPEN/SYS_READ/SYS_WRITE), so
   one firmware image runs any input: the host puts input.bin in the
   emulator's working directory and reads output.bin back. */
#include <stdint.h>
#include "bt_platform.h"
BT_HARNESS_FOR_SIZE

int sh_call(int op, void *arg); /* platform: bkpt 0xAB (Arm) or the RISC-V ebreak sequence */

#define SYS_OPEN 0x01
#define SYS_CLOSE 0x02
#define SYS_WRITE0 0x04
#define SYS_WRITE 0x05
#define SYS_READ 0x06
#define SYS_SEEK 0x0A
#define MODE_RB 1
#define MODE_WB 5

static int output_handle = -1;

void bt_puts(const char *s) { sh_call(SYS_WRITE0, (void *)s); }

static int sh_open(const char *name, int mode) {
  uint32_t len = 0;
  while (name[len]) len++;
  uintptr_t blk[3] = {(uintptr_t)name, (uintptr_t)mode, len};
  return sh_call(SYS_OPEN, blk);
}

int bt_read_input(void *buf, size_t n) {
  static int h = -1;
  if (h < 0) h = sh_open("input.bin", MODE_RB);
  if (h < 0) return -1;
  uintptr_t blk[3] = {(uintptr_t)h, (uintptr_t)buf, (uintptr_t)n};
  const int left = sh_call(SYS_READ, blk); /* returns the bytes NOT read */
  return left == 0 ? 0 : (n > 0 && (size_t)left == n) ? BT_INPUT_END : -1;
}

/* Streamed input: its own handle on input.bin, one seek + read per row (weak: the kernel test
   serves its input from memory). */
__attribute__((weak)) int bt_read_input_rows(uint32_t offset, uint32_t n, uint32_t rows, uint32_t in_stride,
                                             void *dst, uint32_t dst_stride) {
  static int h = -1;
  if (h < 0) h = sh_open("input.bin", MODE_RB);
  if (h < 0) return -1;
  int bad = 0;
  for (uint32_t y = 0; y < rows; y++) {
    uintptr_t sk[2] = {(uintptr_t)h, (uintptr_t)(offset + y * in_stride)};
    uintptr_t rd[3] = {(uintptr_t)h, (uintptr_t)((char *)dst + y * dst_stride), (uintptr_t)n};
    bad |= sh_call(SYS_SEEK, sk) | sh_call(SYS_READ, rd);
  }
  return bad ? -1 : 0;
}

int bt_write_output(const void *buf, size_t n) {
  if (output_handle < 0) output_handle = sh_open("output.bin", MODE_WB);
  if (output_handle < 0) return -1;
  uintptr_t blk[3] = {(uintptr_t)output_handle, (uintptr_t)buf, (uintptr_t)n};
  return sh_call(SYS_WRITE, blk) == 0 ? 0 : -1;
}
