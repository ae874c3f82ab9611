/* bt_copy.h -- byte copies without libc: the boards link no memcpy, and GCC's loop distribution
 * would turn a copy loop into a call to one (hence no-tree-loop-distribute-patterns). may_alias:
 * words read and written over bytes and structs. */
#ifndef BT_COPY_H
#define BT_COPY_H
#include <stdint.h>

typedef uint32_t __attribute__((may_alias)) bt_word;

/* n bytes from src to dst, forward (dst below src when they overlap: a ring shifts), word by word
 * when both addresses and n are word aligned. */
__attribute__((optimize("no-tree-loop-distribute-patterns"), unused))
static void bt_copy_bytes(int8_t *dst, const int8_t *src, int32_t n) {
  if ((((uintptr_t)dst | (uintptr_t)src | (uintptr_t)n) & 3) == 0) {
    bt_word *d = (bt_word *)dst;
    const bt_word *s = (const bt_word *)src;
    for (int32_t i = 0; i < n / 4; i++) d[i] = s[i];
    return;
  }
  for (int32_t i = 0; i < n; i++) dst[i] = src[i];
}
#endif
