/* FULLY_CONNECTED int8 for xcore.ai's vector unit (vpu.h): 16 outputs per group; per 32-byte input
 * chunk one VLDC and 16 VLMACCRs against the weight rows (reverse order: output k in accumulator k);
 * the input offset enters as input_offset * sum w (a VLMACCR pass against ones), requantisation on
 * the scalar unit (see conv.c). A non-zero filter_offset takes a scalar path. */
#include "bt_kernels.h"
#include "requant.h"
#include "vpu.h"

static const int8_t *fc_stage(const int8_t *src, int32_t n, int8_t *buf) {
  if (n == 32 && !((uintptr_t)src & 3u)) return src;
  for (int32_t i = 0; i < 32; i++) buf[i] = i < n ? src[i] : 0;
  return buf;
}

static void fc_rows(const int8_t *w, int32_t n_in, int32_t o0, int32_t n_out, int32_t ch, int32_t n) {
  static const int8_t zeros[32] __attribute__((aligned(4))) = {0};
  int8_t buf[32] __attribute__((aligned(4)));
  for (int32_t k = 0; k < 16; k++) {
    const int32_t row = o0 + 15 - k;
    VLMACCR(row < n_out ? fc_stage(w + row * n_in + ch, n, buf) : zeros);
  }
}

void bt_fully_connected_s8(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  const int32_t n_in = p->n_in, n_out = p->n_out, off = p->input_offset, zp = p->output_offset;
  int8_t ones[32] __attribute__((aligned(4))), xb[32] __attribute__((aligned(4)));
  for (int i = 0; i < 32; i++) ones[i] = 1;
  VSETC_S8();
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t *x = in + b * n_in;
    int8_t *y = out + b * n_out;
    for (int32_t o0 = 0; o0 < n_out; o0 += 16) {
      const int32_t nch = n_out - o0 < 16 ? n_out - o0 : 16;
      int32_t acc[16], sumw[16];
      if (p->filter_offset == 0) {
        VCLRDR();
        VLDC(ones);
        for (int32_t ch = 0; ch < n_in; ch += 32) fc_rows(p->weights, n_in, o0, n_out, ch, n_in - ch < 32 ? n_in - ch : 32);
        bt_vpu_read_acc(sumw);
        VCLRDR();
        for (int32_t ch = 0; ch < n_in; ch += 32) {
          const int32_t n = n_in - ch < 32 ? n_in - ch : 32;
          VLDC(fc_stage(x + ch, n, xb));
          fc_rows(p->weights, n_in, o0, n_out, ch, n);
        }
        bt_vpu_read_acc(acc);
        for (int32_t k = 0; k < nch; k++) acc[k] += off * sumw[k];
      } else {
        for (int32_t k = 0; k < nch; k++) {
          const int8_t *w = p->weights + (o0 + k) * n_in;
          int32_t a = 0;
          for (int32_t i = 0; i < n_in; i++) a += (w[i] + p->filter_offset) * (x[i] + off);
          acc[k] = a;
        }
      }
      for (int32_t k = 0; k < nch; k++) {
        const int32_t o = o0 + k, j = p->per_channel ? o : 0;
        int32_t a = acc[k] + (p->bias ? p->bias[o] : 0);
        y[o] = (int8_t)bt_clamp(bt_mbqm_fast(a, p->multiplier[j], p->shift[j]) + zp, p->act_min, p->act_max);
      }
    }
  }
}
