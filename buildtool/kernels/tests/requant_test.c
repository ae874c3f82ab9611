/* requant_test.c -- tests of reference/requant.h (bt_mbqm_fast, bt_rq2, bt_rq2s), riscv/rv_requant.h, host/host_block.h, against the reference set.
 * Part of kernel_test.c (one translation unit: it includes this file after kernel_test.h). */

/* the optimised sets' requantisation (bt_mbqm_fast) against the TFLM transcription (bt_mbqm) */
static void test_requant_helpers(void) {
  static const int32_t edge[] = {0, 1, -1, 2, -2, 127, -128, 255, -255, 1 << 20, -(1 << 20), (1 << 30) - 1, 1 << 30,
                                 -(1 << 30), INT32_MAX, INT32_MIN, INT32_MIN + 1, 12345678, -12345678};
  static const int32_t mults[] = {0, 1, 1 << 30, (1 << 30) + 1, INT32_MAX, INT32_MIN, -(1 << 30), 1518500250};
  int32_t bad = 0;
  for (uint32_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
    for (uint32_t j = 0; j < sizeof mults / sizeof mults[0]; j++)
      for (int32_t s = -31; s <= 0; s++)
        if (bt_mbqm(edge[i], mults[j], s) != bt_mbqm_fast(edge[i], mults[j], s)) bad++;
  for (int32_t t = 0; t < 20000; t++) {
    int32_t x = (int32_t)rnd() >> ri(0, 30), m = (int32_t)rnd(), s = ri(-31, 4);
    if (s > 0) x >>= s + 1;   /* TFLM's left shift must not overflow */
    if (bt_mbqm(x, m, s) != bt_mbqm_fast(x, m, s)) bad++;
  }
  if (bad) { failed++; bt_puts("FAIL bt_mbqm_fast mismatches: "); put_i(bad); bt_puts("\n"); }
  else passed++;
}

/* bt_rq2 and bt_rq2s (requant.h; the cortex-m and riscv sets) against bt_mbqm wherever bt_rq2_ok allows it (TFLite
 * multipliers, right shifts) */
static void test_rq2(void) {
  static const int32_t edge[] = {0, 1, -1, 2, -2, 3, -3, 127, -128, 1 << 20, -(1 << 20), (1 << 30) - 1, 1 << 30,
                                 -(1 << 30), INT32_MAX, INT32_MIN, INT32_MIN + 1, INT32_MAX - 1, 12345678, -12345678};
  static const int32_t mults[] = {0, 1 << 30, (1 << 30) + 1, INT32_MAX, INT32_MAX - 1, 1518500250};
  int32_t bad = 0;
  for (uint32_t j = 0; j < sizeof mults / sizeof mults[0]; j++)
    for (int32_t s = -31; s <= -2; s++) {
      if (!bt_rq2_ok(&mults[j], &s, 1)) bad++;
      for (uint32_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        if (bt_mbqm(edge[i], mults[j], s) != bt_rq2(edge[i], mults[j], bt_rq2_p2(s), bt_rq2_e1(s)) ||
            bt_mbqm(edge[i], mults[j], s) != bt_rq2s(edge[i], mults[j], -s - 2)) bad++;
    }
  for (int32_t t = 0; t < 20000; t++) {
    const int32_t x = (int32_t)rnd() >> ri(0, 30), m = (int32_t)(0x40000000u | (rnd() & 0x3fffffffu)), s = ri(-31, -2);
    const int32_t want = bt_mbqm(x, m, s);
    if (want != bt_rq2(x, m, bt_rq2_p2(s), bt_rq2_e1(s)) || want != bt_rq2s(x, m, -s - 2)) bad++;
  }
  const int32_t m_small = (1 << 30) - 1, m_neg = -(1 << 30), s_pos = -1, s_neg = -2, s_big = -32;
  if (bt_rq2_ok(&m_small, &s_neg, 1) || bt_rq2_ok(&m_neg, &s_neg, 1) || bt_rq2_ok(&mults[1], &s_pos, 1) ||
      bt_rq2_ok(&mults[1], &s_big, 1)) bad++;
  if (bad) { failed++; bt_puts("FAIL bt_rq2 mismatches: "); put_i(bad); bt_puts("\n"); }
  else passed++;
}

#if defined(__has_include)
#if __has_include("rv_requant.h")
#define BT_HAVE_RV_REQUANT 1
#include "rv_requant.h"
#endif
#endif
/* the riscv set's requantisation with precomputed per-channel parameters against bt_mbqm */
static void test_rv_requant(void) {
#ifdef BT_HAVE_RV_REQUANT
  static const int32_t edge[] = {0, 1, -1, 2, -2, 127, -128, 1 << 20, -(1 << 20), (1 << 30) - 1, 1 << 30,
                                 -(1 << 30), INT32_MAX, INT32_MIN, INT32_MIN + 1, 12345678, -12345678};
  static const int32_t mults[] = {0, 1, 1 << 30, (1 << 30) + 1, INT32_MAX, -(1 << 30), 1518500250};
  int32_t bad = 0;
  rv_rq q;
  for (uint32_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
    for (uint32_t j = 0; j < sizeof mults / sizeof mults[0]; j++)
      for (int32_t s = -31; s <= 0; s++) {
        rv_rq_init(&q, mults[j], s);
        if (bt_mbqm(edge[i], mults[j], s) != rv_mbqm(edge[i], &q)) bad++;
      }
  for (int32_t t = 0; t < 20000; t++) {
    int32_t x = (int32_t)rnd() >> ri(0, 30), m = (int32_t)rnd(), s = ri(-31, 4);
    if (m == INT32_MIN) m++;
    if (s > 0) x >>= s + 1;   /* TFLM's left shift must not overflow */
    rv_rq_init(&q, m, s);
    if (bt_mbqm(x, m, s) != rv_mbqm(x, &q)) bad++;
  }
  if (bad) { failed++; bt_puts("FAIL rv_mbqm mismatches: "); put_i(bad); bt_puts("\n"); }
  else passed++;
#endif
}
#if defined(__has_include)
#if __has_include("host_block.h")
#define BT_HAVE_HOST_BLOCK 1
#include "host_block.h"
#endif
#endif
/* the host set's folded requantisation (bt_hb_rq_one, zero point 0, no clamp) against bt_mbqm */
static void test_host_requant(void) {
#ifdef BT_HAVE_HOST_BLOCK
  static const int32_t edge[] = {0, 1, -1, 2, -2, 127, -128, 1 << 20, -(1 << 20), (1 << 30) - 1, 1 << 30,
                                 -(1 << 30), (1 << 30) + 1, -(1 << 30) - 1, INT32_MAX, INT32_MIN, INT32_MIN + 1,
                                 12345678, -12345678};
  static const int32_t mults[] = {0, 1, 1 << 30, (1 << 30) + 1, INT32_MAX, -(1 << 30), 1518500250, -1518500250};
  int32_t bad = 0;
  bt_hb_rq q;
  for (uint32_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
    for (uint32_t j = 0; j < sizeof mults / sizeof mults[0]; j++)
      for (int32_t s = -31; s <= 0; s++) {
        bt_hb_rq_init(&q, 1, &mults[j], &s, 0, INT32_MIN, INT32_MAX);
        if (bt_mbqm(edge[i], mults[j], s) != bt_hb_rq_one(&q, 0, edge[i])) bad++;
      }
  for (int32_t t = 0; t < 20000; t++) {
    int32_t x = (int32_t)rnd() >> ri(0, 30), m = (int32_t)rnd(), s = ri(-31, 4);
    if (m == INT32_MIN) m++;
    if (s > 0) x >>= s + 1;   /* TFLM's left shift must not overflow */
    bt_hb_rq_init(&q, 1, &m, &s, 0, INT32_MIN, INT32_MAX);
    if (bt_mbqm(x, m, s) != bt_hb_rq_one(&q, 0, x)) bad++;
  }
  if (bad) { failed++; bt_puts("FAIL host requantisation mismatches: "); put_i(bad); bt_puts("\n"); }
  else passed++;
#endif
}
