/* The cortex-m set's lean shared 1x1 convolution (issue 50: the code budget's small candidate for a 1x1 layer),
 * included by conv.c after conv_pm.h (BT_PM_SHARED): bt_conv_s8_1x1_rq2_ssat runs the patch-matrix variant
 * bt_conv_s8_pm_rq2_ssat's fast path for a 1x1 read in place and nothing else: triples of consecutive pixels widened
 * by bt_pm_widen3r (the patch is the pixel: no gather, no column builder, no tail of one or two pixels), each pair of
 * output channels over them by one bt_pm_loop3r (bt_mm3x2's groups, bt_rq2 with the output zero point folded into
 * the rounding words, SSAT #8, STRH a pixel). What the general variant does besides, this one leaves out:
 *  - the pixels left after the triples: two, the band's last triple starts at pixel n - 3 (one of its pixels computed
 *    again, the same values stored again: a convolution's output never overlaps its input); one, four channels at a
 *    time (bt_mv1x4, the last four again where c_out % 4 != 0); a call of fewer than
 *    three pixels, or whose input rows are wider than its output's (a fused tile's), one pixel a pass, widened
 *    three times and stored three times in place;
 *  - an odd last output channel: the last pair is (c_out - 2, c_out - 1) (channel c_out - 2 computed again);
 *  - a pair whose zero point does not fold (bt_pm_k6): not taken.
 * bt_conv_s8_1x1_rq2m_ssat is the same with doubled sums (conv_pm.h's fast 2, bt_rq2m: the columns hold 2 (x + off),
 * the sums start from 2 bias; ADD, SMMLAR, ASR an output instead of bt_rq2's AND, ORR, ADD, SMLAL, ASR, one SADD16 a
 * pixel's 2 values more), for layers whose 2a stays in int32 (kernel_variants.lean_1x1_doubled, doubled_ok's bound):
 * ResNet-8's stride-2 shortcuts (16 -> 32 and 32 -> 64 channels) ran 1.15x and 1.03x their compact instances with
 * bt_rq2, 1.08x and 1.00x with bt_rq2m. One body (bt_conv_1x1, fast 1 or 2) compiled into each entry point: a model
 * links the one it calls (the code budget prices each variant whole, so it plans one of the two; a split that
 * shared everything but the widening and the channel pairs between them, the pass called through a pointer, made
 * each 50-60 B larger: vww's 3,086 -> 3,146 B, variant_costs.py); the pixel left alone (bt_mv1x4) is requantised by
 * bt_rq2 in both (its sums not doubled).
 * So it needs (kernel_variants.py's row, checked at code generation; no run-time check, so only model.c calls it):
 * kh = kw = 1, stride 1, no padding, c_in % 4 == 0 with 8 <= c_in <= BT_COL_MAX, c_out >= 4, every channel
 * bt_pm_rq2_ok with its shift at least -22 (bt_rq2_zp_ok: the zero point folds), the whole int8 range. Any output
 * pixel stride (a rows-live layer's packed rows: out.c live channels of a pixel out.pixel_stride apart) and input
 * pixel stride; a fused tile's column call (codegen/fused_c.py fx_lean_k: out.w 1, pad_left <= 0 the column's offset
 * in the input window) runs its pixels as one row, stride_h input rows apart. The same cycles as bt_conv_s8_pm_rq2_ssat's on such layers
 * (but the odd channel's pair: vww's rows-live layers), a fraction of its code (it links no bt_pm_col_call,
 * bt_pm_tail_call, bt_gather_call, bt_mm2x2, bt_mmpx1, bt_mv1x1, bt_pm_out_call). Without the asm (a host
 * build, -O0) it runs bt_conv_pm's loops, the same results. */
#ifndef BT_CONV_1X1_H
#define BT_CONV_1X1_H

/* fast 1: bt_rq2, 2: bt_rq2m (doubled sums: the triples' columns and the pairs' biases doubled) */
static inline __attribute__((always_inline)) void bt_conv_1x1(const bt_conv_params *p, const int8_t *in, int32_t in_y0,
                                                              int8_t *out, int32_t y0, int32_t y1, const int fast) {
#if BT_PM_RQ6_ASM && defined(BT_PM_SHARED)
  const int dbl = fast == 2;
  int16_t col[3 * BT_COL_MAX] __attribute__((aligned(4)));   /* as bt_conv_pm's: one frame under 4 KB */
  bt_pm_l3r l3;   /* bt_pm_loop3r's words */
  const int32_t K = p->in.c, ips = p->in.pixel_stride, cout = p->out.c, zp = p->output_offset;
  const int32_t off2 = bt_dup16(p->input_offset), n = (y1 - y0) * p->out.w;
  const int32_t *const bias = p->bias, *const mult = p->multiplier, *const shift = p->shift;
  const int32_t S = BT_GROUPED(3, K), room = 3 * BT_COL_MAX / S, tmax = room < BT_COL3 ? room : BT_COL3;
  const int32_t ow = p->out.w, in_row = p->in.w * ips, ops = p->out.pixel_stride, sh = p->stride_h;
  /* the band's output pixels in rows of rw, the input pixels of a row step bytes apart: one row of n where they are
     consecutive in the input (stride 1, a whole map's or a tile's as wide as its input), else the output's rows (a
     stride over 1: every stride_w-th pixel of every stride_h-th row; a fused tile's narrower rows). The triples run
     (a column, ow 1: a fused tile's column call, its pixels sh input rows apart, one row of n too)
     over as a stride-1 map's (up to tmax a pass, each pair's loop over all of them): one inside a row
     widened by bt_pm_widen3r, one across two rows pixel by pixel (its pixels are not evenly spaced) */
  const int32_t rw = (p->in.w == ow && sh == 1) || ow == 1 ? n : ow, step = ow == 1 ? sh * in_row : p->stride_w * ips;
  in -= p->pad_left * ips;   /* a tile's column call: pad_left <= 0, the column's offset in the input window */
  l3.K = K;
  l3.ops = n >= 3 ? ops : 0;
  for (int32_t t = 0; t < n;) {
    int32_t T = 1;
    if (n >= 3) {
      if (n - t == 1) {   /* one pixel left (n % 3 == 1: a map of 7x7, 8x8, 14x14...): widened once, four channels at
                             a time (bt_mv1x4; c_out >= 4: the last four again where c_out % 4 != 0), not a triple's
                             work for it (an 8x8 of 256 values into 128 channels: 1.6 % more); bt_rq2 on its sums
                             (not doubled) whichever the entry */
        int8_t *const o1 = out + t * ops;
        bt_widen(in + ((y0 + t / rw) * sh - in_y0) * in_row + (t % rw) * step, col, K, p->input_offset, off2);
        for (int32_t oc = 0; oc < cout; oc += 4) {
          const int32_t c = oc + 4 <= cout ? oc : cout - 4;
          int32_t a[4];
          for (int k = 0; k < 4; k++) a[k] = bias ? bias[c + k] : 0;
          bt_mv1x4(col, p->filter + c * K, K, a);
          for (int k = 0; k < 4; k++) {
            const int32_t s = shift[c + k];
            o1[c + k] = (int8_t)bt_pm_out(a[k], mult[c + k], s, BT_PM_P2(s), BT_PM_E1(s), zp, -128, 127, 1, 2);
          }
        }
        break;
      }
      if (t + 3 > n) t = n - 3;   /* two pixels left: the band's last triple, one of its pixels again */
      T = (n - t) / 3;
      if (T > tmax) T = tmax;
    }
    /* the pass's first pixel's column x and input row (one division a pass), then stepped (a triple of a stride over 1
       may cross into the next output row, rw < 3 more than one) */
    const int32_t rstep = sh * in_row;
    int32_t x = rw == n ? t : t % rw;
    const int8_t *row = in + ((y0 + (rw == n ? 0 : t / rw)) * sh - in_y0) * in_row;
    for (int32_t j = 0; j < T; j++) {
      int16_t *const c = col + j * S;
      if (n < 3 || x + 2 < rw)   /* a call of one or two pixels: one a pass, widened thrice (the pixel step 0) */
        bt_pm_widen3r(row + x * step, c, K, n < 3 ? 0 : step, off2, dbl);
      else {
        int32_t xq = x;
        const int8_t *rq = row;
        for (int32_t q = 0; q < 3; q++, xq++) {   /* across two rows: each pixel into its place of the triple's groups */
          while (xq >= rw) { xq -= rw; rq += rstep; }
          const int8_t *const s = rq + xq * step;
          int16_t *d = c + 2 * q;
          for (int32_t k = 0; k < K; k += 4, d += 12) {
            const uint32_t w = bt_ld4(s + k);
            int32_t a = (int32_t)bt_sxtab16((uint32_t)off2, w), b = (int32_t)bt_sxtab16_ror8((uint32_t)off2, w);
            if (dbl) { a = bt_sadd16(a, a); b = bt_sadd16(b, b); }
            __builtin_memcpy(d, &a, 4);
            __builtin_memcpy(d + 6, &b, 4);
          }
        }
      }
      for (x += 3; x >= rw && rw != n;) { x -= rw; row += rstep; }
    }
    int8_t *const o = out + t * ops;
    l3.end = col + T * S;
    for (int32_t oc = 0; oc < cout; oc += 2) {
      const int32_t c = oc + 2 <= cout ? oc : cout - 2;   /* an odd count: the last pair is the last two channels */
      (void)bt_pm_k6(l3.k + 2, mult[c], mult[c + 1], shift[c], shift[c + 1], zp, fast);   /* folds (the row's test) */
      l3.k[0] = bias ? bias[c] * (1 + dbl) : 0;
      l3.k[1] = bias ? bias[c + 1] * (1 + dbl) : 0;
      l3.o = o + c;
      l3.f0 = p->filter + c * K;
      bt_pm_loop3r(col, &l3, fast);
    }
    t += n >= 3 ? 3 * T : 1;
  }
#else
  bt_conv_pm(p, in, in_y0, out, y0, y1, fast, 2);
#endif
}

void bt_conv_s8_1x1_rq2_ssat(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                             int32_t y1) {
  bt_conv_1x1(p, in, in_y0, out, y0, y1, 1);
}

void bt_conv_s8_1x1_rq2m_ssat(const bt_conv_params *p, const int8_t *in, int32_t in_y0, int8_t *out, int32_t y0,
                              int32_t y1) {
  bt_conv_1x1(p, in, in_y0, out, y0, y1, 2);
}

#endif
