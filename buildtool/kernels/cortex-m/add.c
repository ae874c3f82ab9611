/* ADD and SUB: the reference kernels, int8 from reference/add_dense.h (requantisations chosen once
 * per call, contiguous runs in one loop), the saturation to int8 one SSAT (dsp.h).
 *
 * A dense int8 ADD of at least ADD_TAB_MIN elements whose one input has TFLite's 0.5 multiplier (the
 * larger-scale input: 2^30, shift 0), left_shift 20, an output multiplier >= 0 and an output shift in
 * -31..-1 takes add_tab, four elements per pass (one word of each input, one word stored):
 *   - the other input's whole term, MultiplyByQuantizedMultiplierSmallerThanOneExp((b + off_b) << 20,
 *     m_b, s_b) (bt_mbqm_fast, the reference's value), is a table of its 256 byte values made once per
 *     call on the stack (1 KB), doubled and with the 0.5 input's offset term (off_a << 20) added: T[b];
 *   - the 0.5 input's term is exactly (a + off_a) << 19, so twice the sum is 2S = T[b] + (a << 20)
 *     (|S| < 2^30 checked once per call);
 *   - the output's SaturatingRoundingDoublingHighMul(S, m) = floor((S m + 2^30) / 2^31) is SMMULR(2S, m),
 *     and with RoundingDivideByPOT(h, e) = floor((h + 2^(e-1) - [h < 0]) / 2^e) the output offset folds
 *     into the constant C = 2^(e-1) + zp 2^e: SMMLAR(2S, m, C) = h + C; [h < 0] may be taken as [S < 0]
 *     (for m >= 0 they differ only where h = 0, which gives 0 either way, e >= 1), so the output is
 *     (SMMLAR(2S, m, C) - (2S >>> 31)) >> e, then SSAT (or the activation's bounds). |C| + |h| < 2^31 is
 *     checked once per call.
 * Per element: UBFX, LDR (table), SBFX, ADD, SMMLAR, SUB, ASR, SSAT, and the byte packed into the word;
 * eight elements a loop pass.
 * ResNet-8's 1x32x32x16 ADD on cortex-m4: 442.6 K -> see docs/kernels.md. Anything else: add_dense.h. */
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"
#define AD_SAT8(v) bt_ssat8(v)
#define BT_ADD_S8_DENSE
#define bt_add_s8 bt_dense_add_s8
#include "../reference/add_ref.h"
#undef bt_add_s8

void bt_add_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out);

#define ADD_TAB_MIN 256 /* elements: below this the table's 256 entries cost more than they save */

/* Elements one at a time, clamped to [lo, hi] (the act path, and the saturating asm loop's last 0..7). */
static __attribute__((noinline)) void add_tab_run(const int32_t *tab, const int8_t *a, const int8_t *b, int8_t *o,
                                                  int32_t n, int32_t mo, int32_t c, int32_t e, int32_t lo,
                                                  int32_t hi) {
  for (int32_t i = 0; i < n; i++) {
    const int32_t t = tab[(uint8_t)b[i]] + (int32_t)((uint32_t)(int32_t)a[i] << 20);
    o[i] = (int8_t)bt_clamp((bt_smmlar(t, mo, c) - (int32_t)((uint32_t)t >> 31)) >> e, lo, hi);
  }
}

/* One element of add_tab_sat's asm loop: byte K of the words wa, wb in, its output into byte K of wa. */
#define ADD_STEP(xb, xa, K)                           \
  xb "\n\t"                                            \
  "ldr %[t], [%[tab], %[t], lsl #2]\n\t"               \
  xa "\n\t"                                            \
  "add %[t], %[t], %[s], lsl #20\n\t"                  \
  "smmlar %[s], %[t], %[mo], %[c]\n\t"                 \
  "sub %[s], %[s], %[t], lsr #31\n\t"                  \
  "asr %[s], %[s], %[e]\n\t"                           \
  "ssat %[s], #8, %[s]\n\t"                            \
  "bfi %[wa], %[s], #" #K ", #8\n\t"

static void add_tab_sat(const int32_t *tab, const int8_t *a, const int8_t *b, int8_t *o, int32_t n, int32_t mo,
                        int32_t c, int32_t e) {
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)   /* -O0 lacks the registers */
  const int32_t n8 = n & ~7;
  uint32_t wa, wb, t, s;
#define ADD_WORD                                                      \
  "ldr %[wa], [%[a]], #4\n\t"                                          \
  "ldr %[wb], [%[b]], #4\n\t"                                          \
  ADD_STEP("uxtb %[t], %[wb]", "sxtb %[s], %[wa]", 0)                 \
  ADD_STEP("ubfx %[t], %[wb], #8, #8", "sbfx %[s], %[wa], #8, #8", 8)   \
  ADD_STEP("ubfx %[t], %[wb], #16, #8", "sbfx %[s], %[wa], #16, #8", 16) \
  ADD_STEP("lsr %[t], %[wb], #24", "asr %[s], %[wa], #24", 24)          \
  "str %[wa], [%[o]], #4\n\t"
#define ADD_OPERANDS                                                                                        \
  : [a] "+r"(a), [b] "+r"(b), [o] "+r"(o), [k] "+r"(k), [wa] "=&r"(wa), [wb] "=&r"(wb), [t] "=&r"(t), [s] "=&r"(s) \
  : [tab] "r"(tab), [mo] "r"(mo), [c] "r"(c), [e] "r"(e)                                                       \
  : "cc", "memory"
  int32_t k = n8;
  if (n8) __asm__ volatile("1:\n\t" ADD_WORD ADD_WORD "subs %[k], %[k], #8\n\tbne 1b\n\t" ADD_OPERANDS);
#undef ADD_WORD
#undef ADD_OPERANDS
  /* the last 0..7 one at a time (a word of them in asm: 0.15 KB more code for ~24 cycles once a call) */
  add_tab_run(tab, a, b, o, n - n8, mo, c, e, -128, 127);
#else
  add_tab_run(tab, a, b, o, n, mo, c, e, -128, 127);
#endif
}
#undef ADD_STEP

static int64_t add_abs64(int64_t v) { return v < 0 ? -v : v; }

/* tab[u] = 2 t(b) + (off_a << 20) for every byte u (b = (int8_t)u), t the b input's term (its kind's form). */
BT_INLINE void add_fill(int32_t *tab, int32_t off_a, int32_t off_b, int32_t m_b, int32_t s_b, const int kind) {
  const int32_t e = kind == AD_SMALL ? -s_b : 1, mh = m_b >> (31 - AD_LS), ml = m_b & ((1 << (31 - AD_LS)) - 1);
  const int32_t c = 1 << (e - 1), off_sh = (int32_t)((uint32_t)off_b << AD_LS);
  const uint32_t base = (uint32_t)off_a << 20;
  for (int32_t u = 0; u < 256; u++) {
    const int32_t t = ad_in((int8_t)(uint8_t)u, off_b, off_sh, AD_LS, m_b, s_b, mh, ml, c, e, kind);
    tab[u] = (int32_t)(2 * (uint32_t)t + base);
  }
}

/* add_tab's values of an ADD it takes (see the top of the file): first, the 0.5 input (1: input2, swapped), and the
 * other's offset, multiplier and shift, the 0.5 input's offset, the output's constant C and shift e. */
typedef struct {
  int32_t first, off_a, off_b, m_b, s_b, c, e;
} add_tab_args;

/* 1 when add_tab takes the ADD (its values in *t), 0 to leave it to add_dense.h. */
BT_INLINE int add_tab_ok(const bt_add_params *p, add_tab_args *t) {
  const bt_bcast4 *q = &p->b;
  if (p->left_shift != 20 || !ad_one_run(q)) return 0;
  const int32_t n = q->dims[0] * q->dims[1] * q->dims[2] * q->dims[3];
  const int32_t so = p->output_shift, mo = p->output_multiplier;
  if (n < ADD_TAB_MIN || so > -1 || so < -31 || mo < 0) return 0;
  int first; /* the 0.5 input */
  if (p->input1_multiplier == (1 << 30) && p->input1_shift == 0) first = 0;
  else if (p->input2_multiplier == (1 << 30) && p->input2_shift == 0) first = 1;
  else return 0;
  const int32_t off_a = first ? p->input2_offset : p->input1_offset, off_b = first ? p->input1_offset : p->input2_offset;
  const int32_t m_b = first ? p->input1_multiplier : p->input2_multiplier;
  const int32_t s_b = first ? p->input1_shift : p->input2_shift;
  /* offsets of at most 256 and a shift of at most 0 (TFLite's: the real multiplier is below 1) keep
   * (b + off_b) << 20 below 2^29, and with m_b >= 0 the term monotonic in b (the bound below needs it) */
  if (off_a < -256 || off_a > 256 || off_b < -256 || off_b > 256 || s_b > 0 || m_b < 0) return 0;
  /* the term is monotonic in b, so its largest magnitude is at b = -128 or 127 */
  const int64_t b_lo = add_abs64(bt_mbqm_fast((int32_t)((uint32_t)(-128 + off_b) << 20), m_b, s_b));
  const int64_t b_hi = add_abs64(bt_mbqm_fast((int32_t)((uint32_t)(127 + off_b) << 20), m_b, s_b));
  const int64_t bmax = b_lo > b_hi ? b_lo : b_hi;
  const int64_t amax = (add_abs64(-128 + off_a) > add_abs64(127 + off_a) ? add_abs64(-128 + off_a) : add_abs64(127 + off_a));
  const int64_t smax = (amax << 19) + bmax; /* |S| */
  const int32_t e = -so;
  const int64_t c = ((int64_t)1 << (e - 1)) + (int64_t)p->output_offset * ((int64_t)1 << e);
  const int64_t hmax = ((smax * mo) >> 31) + 1;
  if (smax >= ((int64_t)1 << 30) || add_abs64(c) + hmax + 1 >= ((int64_t)1 << 31)) return 0;
  t->first = first, t->off_a = off_a, t->off_b = off_b, t->m_b = m_b, t->s_b = s_b, t->c = (int32_t)c, t->e = e;
  return 1;
}

/* One ADD that add_tab takes, its table's fill kind (AD_SMALL, else AD_GENERIC: AD_HALF's value too, bt_mbqm_fast
 * being exact) and its activation (sat: the whole int8 range) constants of the caller: add_tab_ok's values derived
 * without its checks (model.c's variants below: the build checked them, kernel_variants.add_tab_variant). */
BT_INLINE void add_tab_known(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out, const int kind,
                             const int sat) {
  const bt_bcast4 *q = &p->b;
  const int32_t n = q->dims[0] * q->dims[1] * q->dims[2] * q->dims[3], e = -p->output_shift;
  /* add_tab_ok's C (it checked |C| < 2^31, so the sum modulo 2^32 is its value) */
  const int32_t c = (int32_t)((1u << (e - 1)) + ((uint32_t)p->output_offset << e));
  const int first = p->input1_multiplier != (1 << 30) || p->input1_shift != 0; /* 1: input2 has the 0.5 multiplier */
  int32_t tab[256];
  if (first) add_fill(tab, p->input2_offset, p->input1_offset, p->input1_multiplier, p->input1_shift, kind);
  else add_fill(tab, p->input1_offset, p->input2_offset, p->input2_multiplier, p->input2_shift, kind);
  const int8_t *x = first ? b : a, *y = first ? a : b;
  if (sat) add_tab_sat(tab, x, y, out, n, p->output_multiplier, c, e);
  else add_tab_run(tab, x, y, out, n, p->output_multiplier, c, e, p->act_min, p->act_max);
}

/* model.c's calls of an ADD add_tab takes, by what the build knows of it (kernel_variants.add_tab_variant; tests/
 * test_kernel_variants.py checks the two agree through bt_add_s8_tab_taken): add_tab's loop without add_dense.h's,
 * without add_tab_ok's run-time checks and with the one fill and activation loop the layer needs (1 KB less on
 * cortex-m4 than a call checking and able to run every case); the firmware trusts the build's checks. */
void bt_add_s8_tab_gen(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  add_tab_known(p, a, b, out, AD_GENERIC, 1);
}
void bt_add_s8_tab_small(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  add_tab_known(p, a, b, out, AD_SMALL, 1);
}
void bt_add_s8_tab_gen_act(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  add_tab_known(p, a, b, out, AD_GENERIC, 0);
}
void bt_add_s8_tab_small_act(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  add_tab_known(p, a, b, out, AD_SMALL, 0);
}

/* 0 when add_tab declines p (add_dense.h runs it), else which variant runs it: 1 bt_add_s8_tab_gen, 2 _small,
 * 3 _gen_act, 4 _small_act (kernel_variants.ADD_TAB_VARIANTS). */
int bt_add_s8_tab_taken(const bt_add_params *p) {
  add_tab_args t;
  if (!add_tab_ok(p, &t)) return 0;
  return 1 + (ad_kind(t.m_b, t.s_b, 20, t.off_b) == AD_SMALL) + 2 * !(p->act_min == -128 && p->act_max == 127);
}

typedef void (*add_tab_fn)(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out);

/* 1 when add_tab ran the ADD (the variant add_tab_ok's values pick), 0 to leave it to add_dense.h. */
static int add_tab(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  static const add_tab_fn fns[4] = {bt_add_s8_tab_gen, bt_add_s8_tab_small, bt_add_s8_tab_gen_act,
                                    bt_add_s8_tab_small_act};
  const int v = bt_add_s8_tab_taken(p);
  if (!v) return 0;
  fns[v - 1](p, a, b, out);
  return 1;
}

void bt_add_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  if (!add_tab(p, a, b, out)) bt_dense_add_s8(p, a, b, out);
}

/* add_tab with add_tab_ok's checks (tests: any ADD it takes, whichever variant): a fault, rather than an output it
 * did not compute, should add_tab decline. */
void bt_add_s8_tab(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) {
  if (!add_tab(p, a, b, out)) __builtin_trap();
}
