/* Host (native) platform: stdin/stdout carry the input and output bytes,
   messages go to stderr. The model runs on a thread whose stack is a
   painted static buffer, so the stack high-water mark is measured the same
   way as on the boards: from the thread's entry frame down to the deepest
   overwritten word (glibc keeps the thread descriptor and TLS at the top of a
   user-supplied stack, which is not the model's use). Per-operator wall time comes from clock_gettime. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bt_platform.h"
#include "model.h"

#define BT_HOST_STACK (1u << 20)
#define STACK_PAINT 0xDEADBEEFu

static uint32_t host_stack[BT_HOST_STACK / 4] __attribute__((aligned(64)));
static uint64_t op_ns[MODEL_NUM_OPS > 0 ? MODEL_NUM_OPS : 1];
static struct timespec op_t0;
static int main_rc;
static uintptr_t entry_sp;

/* Raw read/write system calls: stdio would add kilobytes of its own stack to the measurement. */
static int xfer(int fd, char *buf, size_t n, int out) {
  while (n > 0) {
    ssize_t k = out ? write(fd, buf, n) : read(fd, buf, n);
    if (k <= 0) return -1;
    buf += k;
    n -= (size_t)k;
  }
  return 0;
}

void bt_puts(const char *s) { xfer(2, (char *)s, strlen(s), 1); }

int bt_read_input(void *buf, size_t n) {
  if (n == 0) return 0;
  ssize_t k = read(0, buf, n);
  if (k == 0) return BT_INPUT_END;
  if (k < 0) return -1;
  return xfer(0, (char *)buf + k, n - (size_t)k, 0);
}
/* Streamed input: stdin read whole once into a buffer outside the arena (the host has no RAM limit). */
int bt_read_input_rows(uint32_t offset, uint32_t n, uint32_t rows, uint32_t in_stride, void *dst,
                       uint32_t dst_stride) {
  static char *image;
  static size_t len;
  if (!image) {
    size_t cap = 1 << 16;
    ssize_t k;
    if (!(image = malloc(cap))) return -1;
    while ((k = read(0, image + len, cap - len)) > 0)
      if ((len += (size_t)k) == cap && !(image = realloc(image, cap *= 2))) return -1;
  }
  if (rows && ((size_t)offset + (size_t)(rows - 1) * in_stride + n > len)) return -1;
  for (uint32_t y = 0; y < rows; y++) memcpy((char *)dst + (size_t)y * dst_stride, image + offset + (size_t)y * in_stride, n);
  return 0;
}
int bt_write_output(const void *buf, size_t n) { return xfer(1, (char *)buf, n, 1); }

void bt_profile_begin(int op) {
  (void)op;
  clock_gettime(CLOCK_MONOTONIC, &op_t0);
}
void bt_profile_end(int op) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (op >= 0 && op < MODEL_NUM_OPS)
    op_ns[op] += (uint64_t)(t1.tv_sec - op_t0.tv_sec) * 1000000000u + (uint64_t)(t1.tv_nsec - op_t0.tv_nsec);
}

static void *run(void *arg) {
  (void)arg;
  entry_sp = (uintptr_t)__builtin_frame_address(0);
  main_rc = bt_main();
  return NULL;
}

static uint32_t stack_high_water(void) {
  uint32_t *p = host_stack, *end = host_stack + BT_HOST_STACK / 4;
  while (p < end && *p == STACK_PAINT) p++;
  return (uint32_t)(entry_sp - (uintptr_t)p);
}

int main(void) {
  for (size_t i = 0; i < BT_HOST_STACK / 4; i++) host_stack[i] = STACK_PAINT;
  pthread_attr_t attr;
  pthread_t th;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, host_stack, sizeof host_stack);
  if (pthread_create(&th, &attr, run, NULL) != 0) {
    fputs("bt: cannot start the model thread\n", stderr);
    return 1;
  }
  pthread_join(th, NULL);
  fprintf(stderr, "stack_high_water_bytes=%u\n", (unsigned)stack_high_water());
  fputs("op_ns=", stderr);
  for (int i = 0; i < MODEL_NUM_OPS; i++) fprintf(stderr, "%s%llu", i ? "," : "", (unsigned long long)op_ns[i]);
  fputs("\n", stderr);
  return main_rc;
}
