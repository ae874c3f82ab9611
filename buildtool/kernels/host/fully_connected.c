/* FULLY_CONNECTED int8 for the host (plain C99 that gcc -O2 vectorises; see host_block.h): per
 * output, the dot product w * (x + input_offset) in blocks of 16 inputs (int32 lanes), the last
 * inputs in a scalar loop; a non-zero filter_offset adds filter_offset * sum(x + input_offset). */
#include "bt_kernels.h"
#include "host_block.h"

/* sum_i w[i] * (x[i] + off) */
static int32_t dot(const int8_t *w, const int8_t *x, int32_t n, int32_t off) {
  int32_t a = 0, i = 0;
  for (; i + BT_HB <= n; i += BT_HB) a += bt_hb_dot(w + i, x + i, off);
  for (; i < n; i++) a += w[i] * (x[i] + off);
  return a;
}

void bt_fully_connected_s8(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  const int32_t n = p->n_in, off = p->input_offset;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t *x = in + b * n;
    int32_t xsum = 0;
    if (p->filter_offset)
      for (int32_t i = 0; i < n; i++) xsum += x[i] + off;
    for (int32_t o = 0; o < p->n_out; o++) {
      int32_t a = dot(p->weights + o * n, x, n, off) + p->filter_offset * xsum + (p->bias ? p->bias[o] : 0);
      const int32_t k = p->per_channel ? o : 0;
      out[b * p->n_out + o] = (int8_t)bt_clamp(bt_mbqm_fast(a, p->multiplier[k], p->shift[k]) + p->output_offset,
                                               p->act_min, p->act_max);
    }
  }
}
