/* Console for real parts: bt_puts writes into a SEGGER RTT up-buffer that any debug probe (J-Link,
   probe-rs, pyOCD, OpenOCD) reads from RAM while the core runs; no UART, pins or clocks involved.

   Written from the public description of the RTT control block, not from SEGGER's code: a block
   named _SEGGER_RTT holding a 16-byte id "SEGGER RTT" (NUL-padded), the number of up and of down
   buffers (int32 each), then the buffer descriptors, up first, 24 bytes each on a 32-bit core:
   name pointer, buffer pointer, size, write offset, read offset, flags. The target writes an
   up-buffer's data and then its write offset; the host reads from the read offset to the write
   offset and then moves the read offset (one byte always stays free, so equal offsets mean empty).
   The low two bits of flags say what the target does when the buffer is full: 0 skip the whole
   message, 1 write what fits, 2 wait for the host (this writer honours all three; a host may switch
   the mode at run time).

   The harness's model input and output stay on semihosting files (input.bin / output.bin), so the
   tests feed the same image any input: semihost_io.c is included below with its console renamed.
   An application of your own brings its own input (a sensor, a buffer) and needs no semihosting.

   The harness ends through bt_exit (startup code): the code is reported on the RTT console as
   "bt_exit=N" and the core waits in a loop, where a probe (or the emulator's reader) finds it. */
#include <stdint.h>
#include "bt_platform.h"

#define bt_puts bt_semihost_puts /* semihosting's console, unused here: RTT below is the console */
#include "semihost_io.c"
#undef bt_puts

#ifndef BT_RTT_UP_BYTES
#define BT_RTT_UP_BYTES 1024
#endif
#define BT_RTT_DOWN_BYTES 16

typedef struct {
  const char *name;
  char *buf;
  uint32_t size;
  volatile uint32_t wr;
  volatile uint32_t rd;
  volatile uint32_t flags;
} bt_rtt_ring;

typedef struct {
  volatile char id[16];
  int32_t up_count;
  int32_t down_count;
  bt_rtt_ring up[1];
  bt_rtt_ring down[1];
} bt_rtt_block;

/* In .bss: all zero (no id) until the first bt_puts sets it up. */
__attribute__((used, aligned(4))) bt_rtt_block _SEGGER_RTT;
static char rtt_up[BT_RTT_UP_BYTES];
static char rtt_down[BT_RTT_DOWN_BYTES];

static void rtt_ring_setup(bt_rtt_ring *r, char *buf, uint32_t size) {
  r->name = "Terminal";
  r->buf = buf;
  r->size = size;
  r->wr = 0;
  r->rd = 0;
  r->flags = 0;
}

static void rtt_setup(void) {
  bt_rtt_block *b = &_SEGGER_RTT;
  b->up_count = 1;
  b->down_count = 1;
  rtt_ring_setup(&b->up[0], rtt_up, sizeof rtt_up);  /* field by field: a struct copy compiled for size (the
                                                       harness's -Os, semihost_io.c) is a memcpy call, no libc here */
  rtt_ring_setup(&b->down[0], rtt_down, sizeof rtt_down);
  __sync_synchronize();
  /* The id last, front to back: a host scanning RAM matches it only once the block is complete. It is
     put together from two halves so that the flash image holds no copy a scanner could mistake. */
  static const char first[] = "SEGGER", second[] = " RTT";
  int k = 0;
  for (const char *p = first; *p; p++) b->id[k++] = *p;
  for (const char *p = second; *p; p++) b->id[k++] = *p;
  __sync_synchronize();
}

void bt_puts(const char *s) {
  if (_SEGGER_RTT.id[0] != 'S') rtt_setup();
  bt_rtt_ring *u = &_SEGGER_RTT.up[0];
  uint32_t n = 0;
  while (s[n]) n++;
  const uint32_t mode = u->flags & 3u;
  for (;;) {
    const uint32_t wr = u->wr, rd = u->rd;
    const uint32_t room = rd > wr ? rd - wr - 1u : u->size - 1u - wr + rd;
    if (mode == 0u && n > room) return; /* skip: the whole message or nothing */
    uint32_t k = n < room ? n : room;
    uint32_t w = wr;
    for (uint32_t i = 0; i < k; i++) {
      u->buf[w] = *s++;
      w = w + 1u == u->size ? 0u : w + 1u;
    }
    __sync_synchronize(); /* the data before the offset that publishes it */
    u->wr = w;
    n -= k;
    if (n == 0u || mode != 2u) return; /* trim drops the rest; block waits for the host */
  }
}

/* Stop here after reporting the exit code: no semihosting exit, which would end a debug session (and an
   emulator) before the host has read the buffer. */
__attribute__((noreturn)) void bt_exit(int code) {
  bt_puts("bt_exit=");
  bt_putu((uint32_t)code);
  bt_puts("\n");
  for (;;) {
#if defined(__arm__) || defined(__riscv)
    __asm__ volatile("wfi");
#endif
  }
}
