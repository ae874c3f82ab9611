/* add_dense.h -- int8 ADD and SUB for the optimised sets (cortex-m, riscv, host: their add.c defines
 * BT_ADD_S8_DENSE and includes reference/add_ref.h, which then takes bt_add_s8 / bt_sub_s8 from here).
 *
 * The same arithmetic as the reference (add.c's add_one), with each of the three requantisations
 * chosen once per call instead of run generically per element:
 *   - an input whose multiplier is 2^30 with shift 0 (TFLite gives the larger-scale input exactly
 *     that: its real multiplier is 0.5) is x / 2, exact because x = (v + offset) << left_shift is
 *     even (left_shift >= 1): one shift;
 *   - a multiplier m >= 2^30 with shift -e (e >= 1), left_shift L = 20 (TFLite's) and X = v + offset in
 *     -255..255: MultiplyByQuantizedMultiplierSmallerThanOneExp(X 2^L, m, -e) in 32-bit arithmetic.
 *     With K = 31 - L and m = mh 2^K + ml, the doubling high product floor((X m 2^L + 2^30) / 2^31)
 *     is h = X mh + floor((X ml + 2^(K-1)) / 2^K) (every term below 2^31), and since h < 0 exactly
 *     when X < 0, the rounding division by 2^e is (h + 2^(e-1) - [X < 0]) >> e (requant.h's bt_rq2
 *     derivation): two multiplies, three adds, two shifts;
 *   - else bt_mbqm_fast (equal to the reference for every input). The output: bt_rq2 when its
 *     parameters allow it (multiplier >= 2^30, shift -2 .. -31), else bt_mbqm_fast.
 * Contiguous runs (every operand's innermost stride 1; a whole dense tensor is one run) take one
 * specialised loop; anything else walks the broadcast index space element by element with the
 * generic loop. ADD is symmetric, so an input with the 0.5 multiplier is always made the first. */
#ifndef BT_ADD_DENSE_H
#define BT_ADD_DENSE_H
#include "bt_kernels.h"
#include "requant.h"

enum { AD_GENERIC = 0, AD_HALF = 1, AD_RQ2 = 2, AD_SMALL = 3 };

typedef struct {
  int32_t off[2], off_sh[2], m[2], s[2]; /* per input: offset, offset << left_shift, multiplier, shift */
  int32_t mh[2], ml[2], c[2], e[2]; /* AD_SMALL: m = mh 2^(31 - AD_LS) + ml, 2^(e-1), e */
  int32_t ls, mo, so, p2o, e1o, zp, lo, hi;
} ad_state;

typedef void (*ad_run_fn)(const ad_state *st, const int8_t *a, const int8_t *b, int8_t *o, int32_t n);

#define AD_LS 20 /* TFLite's left_shift for int8 ADD: the fast kinds take it as a constant */
#ifndef AD_SAT8 /* a set may saturate to int8 in one instruction (cortex-m: SSAT) */
#define AD_SAT8(v) bt_clamp(v, -128, 127)
#endif

/* One input's term; the state's values come in as locals (the loop's byte stores could otherwise
 * alias the state, and GCC would reload every field for every element). */
BT_INLINE int32_t ad_in(int32_t v, int32_t off, int32_t off_sh, int32_t ls, int32_t m, int32_t s, int32_t mh,
                        int32_t ml, int32_t c, int32_t e, const int kind) {
  if (kind == AD_SMALL) {
    const int32_t x = v + off;
    const int32_t h = x * mh + ((x * ml + (1 << (30 - AD_LS))) >> (31 - AD_LS));
    return (h + c + (x >> 31)) >> e;
  }
  if (kind == AD_HALF) return (int32_t)((uint32_t)(v + off) << (AD_LS - 1)); /* (a negative value shifted: unsigned) */
  return bt_mbqm_fast((int32_t)((uint32_t)v << ls) + off_sh, m, s);
}

/* sat: the activation is the whole int8 range (a saturation, no bounds to hold in registers). */
BT_INLINE void ad_loop(const ad_state *st, const int8_t *a, const int8_t *b, int8_t *o, int32_t n,
                       const int kind_a, const int kind_b, const int kind_o, const int sign, const int sat) {
#define AD_LOCALS(j) \
  const int32_t off##j = st->off[j], off_sh##j = st->off_sh[j], m##j = st->m[j], s##j = st->s[j], \
                mh##j = st->mh[j], ml##j = st->ml[j], c##j = st->c[j], e##j = st->e[j];
  AD_LOCALS(0)
  AD_LOCALS(1)
#undef AD_LOCALS
  const int32_t ls = st->ls, mo = st->mo, so = st->so, p2o = st->p2o, e1o = st->e1o, zp = st->zp;
  const int32_t lo = st->lo, hi = st->hi;
  for (int32_t i = 0; i < n; i++) {
    const int32_t ra = ad_in(a[i], off0, off_sh0, ls, m0, s0, mh0, ml0, c0, e0, kind_a);
    const int32_t rb = ad_in(b[i], off1, off_sh1, ls, m1, s1, mh1, ml1, c1, e1, kind_b);
    const int32_t sum = sign > 0 ? ra + rb : ra - rb;
    const int32_t r = (kind_o == AD_RQ2 ? bt_rq2(sum, mo, p2o, e1o) : bt_mbqm_fast(sum, mo, so)) + zp;
    o[i] = (int8_t)(sat ? AD_SAT8(r) : bt_clamp(r, lo, hi));
  }
}

#define AD_VARIANT(name, kb, sat) \
  static void name(const ad_state *st, const int8_t *a, const int8_t *b, int8_t *o, int32_t n) { \
    ad_loop(st, a, b, o, n, AD_HALF, kb, AD_RQ2, 1, sat); \
  }
AD_VARIANT(ad_half_half, AD_HALF, 0)
AD_VARIANT(ad_half_small, AD_SMALL, 0)
AD_VARIANT(ad_half_gen, AD_GENERIC, 0)
AD_VARIANT(ad_half_half_sat, AD_HALF, 1)
AD_VARIANT(ad_half_small_sat, AD_SMALL, 1)
AD_VARIANT(ad_half_gen_sat, AD_GENERIC, 1)
#undef AD_VARIANT
static void ad_add(const ad_state *st, const int8_t *a, const int8_t *b, int8_t *o, int32_t n) {
  ad_loop(st, a, b, o, n, AD_GENERIC, AD_GENERIC, AD_GENERIC, 1, 0);
}
static void ad_sub(const ad_state *st, const int8_t *a, const int8_t *b, int8_t *o, int32_t n) {
  ad_loop(st, a, b, o, n, AD_GENERIC, AD_GENERIC, AD_GENERIC, -1, 0);
}

static int ad_kind(int32_t m, int32_t s, int32_t ls, int32_t off) {
  if (ls != AD_LS) return AD_GENERIC;
  if (m == (1 << 30) && s == 0) return AD_HALF;
  if (m >= (1 << 30) && s <= -1 && s >= -31 && off >= -128 && off <= 128) return AD_SMALL;
  return AD_GENERIC;
}

/* 1 when the three operands are laid out as one dense tensor of dims (no broadcast, no stride gaps). */
static int ad_one_run(const bt_bcast4 *q) {
  int32_t s = 1;
  for (int k = 3; k >= 0; k--) {
    if (q->dims[k] > 1 && (q->a_stride[k] != s || q->b_stride[k] != s || q->out_stride[k] != s)) return 0;
    s *= q->dims[k];
  }
  return 1;
}

static void ad_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out, int sign) {
  ad_state st;
  const int32_t ls = p->left_shift;
  const int32_t m[2] = {p->input1_multiplier, p->input2_multiplier}, s[2] = {p->input1_shift, p->input2_shift};
  const int32_t off[2] = {p->input1_offset, p->input2_offset};
  int kind[2] = {ad_kind(m[0], s[0], ls, off[0]), ad_kind(m[1], s[1], ls, off[1])};
  const int out_rq2 = bt_rq2_ok(&p->output_multiplier, &p->output_shift, 1);
  int first = 0; /* the input that goes first: the 0.5 one when there is one (ADD only) */
  if (sign > 0 && kind[0] != AD_HALF && kind[1] == AD_HALF) first = 1;
  for (int k = 0; k < 2; k++) {
    const int j = k ^ first;
    st.off[k] = off[j], st.off_sh[k] = (int32_t)((uint32_t)off[j] << ls);
    st.m[k] = m[j], st.s[k] = s[j];
    const int32_t e = kind[j] == AD_SMALL ? -s[j] : 1;
    st.mh[k] = m[j] >> (31 - AD_LS), st.ml[k] = m[j] & ((1 << (31 - AD_LS)) - 1);
    st.e[k] = e, st.c[k] = 1 << (e - 1);
  }
  st.ls = ls, st.mo = p->output_multiplier, st.so = p->output_shift, st.zp = p->output_offset;
  st.p2o = out_rq2 ? bt_rq2_p2(p->output_shift) : 0, st.e1o = out_rq2 ? bt_rq2_e1(p->output_shift) : 0;
  st.lo = p->act_min, st.hi = p->act_max;
  ad_run_fn run = sign < 0 ? ad_sub : ad_add;
  if (sign > 0 && out_rq2 && kind[first] == AD_HALF) {
    const int other = kind[first ^ 1];
    const int sat = p->act_min == -128 && p->act_max == 127;
    run = other == AD_HALF ? (sat ? ad_half_half_sat : ad_half_half)
          : other == AD_SMALL ? (sat ? ad_half_small_sat : ad_half_small) : (sat ? ad_half_gen_sat : ad_half_gen);
  }
  const bt_bcast4 *q = &p->b;
  const int8_t *x = first ? b : a, *y = first ? a : b;
  const int32_t *xs = first ? q->b_stride : q->a_stride, *ys = first ? q->a_stride : q->b_stride;
  if (ad_one_run(q)) {
    run(&st, x, y, out, q->dims[0] * q->dims[1] * q->dims[2] * q->dims[3]);
    return;
  }
  const int inner = xs[3] == 1 && ys[3] == 1 && q->out_stride[3] == 1;
  for (int32_t i0 = 0; i0 < q->dims[0]; i0++)
    for (int32_t i1 = 0; i1 < q->dims[1]; i1++)
      for (int32_t i2 = 0; i2 < q->dims[2]; i2++) {
        const int32_t ox = i0 * xs[0] + i1 * xs[1] + i2 * xs[2], oy = i0 * ys[0] + i1 * ys[1] + i2 * ys[2];
        const int32_t oo = i0 * q->out_stride[0] + i1 * q->out_stride[1] + i2 * q->out_stride[2];
        if (inner) {
          run(&st, x + ox, y + oy, out + oo, q->dims[3]);
          continue;
        }
        for (int32_t i3 = 0; i3 < q->dims[3]; i3++)
          run(&st, x + ox + i3 * xs[3], y + oy + i3 * ys[3], out + oo + i3 * q->out_stride[3], 1);
      }
}

void bt_add_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) { ad_s8(p, a, b, out, 1); }
void bt_sub_s8(const bt_add_params *p, const int8_t *a, const int8_t *b, int8_t *out) { ad_s8(p, a, b, out, -1); }
#endif
