/* FULLY_CONNECTED int8 for Cortex-M DSP. Inputs of up to 1280 values: the input row is widened once
 * to int16 with the offset added, then four outputs at a time run bt_mv1x4 (im2col.h). Longer inputs:
 * four outputs at a time share each input word (LDR + 2 SXTB16 + 2 SADD16), each output adds LDR +
 * 2 SXTB16 + 2 SMLAD per 4 inputs (bt_dot4x4). A non-zero filter_offset (never produced by TFLite
 * int8) takes the scalar path. Requantisation: bt_rq2 when the parameters allow it. */
#include "bt_kernels.h"
#include "requant.h"
#include "dsp.h"
#include "im2col.h"   /* bt_widen, bt_mv1x4 */
#include "bt_variants.h"
#include <stddef.h>   /* offsetof */

static inline int32_t requant_fc(const bt_fc_params *p, int32_t o, int32_t acc, int fast) {
  if (p->bias) acc += p->bias[o];
  const int32_t k = p->per_channel ? o : 0;
  acc = (fast ? bt_rq2(acc, p->multiplier[k], bt_rq2_p2(p->shift[k]), bt_rq2_e1(p->shift[k])) : bt_mbqm_fast(acc, p->multiplier[k], p->shift[k]))
        + p->output_offset;
  return bt_clamp(acc, p->act_min, p->act_max);
}

#define BT_FC_COL_MAX (2 * BT_COL_MAX)   /* the same 2560 bytes of stack as conv's two columns */

/* Requantised, clamped output of accumulator a with channel k's multiplier and shift. */
static inline __attribute__((always_inline)) int32_t fc_out(int32_t a, const int32_t *mult, const int32_t *shift,
                                                           int32_t k, int32_t zp, int32_t lo, int32_t hi, int fast) {
  const int32_t m = mult[k], s = shift[k];
  return bt_clamp((fast ? bt_rq2(a, m, bt_rq2_p2(s), bt_rq2_e1(s)) : bt_mbqm_fast(a, m, s)) + zp, lo, hi);
}

/* acc[r] += widened column c (word aligned, im2col.h's order) . weight row f0 + r*n, r = 0..3, by
 * im2col.h's bt_mv1x4 step (21 instructions per 16 MACs). The asm loop takes 32 values a pass (168 + 3
 * instructions per 128 MACs; the inputs one LDRD per 4 values, the end pointer in memory: 12
 * registers), then 16, 8 and 4 values as straight steps; the n % 4 tail in C. */
static inline __attribute__((always_inline)) void fc_mv4(const int16_t *c, const int8_t *f0, int32_t n,
                                                        int32_t *acc, const int full) {
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)
  int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  const int32_t n4 = n & ~3, n32 = n & ~31;
  const int8_t *f = f0, *f2 = f0 + 2 * n;
  uint32_t x, y, w, t;
#define FC_MV4_OUTPUTS                                                                                     \
  : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [c] "+r"(c), [f] "+r"(f), [f2] "+r"(f2), \
    [x] "=&r"(x), [y] "=&r"(y), [w] "=&r"(w), [t] "=&r"(t)
  if (full || n32) {
    const int16_t *const end = c + n32;
    __asm__ volatile("1:\n\t" BT_MV1X4_STEP BT_MV1X4_STEP BT_MV1X4_STEP BT_MV1X4_STEP BT_MV1X4_STEP BT_MV1X4_STEP BT_MV1X4_STEP
                     BT_MV1X4_STEP "ldr %[t], %[end]\n\tcmp %[c], %[t]\n\tbne 1b\n\t"
                     FC_MV4_OUTPUTS : [n] "r"(n), [end] "m"(end) : "cc", "memory");
  }
  if (!full && (n & 16))
    __asm__ volatile(BT_MV1X4_STEP BT_MV1X4_STEP BT_MV1X4_STEP BT_MV1X4_STEP FC_MV4_OUTPUTS : [n] "r"(n) : "cc", "memory");
  if (!full && (n & 8)) __asm__ volatile(BT_MV1X4_STEP BT_MV1X4_STEP FC_MV4_OUTPUTS : [n] "r"(n) : "cc", "memory");
  if (!full && (n & 4)) __asm__ volatile(BT_MV1X4_STEP FC_MV4_OUTPUTS : [n] "r"(n) : "cc", "memory");
#undef FC_MV4_OUTPUTS
  if (!full)
    for (int32_t k = n4; k < n; k++, c++, f++, f2++) {
      a0 += f[0] * c[0]; a1 += f[n] * c[0]; a2 += f2[0] * c[0]; a3 += f2[n] * c[0];
    }
  acc[0] = a0; acc[1] = a1; acc[2] = a2; acc[3] = a3;
#else
  (void)full;  /* the same sums by im2col.h's C form (host C model, -O0) */
  bt_mv1x4(c, f0, n, acc);
#endif
}

/* The output (before the int8 cast) of accumulator a with multiplier m and shift s: fast, bt_rq2 with
 * p2 (the output zero point folded in when zpf: bt_rq2_p2_zp) and e1, else bt_mbqm_fast; act 2: the
 * whole int8 range (SSAT), 1: act_max 127 (SSAT, then the lower bound), 0: any range. */
static inline __attribute__((always_inline)) int32_t fc_rq(int32_t a, int32_t m, int32_t s, int32_t p2, int32_t e1,
                                                          int32_t zp, int32_t lo, int32_t hi, const int fast,
                                                          const int zpf, const int act) {
  const int32_t v = fast ? bt_rq2(a, m, p2, e1) + (zpf ? 0 : zp) : bt_mbqm_fast(a, m, s) + zp;
  if (act == 2) return bt_ssat8(v);
  if (act == 1) {
    const int32_t t = bt_ssat8(v);
    return t < lo ? lo : t;
  }
  return bt_clamp(v, lo, hi);
}

/* Output k of a kernel below from its locals: per channel (pc) its own constants, else the layer's made once
 * (m0, s0, p20, e10); fast, zpf and act as fc_rq's. */
#define FC_OUT(a, k)                                                                                          \
  (pc ? fc_rq(a, mult[k], shift[k],                                                                           \
              fast ? (zpf ? bt_rq2_p2_zp(bt_rq2_p2(shift[k]), bt_rq2_e1(shift[k]), zp) : bt_rq2_p2(shift[k])) : 0, \
              fast ? bt_rq2_e1(shift[k]) : 0, zp, lo, hi, fast, zpf, act)                                     \
      : fc_rq(a, m0, s0, p20, e10, zp, lo, hi, fast, zpf, act))

/* The low bytes of r0..r3 as one word (three BFI). */
static inline __attribute__((always_inline)) uint32_t fc_pack4(int32_t r0, int32_t r1, int32_t r2, int32_t r3) {
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
  uint32_t w = (uint32_t)r0;
  __asm__("bfi %0, %1, #8, #8\n\tbfi %0, %2, #16, #8\n\tbfi %0, %3, #24, #8" : "+&r"(w) : "r"(r1), "r"(r2), "r"(r3));
  return w;
#else
  return (uint32_t)(uint8_t)r0 | ((uint32_t)(uint8_t)r1 << 8) | ((uint32_t)(uint8_t)r2 << 16) | ((uint32_t)r3 << 24);
#endif
}

/* Inputs up to BT_FC_COL_MAX: each batch row is widened once (int16, offset added, im2col.h's
 * layout), then four outputs at a time take fc_mv4 (four: 0, a layer of at most 3 outputs, none: that loop
 * is not compiled), the rest one at a time. A per-tensor requantisation's constants are made once per call;
 * each four outputs are stored as one word. pc: per channel, a constant or p->per_channel. */
static inline __attribute__((always_inline)) void fc_widened_k(const bt_fc_params *p, const int8_t *in, int8_t *out,
                                                              const int fast, const int pc, const int sat,
                                                              const int full, const int four) {
  int16_t col[BT_FC_COL_MAX] __attribute__((aligned(4)));
  const int32_t n = p->n_in, n_out = p->n_out, off = p->input_offset, off2 = bt_dup16(off), batches = p->batches;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int8_t *const weights = p->weights;
  const int32_t m0 = mult[0], s0 = shift[0];
  const int32_t p20 = fast ? bt_rq2_p2(s0) : 0, e10 = fast ? bt_rq2_e1(s0) : 0;
  const int zpf = 0, act = sat ? 2 : 0;
  for (int32_t b = 0; b < batches; b++) {
    bt_widen(in + b * n, col, n, off, off2);
    int8_t *y = out + b * n_out;
    int32_t o = 0;
    if (four)
      for (; o + 4 <= n_out; o += 4) {
        int32_t acc[4];
        acc[0] = 0; acc[1] = 0; acc[2] = 0; acc[3] = 0;
        if (bias) { acc[0] = bias[o]; acc[1] = bias[o + 1]; acc[2] = bias[o + 2]; acc[3] = bias[o + 3]; }
        fc_mv4(col, weights + o * n, n, acc, full);
        const uint32_t word = fc_pack4(FC_OUT(acc[0], o), FC_OUT(acc[1], o + 1), FC_OUT(acc[2], o + 2),
                                       FC_OUT(acc[3], o + 3));
        __builtin_memcpy(y + o, &word, 4);   /* one store: int8 stores would alias the parameters */
      }
    for (; o < n_out; o++) {
      const int32_t a = bt_mv1x1(col, weights + o * n, n, bias ? bias[o] : 0);
      y[o] = (int8_t)FC_OUT(a, o);
    }
  }
}

static int fc_rq2(const bt_fc_params *p) { return bt_rq2_ok(p->multiplier, p->shift, p->per_channel ? p->n_out : 1); }

/* The widened variants, one form each (model.c calls the one a layer needs: kernel_variants.py's
 * "fully_connected" rows state fc_variant's rules): _few at most 3 outputs (no four-output loop), _pc per
 * channel, _ssat32 per tensor with the whole int8 range and n_in % 32 == 0 (no tail steps), _ssat the whole
 * range, _rq2 per tensor any range; all bt_rq2. bt_fully_connected_s8_widened: bt_mbqm_fast. */
void bt_fully_connected_s8_widened_rq2_few(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  fc_widened_k(p, in, out, 1, p->per_channel, 0, 0, 0);
}
void bt_fully_connected_s8_widened_rq2_pc(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_widened_k(p, in, out, 1, 1, 0, 0, 1); }
void bt_fully_connected_s8_widened_rq2_ssat32(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_widened_k(p, in, out, 1, 0, 1, 1, 1); }
void bt_fully_connected_s8_widened_rq2_ssat(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_widened_k(p, in, out, 1, 0, 1, 0, 1); }
void bt_fully_connected_s8_widened_rq2(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_widened_k(p, in, out, 1, 0, 0, 0, 1); }
void bt_fully_connected_s8_widened(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  fc_widened_k(p, in, out, 0, p->per_channel, 0, 0, 1);
}

/* Inputs over BT_FC_COL_MAX values or a non-zero filter offset. */
void bt_fully_connected_s8_direct(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  const int32_t n = p->n_in, off = p->input_offset, off2 = bt_dup16(off);
  const int fast = fc_rq2(p);
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t *x = in + b * n;
    int8_t *y = out + b * p->n_out;
    int32_t o = 0;
    if (p->filter_offset == 0) {
      for (; o + 4 <= p->n_out; o += 4) {
        const int8_t *f0 = p->weights + o * n, *f1 = f0 + n, *f2 = f1 + n, *f3 = f2 + n;
        int32_t acc[4] = {0, 0, 0, 0};
        const int32_t n4 = n & ~3;
        if (n4) bt_dot4x4(x, f0, n, n4, off2, acc);
        for (int32_t i = n4; i < n; i++) {
          const int32_t xv = x[i] + off;
          acc[0] += f0[i] * xv; acc[1] += f1[i] * xv; acc[2] += f2[i] * xv; acc[3] += f3[i] * xv;
        }
        const int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
        y[o] = (int8_t)requant_fc(p, o, a0, fast); y[o + 1] = (int8_t)requant_fc(p, o + 1, a1, fast);
        y[o + 2] = (int8_t)requant_fc(p, o + 2, a2, fast); y[o + 3] = (int8_t)requant_fc(p, o + 3, a3, fast);
      }
    }
    for (; o < p->n_out; o++) {
      const int8_t *w = p->weights + o * n;
      int32_t acc = 0, i = 0;
      if (p->filter_offset == 0) {
        for (; i + 4 <= n; i += 4) {
          const uint32_t v = bt_ld4(x + i), wv = bt_ld4(w + i);
          acc = bt_smlad(bt_sxtb16(wv), bt_sadd16(bt_sxtb16(v), off2), acc);
          acc = bt_smlad(bt_sxtb16_ror8((wv)), bt_sadd16(bt_sxtb16_ror8((v)), off2), acc);
        }
      }
      for (; i < n; i++) acc += (w[i] + p->filter_offset) * (x[i] + off);
      y[o] = (int8_t)requant_fc(p, o, acc, fast);
    }
  }
}

/* ---- Interleaved weights (build time: buildtool/plan/weight_order.py, "fc-il"), bt_fully_connected_s8_il*.
 * Layout of p->weights (n = n_in, n4 = n & ~3, m4 = n_out & ~3, u(v) = v + 128 as an unsigned byte):
 * rows 4g..4g+3 (r0..r3, g < m4 / 4) take the 4n bytes from 4n*g: per input quad k = 0, 4, .. n4 - 4
 * four words  [u(r0[k]), r1[k], u(r0[k+2]), r1[k+2]]  [u(r0[k+1]), r1[k+1], u(r0[k+3]), r1[k+3]]
 *             [u(r2[k]), r3[k], u(r2[k+2]), r3[k+2]]  [u(r2[k+1]), r3[k+1], u(r2[k+3]), r3[k+3]],
 * then the n % 4 tail values of r0, r1, r2, r3 in order; rows m4.. as they are (n bytes each, from m4*n).
 * The input row is widened once (int16, offset added, the [k, k+2, k+1, k+3] order), so the word pairs
 * (x_k, x_k+2) and (x_k+1, x_k+3) meet the first and second weight word of a pair of rows. One SMLAD of
 * the raw weight word adds sum (r0 + 128 + 256 r1) x; SXTB16 ror 8 of it gives r1's two weights, one
 * SMLAD r1's sum; r0's sum is the first less 256 x r1's less 128 x (the widened inputs' sum), exact
 * modulo 2^32 (the first accumulator may wrap). Per 16 MACs: LDRD (inputs) + LDM of 4 words + 4 SXTB16
 * + 8 SMLAD (20 cycles by the Cortex-M4 TRM, against 27 for the plain order's LDRD + 4 LDR + 8 SXTB16 +
 * 8 SMLAD). */

/* One input quad of the interleaved loop: 16 MACs (4 rows x 4 inputs). FC_IL_LDM: LDRD + LDM, 20 cycles.
 * FC_IL_SLP(N), the first quad of a pass of N, then FC_IL_SLN(q, N), quad q: single loads at fixed offsets from c
 * and f, each after the first pairing with the load before it (Cortex-M4 TRM 3.3.2: LDR + 5 pipelined LDR, 7
 * cycles, against 8), 19 cycles per 16 MACs; the first quad's last two loads post-indexed move c and f on by the
 * pass (each still pipelined: the load after a written-back base uses the other register, no "~" load of
 * cycles.py), the other quads' offsets less the pass's step, instead of two ADDS a pass (mbv2_w035_144's
 * 1280 -> 1000 2.459 M -> 2.439 M modelled cycles, 0.635 -> 0.630 of CMSIS-NN's; ad01 on nucleo-l4r5zi 0.447 M ->
 * 0.442 M, 0.919 -> 0.910 of its record, benchmarks/mlperf_tiny.py --boards nucleo-l4r5zi); taken on a part with a flash memory model (BT_ICACHE_BYTES,
 * nucleo-l4r5zi) by the per-tensor variants and the per-channel one of the whole int8 range (_rq2_pc_ssat: a long
 * row's loop stays in the 1 KiB instruction cache while the group code after it misses, fewer cycles than the
 * loop saves: mbv2_w035_144's 1280 -> 1000, benchmarks/kernels_vs_cmsis.py --mem nucleo-l4r5zi, 2.520 M -> 2.459 M
 * modelled cycles with the ADDS, 0.651 -> 0.635 of CMSIS-NN's); the other per-channel variants (_rq2, _mbqm: longer group code)
 * keep FC_IL_LDM, and a Cortex-M7 issues six single loads in more cycles than LDRD + LDM (cycles.py's M7 model),
 * so other boards keep FC_IL_LDM. */
#define FC_IL_MACS                                          \
  "smlad %[a0], %[w0], %[x0], %[a0]\n\t"                    \
  "sxtb16 %[w0], %[w0], ror #8\n\t"                         \
  "smlad %[a1], %[w0], %[x0], %[a1]\n\t"                    \
  "smlad %[a0], %[w1], %[x1], %[a0]\n\t"                    \
  "sxtb16 %[w1], %[w1], ror #8\n\t"                         \
  "smlad %[a1], %[w1], %[x1], %[a1]\n\t"                    \
  "smlad %[a2], %[w2], %[x0], %[a2]\n\t"                    \
  "sxtb16 %[w2], %[w2], ror #8\n\t"                         \
  "smlad %[a3], %[w2], %[x0], %[a3]\n\t"                    \
  "smlad %[a2], %[w3], %[x1], %[a2]\n\t"                    \
  "sxtb16 %[w3], %[w3], ror #8\n\t"                         \
  "smlad %[a3], %[w3], %[x1], %[a3]\n\t"
#define FC_IL_LDM "ldrd %[x0], %[x1], [%[c]], #8\n\tldm %[f]!, {%[w0], %[w1], %[w2], %[w3]}\n\t" FC_IL_MACS
#define FC_IL_SLP(N)                                        \
  "ldr %[x1], [%[c], #4]\n\t"                               \
  "ldr %[w1], [%[f], #4]\n\t"                               \
  "ldr %[w2], [%[f], #8]\n\t"                               \
  "ldr %[w3], [%[f], #12]\n\t"                              \
  "ldr %[x0], [%[c]], #(8*" #N ")\n\t"                      \
  "ldr %[w0], [%[f]], #(16*" #N ")\n\t" FC_IL_MACS
#define FC_IL_SLN(q, N)                                     \
  "ldr %[x0], [%[c], #(8*" #q "-8*" #N ")]\n\t"             \
  "ldr %[x1], [%[c], #(8*" #q "+4-8*" #N ")]\n\t"           \
  "ldr %[w0], [%[f], #(16*" #q "-16*" #N ")]\n\t"           \
  "ldr %[w1], [%[f], #(16*" #q "+4-16*" #N ")]\n\t"         \
  "ldr %[w2], [%[f], #(16*" #q "+8-16*" #N ")]\n\t"         \
  "ldr %[w3], [%[f], #(16*" #q "+12-16*" #N ")]\n\t" FC_IL_MACS
#ifdef BT_ICACHE_BYTES
#define FC_IL_SL_ON 1
#else
#define FC_IL_SL_ON 0
#endif

/* a0..a3 += the raw sums of rows r0..r3 over the n4 widened inputs at c (a0, a2: the biased rows');
 * returns the weights after the group's quads. The asm loop takes 8 quads a pass (13 registers), then a loop of
 * one quad a pass the rest (one copy of the step in the code, not seven); sl: FC_IL_SLP's steps where the part
 * takes them. */
static inline __attribute__((always_inline)) const int8_t *fc_il4(const int16_t *c, const int8_t *f, int32_t n4,
                                                                 uint32_t *p0, uint32_t *p1, uint32_t *p2,
                                                                 uint32_t *p3, const int sl) {
  uint32_t a0 = *p0, a1 = *p1, a2 = *p2, a3 = *p3;
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && defined(__OPTIMIZE__)   /* -O0 lacks the registers */
  const int16_t *const end = c + (n4 & ~31), *const end4 = c + n4;
#define FC_IL_OUTPUTS(PTR)                                                                                 \
  : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [c] PTR(c), [f] PTR(f), [x0] "=&r"(x0),   \
    [x1] "=&r"(x1), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [w3] "=&r"(w3)
  if (FC_IL_SL_ON && sl) {
    uint32_t x0, x1, w0, w1, w2, w3;
    if (n4 & ~31)
      __asm__ volatile("1:\n\t" FC_IL_SLP(8) FC_IL_SLN(1, 8) FC_IL_SLN(2, 8) FC_IL_SLN(3, 8) FC_IL_SLN(4, 8)
                       FC_IL_SLN(5, 8) FC_IL_SLN(6, 8) FC_IL_SLN(7, 8) "cmp %[c], %[end]\n\tbne 1b\n\t"
                       FC_IL_OUTPUTS("+l") : [end] "r"(end) : "cc", "memory");
    if (n4 & 28)   /* the 1-7 quads left */
      __asm__ volatile("1:\n\t" FC_IL_SLP(1) "cmp %[c], %[end]\n\tbne 1b\n\t"
                       FC_IL_OUTPUTS("+l") : [end] "r"(end4) : "cc", "memory");
  } else {
    uint32_t x0, x1;
    register uint32_t w0 __asm__("r8"), w1 __asm__("r9"), w2 __asm__("r10"), w3 __asm__("r11");   /* LDM order */
    const int16_t *const end8 = c + (n4 & ~31);   /* a part without a flash model */
    if (n4 & ~31)
      __asm__ volatile("1:\n\t" FC_IL_LDM FC_IL_LDM FC_IL_LDM FC_IL_LDM FC_IL_LDM FC_IL_LDM FC_IL_LDM FC_IL_LDM
                       "cmp %[c], %[end]\n\tbne 1b\n\t" FC_IL_OUTPUTS("+r") : [end] "r"(end8) : "cc", "memory");
    if (n4 & 28)   /* the 1-7 quads left */
      __asm__ volatile("1:\n\t" FC_IL_LDM "cmp %[c], %[end]\n\tbne 1b\n\t"
                       FC_IL_OUTPUTS("+r") : [end] "r"(end4) : "cc", "memory");
  }
#undef FC_IL_OUTPUTS
#else
  (void)sl;
  for (int32_t k = 0; k < n4; k += 4, f += 16) {   /* the same sums by dsp.h's C model (host, -O0) */
    int32_t x0, x1;
    __builtin_memcpy(&x0, c + k, 4);
    __builtin_memcpy(&x1, c + k + 2, 4);
    const uint32_t w0 = bt_ld4(f), w1 = bt_ld4(f + 4), w2 = bt_ld4(f + 8), w3 = bt_ld4(f + 12);
    a0 = (uint32_t)bt_smlad((int32_t)w1, x1, bt_smlad((int32_t)w0, x0, (int32_t)a0));
    a1 = (uint32_t)bt_smlad(bt_sxtb16_ror8(w1), x1, bt_smlad(bt_sxtb16_ror8(w0), x0, (int32_t)a1));
    a2 = (uint32_t)bt_smlad((int32_t)w3, x1, bt_smlad((int32_t)w2, x0, (int32_t)a2));
    a3 = (uint32_t)bt_smlad(bt_sxtb16_ror8(w3), x1, bt_smlad(bt_sxtb16_ror8(w2), x0, (int32_t)a3));
  }
#endif
  *p0 = a0; *p1 = a1; *p2 = a2; *p3 = a3;
  return f;
}

/* Widens the n inputs at x (offset off added; off2 = bt_dup16(off)) into col in the interleaved loop's
 * [k, k+2, k+1, k+3] order; returns 128 x the widened inputs' sum over the n & ~3 first (in the biased rows' sums). */
static inline __attribute__((always_inline)) uint32_t fc_il_widen(const int8_t *x, int16_t *col, int32_t n,
                                                                 int32_t off, int32_t off2) {
  const int32_t n4 = n & ~3;
  int32_t s = 0, k = 0;
  for (; k < n4; k += 4) {
    const uint32_t v = bt_ld4(x + k);
    const int32_t lo2 = bt_sadd16(bt_sxtb16(v), off2), hi2 = bt_sadd16(bt_sxtb16_ror8(v), off2);
    __builtin_memcpy(col + k, &lo2, 4);
    __builtin_memcpy(col + k + 2, &hi2, 4);
    s = bt_smlad(hi2, 0x00010001, bt_smlad(lo2, 0x00010001, s));
  }
  for (; k < n; k++) col[k] = (int16_t)(x[k] + off);
  return (uint32_t)s << 7;
}

/* pcs 0: per-tensor requantisation (the layer's constants made once), 1: per p->per_channel, 2: per channel
 * (_rq2_pc_ssat); FC_IL_SLP's steps on the part that takes them for pcs 0 and 2. */
static inline __attribute__((always_inline)) void fc_il_k(const bt_fc_params *p, const int8_t *in, int8_t *out,
                                                         const int fast, const int zpf, const int act, const int pcs) {
  int16_t col[BT_FC_COL_MAX] __attribute__((aligned(4)));
  const int32_t n = p->n_in, n4 = n & ~3, nt = n - n4, n_out = p->n_out, m4 = n_out & ~3;
  const int32_t off = p->input_offset, off2 = bt_dup16(off), batches = p->batches;
  const int32_t pc = pcs == 2 ? 1 : pcs ? p->per_channel : 0;
  const int32_t zp = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t m0 = mult[0], s0 = shift[0], e10 = fast ? bt_rq2_e1(s0) : 0;
  const int32_t p20 = fast ? (zpf ? bt_rq2_p2_zp(bt_rq2_p2(s0), e10, zp) : bt_rq2_p2(s0)) : 0;
  for (int32_t b = 0; b < batches; b++) {
    const uint32_t corr = fc_il_widen(in + b * n, col, n, off, off2);
    int8_t *const y = out + b * n_out;
    const int8_t *f = p->weights;
    const int32_t *bo = bias;
    for (int32_t o = 0; o < m4; o += 4) {
      uint32_t a0 = 0u - corr, a1 = 0, a2 = 0u - corr, a3 = 0;
      if (bias) { a0 += (uint32_t)bo[0]; a2 += (uint32_t)bo[2]; }
      f = fc_il4(col, f, n4, &a0, &a1, &a2, &a3, pcs != 1);
      int32_t r0 = (int32_t)(a0 - (a1 << 8)), r1 = (int32_t)a1, r2 = (int32_t)(a2 - (a3 << 8)), r3 = (int32_t)a3;
      if (bias) { r1 += bo[1]; r3 += bo[3]; bo += 4; }
      if (nt) {
        const int16_t *ct = col + n4;
        for (int32_t t = 0; t < nt; t++) {
          const int32_t xv = ct[t];
          r0 += f[t] * xv; r1 += f[nt + t] * xv; r2 += f[2 * nt + t] * xv; r3 += f[3 * nt + t] * xv;
        }
        f += 4 * nt;
      }
      const uint32_t word = fc_pack4(FC_OUT(r0, o), FC_OUT(r1, o + 1), FC_OUT(r2, o + 2),
                                     FC_OUT(r3, o + 3));
      __builtin_memcpy(y + o, &word, 4);   /* one store: int8 stores would alias the parameters */
    }
    for (int32_t o = m4; o < n_out; o++) {
      const int32_t a = bt_mv1x1(col, p->weights + o * n, n, bias ? bias[o] : 0);
      y[o] = (int8_t)FC_OUT(a, o);
    }
  }
}
#undef FC_OUT

/* Small layers (kernel_variants.py's first "fully_connected_il" row: per channel, one batch, n_in a multiple of 4 up to
 * BT_FC_SMALL_IN, at most BT_FC_SMALL_OUT outputs, bt_rq2): a few hundred MACs, where the call's fixed cost and,
 * on a part with a flash memory model, its code fetched cold from flash outweigh the loops (tiny_cnn_32's, dscnn_kws's,
 * resnet_concat_64's last layers; benchmarks/kernels_vs_cmsis.py --mem nucleo-l4r5zi). One compact body (below):
 * the groups of four rows, the rows after them two at a time, the bias added to the raw sums, then one requantising
 * loop over the outputs (bt_rq2s, each channel's multiplier and shift; the activation's clamp). Per tensor (kws_ref_model's) the _rq2z variants' constants made once cost fewer zero-wait cycles. 64 inputs at most: ad01's 128 -> 8 layer keeps its variant (on nucleo-l4r5zi this form's two-quad
 * loop and its own code in the instruction cache cost the layer after it more than they save). */
#define BT_FC_SMALL_IN 64
#define BT_FC_SMALL_OUT 16
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
/* In asm, one body of few instruction-cache lines (542 B on nucleo-l4r5zi, 506 B on cortex-m4; GCC's form of the C
 * spilled its pointers around the loops: 792 B and 1,114 B): push, then a frame of col (128 B: the widened inputs),
 * acc (64 B: the sums), -corr and the end of the groups' sums; p and out where the push put r0 and r2. The widening
 * loop (fc_il_widen's, 8 inputs a pass, 4 entering at its second half); each group of four rows one loop of two quads
 * a pass (FC_IL_SLP/FC_IL_SLN's single loads on a part with a flash model, else LDRD + LDM), an odd quad count
 * entering at the second quad with c and f as after the first; the rows after the groups two a pass sharing the
 * inputs' loads (an odd last row run as both, its twin's sum stored in acc's next word and unused); the bias added to
 * the sums when there is one; then one requantising loop (bt_rq2s, the zero point and the clamp; its three loads back
 * to back, the rounding word one ORR on 2^30 in lr). Registers in the groups: r0 c, r1 f, r2-r5 sums, r6-r7 inputs,
 * r8-r11 weights (LDM order), r12 acc, lr the widened row's end. */
_Static_assert(offsetof(bt_fc_params, n_out) == 4 && offsetof(bt_fc_params, input_offset) == 12 &&
               offsetof(bt_fc_params, output_offset) == 16 && offsetof(bt_fc_params, act_min) == 18 &&
               offsetof(bt_fc_params, act_max) == 20 && sizeof(((bt_fc_params *)0)->act_max) == 2 &&
               offsetof(bt_fc_params, weights) == 24 && offsetof(bt_fc_params, bias) == 28 &&
               offsetof(bt_fc_params, multiplier) == 32 && offsetof(bt_fc_params, shift) == 36,
               "bt_fully_connected_s8_il_small reads bt_fc_params at fixed offsets");
#define FC_SMALL_MACS                                                                                        \
  "smlad r2, r8, r6, r2\n\tsxtb16 r8, r8, ror #8\n\tsmlad r3, r8, r6, r3\n\t"                               \
  "smlad r2, r9, r7, r2\n\tsxtb16 r9, r9, ror #8\n\tsmlad r3, r9, r7, r3\n\t"                               \
  "smlad r4, r10, r6, r4\n\tsxtb16 r10, r10, ror #8\n\tsmlad r5, r10, r6, r5\n\t"                           \
  "smlad r4, r11, r7, r4\n\tsxtb16 r11, r11, ror #8\n\tsmlad r5, r11, r7, r5\n\t"
#if FC_IL_SL_ON   /* a pass's two quads as FC_IL_SLP(2), FC_IL_SLN(1, 2); FC_SMALL_ODD: an odd count's entry */
#define FC_SMALL_Q1                                                                                          \
  "ldr r7, [r0, #4]\n\tldr r9, [r1, #4]\n\tldr r10, [r1, #8]\n\tldr r11, [r1, #12]\n\t"                     \
  "ldr r6, [r0], #16\n\tldr r8, [r1], #32\n\t" FC_SMALL_MACS
#define FC_SMALL_Q2                                                                                          \
  "ldr r6, [r0, #-8]\n\tldr r7, [r0, #-4]\n\tldr r8, [r1, #-16]\n\tldr r9, [r1, #-12]\n\t"                  \
  "ldr r10, [r1, #-8]\n\tldr r11, [r1, #-4]\n\t" FC_SMALL_MACS
#define FC_SMALL_ODD "itt ne\n\taddne r0, r0, #8\n\taddne r1, r1, #16\n\t"
#else
#define FC_SMALL_Q1 "ldrd r6, r7, [r0], #8\n\tldm r1!, {r8, r9, r10, r11}\n\t" FC_SMALL_MACS
#define FC_SMALL_Q2 FC_SMALL_Q1
#define FC_SMALL_ODD ""
#endif
#define FC_SMALL_WIDEN4                                                                                      \
  "ldr r9, [r1], #4\n\tsxtb16 r10, r9\n\tsxtb16 r9, r9, ror #8\n\tsadd16 r10, r10, r4\n\tsadd16 r9, r9, r4\n\t"  \
  "smlad r7, r10, r8, r7\n\tsmlad r7, r9, r8, r7\n\tstrd r10, r9, [r5], #8\n\t"
__asm__(
    ".section .text.bt_fully_connected_s8_il_small,\"ax\",%progbits\n\t.p2align 2\n\t"
    ".global bt_fully_connected_s8_il_small\n\t.type bt_fully_connected_s8_il_small, %function\n\t.thumb_func\n\t"
    "bt_fully_connected_s8_il_small:\n\t"
    "push {r0, r1, r2, r4, r5, r6, r7, r8, r9, r10, r11, lr}\n\t"
    "sub sp, sp, #200\n\t"            /* col [0, 128), acc [128, 192), -corr 192, groups' end 196; p 200, out 208 */
    "ldr r3, [r0, #0]\n\t"            /* n */
    "ldrsh r4, [r0, #12]\n\t"
    "pkhbt r4, r4, r4, lsl #16\n\t"   /* off2 */
    "mov r5, sp\n\t"
    "add r6, r1, r3\n\t"
    "movs r7, #0\n\t"
    "mov r8, #0x10001\n\t"
    "tst r3, #4\n\t"                  /* widen: 8 inputs a pass (4 entering at the second half), their sum in r7 */
    "bne 13f\n\t"
    "1:\n\t" FC_SMALL_WIDEN4 "13:\n\t" FC_SMALL_WIDEN4
    "cmp r1, r6\n\t"
    "bne 1b\n\t"
    "mov lr, r5\n\t"
    "movs r6, #0\n\t"
    "sub r7, r6, r7, lsl #7\n\t"      /* -corr */
    "ldr r1, [r0, #24]\n\t"           /* f */
    "ldr r2, [r0, #4]\n\t"
    "bic r2, r2, #3\n\t"
    "add r12, sp, #128\n\t"
    "add r2, r12, r2, lsl #2\n\t"
    "strd r7, r2, [sp, #192]\n\t"
    "b 3f\n\t"
    "2:\n\t"                          /* a group of four rows */
    "mov r0, sp\n\t"
    "ldr r2, [sp, #192]\n\t"
    "mov r4, r2\n\t"
    "movs r3, #0\n\t"
    "movs r5, #0\n\t"
    "sub r6, lr, r0\n\t"
    "tst r6, #8\n\t"                  /* an odd quad count */
    FC_SMALL_ODD
    "bne 5f\n\t"
    "4:\n\t" FC_SMALL_Q1 "5:\n\t" FC_SMALL_Q2
    "cmp r0, lr\n\t"
    "bne 4b\n\t"
    "sub r2, r2, r3, lsl #8\n\t"
    "sub r4, r4, r5, lsl #8\n\t"
    "stmia r12!, {r2, r3, r4, r5}\n\t"
    "3:\n\t"
    "ldr r6, [sp, #196]\n\t"
    "cmp r12, r6\n\t"
    "bne 2b\n\t"
    "ldr r0, [sp, #200]\n\t"
    "ldr r3, [r0, #4]\n\t"
    "add r10, sp, #128\n\t"
    "add r10, r10, r3, lsl #2\n\t"    /* acc's end */
    "mov r11, sp\n\t"
    "sub r11, lr, r11\n\t"
    "lsr r11, r11, #1\n\t"            /* n */
    "b 7f\n\t"
    "6:\n\t"                          /* two rows after the groups */
    "mov r0, sp\n\t"
    "add r2, r1, r11\n\t"
    "add r3, r12, #4\n\t"
    "cmp r3, r10\n\t"
    "it cs\n\t"
    "movcs r2, r1\n\t"
    "movs r4, #0\n\t"
    "movs r5, #0\n\t"
    "8:\n\t"
    "ldr r7, [r0, #4]\n\t"           /* single loads: 5 cycles against LDRD + 2 LDR's 6 */
    "ldr r6, [r0], #8\n\t"
    "ldr r8, [r1], #4\n\t"
    "ldr r9, [r2], #4\n\t"
    "sxtb16 r3, r8\n\t"
    "sxtb16 r8, r8, ror #8\n\t"
    "smlad r4, r3, r6, r4\n\t"
    "smlad r4, r8, r7, r4\n\t"
    "sxtb16 r3, r9\n\t"
    "sxtb16 r9, r9, ror #8\n\t"
    "smlad r5, r3, r6, r5\n\t"
    "smlad r5, r9, r7, r5\n\t"
    "cmp r0, lr\n\t"
    "bne 8b\n\t"
    "strd r4, r5, [r12], #8\n\t"
    "add r1, r1, r11\n\t"
    "7:\n\t"
    "cmp r12, r10\n\t"
    "bcc 6b\n\t"
    "ldr r0, [sp, #200]\n\t"
    "ldr r1, [r0, #28]\n\t"           /* bias: added to the sums when there is one */
    "add r12, sp, #128\n\t"
    "cbz r1, 12f\n\t"
    "11:\n\t"
    "ldr r8, [r12]\n\t"
    "ldr r9, [r1], #4\n\t"
    "add r8, r8, r9\n\t"
    "str r8, [r12], #4\n\t"
    "cmp r12, r10\n\t"
    "bne 11b\n\t"
    "add r12, sp, #128\n\t"
    "12:\n\t"                         /* requantise: bt_rq2s, the zero point, the clamp */
    "ldrd r2, r3, [r0, #32]\n\t"      /* multipliers, shifts */
    "ldrsh r4, [r0, #16]\n\t"         /* zero point, act_min, act_max (int16) */
    "ldrsh r5, [r0, #18]\n\t"
    "ldrsh r6, [r0, #20]\n\t"
    "ldr r7, [sp, #208]\n\t"          /* out */
    "mov lr, #0x40000000\n\t"
    "9:\n\t"
    "ldr r8, [r12], #4\n\t"
    "ldr r9, [r2], #4\n\t"
    "ldr r1, [r3], #4\n\t"
    "asr r0, r8, #31\n\t"
    "orr r11, lr, r0, lsl #31\n\t"    /* 2^30 | (a & 2^31) */
    "smlal r11, r0, r8, r9\n\t"
    "mvn r1, r1\n\t"
    "sub r1, r1, #1\n\t"              /* -shift - 2 */
    "asr r0, r0, r1\n\t"
    "add r0, r0, #1\n\t"
    "add r0, r4, r0, asr #1\n\t"
    "cmp r0, r5\n\t"
    "it lt\n\t"
    "movlt r0, r5\n\t"
    "cmp r0, r6\n\t"
    "it gt\n\t"
    "movgt r0, r6\n\t"
    "strb r0, [r7], #1\n\t"
    "cmp r12, r10\n\t"
    "bne 9b\n\t"
    "add sp, sp, #212\n\t"            /* the frame and p, in, out */
    "pop {r4, r5, r6, r7, r8, r9, r10, r11, pc}\n\t"
    ".size bt_fully_connected_s8_il_small, . - bt_fully_connected_s8_il_small\n\t"
    ".text");
#else
void bt_fully_connected_s8_il_small(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  int16_t col[BT_FC_SMALL_IN] __attribute__((aligned(4)));
  int32_t acc[BT_FC_SMALL_OUT];
  const int32_t n = p->n_in & ~3, n_out = p->n_out;   /* n: a multiple of 4 */
  const int32_t *bias = p->bias, *m = p->multiplier, *sh = p->shift;
  const uint32_t corr = fc_il_widen(in, col, n, p->input_offset, bt_dup16(p->input_offset));
  const int8_t *f = p->weights;
  int32_t *a = acc, *const a4 = acc + (n_out & ~3), *const end = acc + n_out;
  for (; a != a4; a += 4) {
    uint32_t a0 = 0u - corr, a1 = 0, a2 = 0u - corr, a3 = 0;
    f = fc_il4(col, f, n, &a0, &a1, &a2, &a3, 1);   /* the host's C model */
    a[0] = (int32_t)(a0 - (a1 << 8)); a[1] = (int32_t)a1; a[2] = (int32_t)(a2 - (a3 << 8)); a[3] = (int32_t)a3;
  }
  for (; a != end; a++, f += n) *a = bt_mv1x1(col, f, n, 0);
  for (a = acc; a != end; m++, sh++) {
    int32_t v = bt_rq2s(*a++ + (bias ? *bias++ : 0), *m, -*sh - 2) + p->output_offset;
    v = v < p->act_min ? p->act_min : v;
    *out++ = (int8_t)(v > p->act_max ? p->act_max : v);
  }
}
#endif

/* The interleaved-weights variants (buildtool/codegen/model_c.py picks one per layer by the rules of
 * bt_fully_connected_s8_il below): rq2z, per-tensor bt_rq2 with the output zero point folded in
 * (bt_rq2_zp_ok), _ssat the whole int8 range, _lo act_max 127; rq2 and mbqm any requantisation. */
void bt_fully_connected_s8_il_rq2z_ssat(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_il_k(p, in, out, 1, 1, 2, 0); }
void bt_fully_connected_s8_il_rq2z_lo(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_il_k(p, in, out, 1, 1, 1, 0); }
void bt_fully_connected_s8_il_rq2z(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_il_k(p, in, out, 1, 1, 0, 0); }
void bt_fully_connected_s8_il_rq2_pc_ssat(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_il_k(p, in, out, 1, 0, 2, 2); }
void bt_fully_connected_s8_il_rq2(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_il_k(p, in, out, 1, 0, 0, 1); }
void bt_fully_connected_s8_il_mbqm(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_il_k(p, in, out, 0, 0, 0, 1); }

static int fc_zp_ok(const bt_fc_params *p) { return !p->per_channel && bt_rq2_zp_ok(p->shift[0]); }

/* Index in fc_il_variants of the variant for p (the same rules as kernel_variants.py's FC_IL). */
typedef void (*fc_fn)(const bt_fc_params *, const int8_t *, int8_t *);
static const fc_fn fc_il_variants[] = {bt_fully_connected_s8_il_rq2z_ssat, bt_fully_connected_s8_il_rq2z_lo,
                                          bt_fully_connected_s8_il_rq2z, bt_fully_connected_s8_il_rq2,
                                          bt_fully_connected_s8_il_mbqm, bt_fully_connected_s8_il_rq2_pc_ssat,
                                          bt_fully_connected_s8_il_small};
static const char *const fc_il_names[] = {"bt_fully_connected_s8_il_rq2z_ssat", "bt_fully_connected_s8_il_rq2z_lo",
                                          "bt_fully_connected_s8_il_rq2z", "bt_fully_connected_s8_il_rq2",
                                          "bt_fully_connected_s8_il_mbqm", "bt_fully_connected_s8_il_rq2_pc_ssat",
                                          "bt_fully_connected_s8_il_small"};
static int fc_il_variant(const bt_fc_params *p) {
  if (!fc_rq2(p)) return 4;
  if (p->per_channel && p->batches == 1 && p->n_in <= BT_FC_SMALL_IN && p->n_in % 4 == 0 && p->n_out <= BT_FC_SMALL_OUT)
    return 6;
  if (p->per_channel && p->act_min == -128 && p->act_max == 127) return 5;
  if (!fc_zp_ok(p)) return 3;
  if (p->act_max != 127) return 2;
  return p->act_min == -128 ? 0 : 1;
}

const char *bt_fully_connected_s8_il_variant(const bt_fc_params *p) { return fc_il_names[fc_il_variant(p)]; }

/* Interleaved weights: the variant for p. */
void bt_fully_connected_s8_il(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_il_variants[fc_il_variant(p)](p, in, out); }

static const fc_fn fc_variants[] = {bt_fully_connected_s8_widened_rq2_few, bt_fully_connected_s8_widened_rq2_pc,
                                    bt_fully_connected_s8_widened_rq2_ssat32, bt_fully_connected_s8_widened_rq2_ssat,
                                    bt_fully_connected_s8_widened_rq2, bt_fully_connected_s8_widened,
                                    bt_fully_connected_s8_direct};
static const char *const fc_names[] = {"bt_fully_connected_s8_widened_rq2_few", "bt_fully_connected_s8_widened_rq2_pc",
                                       "bt_fully_connected_s8_widened_rq2_ssat32", "bt_fully_connected_s8_widened_rq2_ssat",
                                       "bt_fully_connected_s8_widened_rq2", "bt_fully_connected_s8_widened",
                                       "bt_fully_connected_s8_direct"};

/* Index in fc_variants of the variant for p (buildtool/codegen/kernel_variants.py states the same rules). */
static int fc_variant(const bt_fc_params *p) {
  if (p->filter_offset != 0 || p->n_in > BT_FC_COL_MAX) return 6;
  if (!fc_rq2(p)) return 5;
  if (p->n_out < 4) return 0;
  if (p->per_channel) return 1;
  if (p->act_min == -128 && p->act_max == 127) return p->n_in % 32 == 0 ? 2 : 3;
  return 4;
}

const char *bt_fully_connected_s8_variant(const bt_fc_params *p) { return fc_names[fc_variant(p)]; }

void bt_fully_connected_s8(const bt_fc_params *p, const int8_t *in, int8_t *out) { fc_variants[fc_variant(p)](p, in, out); }
