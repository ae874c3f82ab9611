/* SVDF, integer (TFLM's reference SVDF): int8 input and output, int8 feature weights, time
   weights and activation state both int8 or both int16 (state_bits). See bt_kernels.h. */
#include "bt_kernels.h"
#include "requant.h"

static int32_t svdf_state_get(const void *s, int32_t i, int32_t bits) {
  return bits == 16 ? ((const int16_t *)s)[i] : ((const int8_t *)s)[i];
}

static void svdf_state_set(void *s, int32_t i, int32_t bits, int32_t v) {
  if (bits == 16) ((int16_t *)s)[i] = (int16_t)v;
  else ((int8_t *)s)[i] = (int8_t)v;
}

void bt_svdf_s8(const bt_svdf_params *p, const int8_t *in, void *state, int8_t *out) {
  const int32_t bits = p->state_bits;
  const int32_t lo = bits == 16 ? -32768 : -128, hi = bits == 16 ? 32767 : 127;
  const int32_t per_batch = p->n_filter * p->n_memory, total = p->batch * per_batch;
  const int32_t n_unit = p->n_filter / p->rank;
  /* the whole state moves one element towards the start (batches included) */
  for (int32_t i = 0; i + 1 < total; i++) svdf_state_set(state, i, bits, svdf_state_get(state, i + 1, bits));
  for (int32_t b = 0; b < p->batch; b++) {
    const int8_t *x = in + b * p->n_input;
    const int32_t base = b * per_batch;
    /* feature step: newest memory slot of every filter; the zero point is added after the clamp and
       the sum narrowed to the state type (TFLM's order) */
    for (int32_t f = 0; f < p->n_filter; f++) {
      const int8_t *w = p->weights_feature + f * p->n_input;
      int32_t acc = 0;
      for (int32_t c = 0; c < p->n_input; c++) acc += (int32_t)w[c] * ((int32_t)x[c] - p->input_zp);
      const int32_t v = bt_clamp(bt_mbqm(acc, p->mult1, p->shift1), lo, hi) + p->state_zp;
      svdf_state_set(state, base + f * p->n_memory + p->n_memory - 1, bits, v);
    }
    /* time step, rank reduction, bias, rescale */
    for (int32_t u = 0; u < n_unit; u++) {
      int32_t acc = p->bias ? p->bias[u] : 0;
      for (int32_t r = 0; r < p->rank; r++) {
        const int32_t f = u * p->rank + r;
        int32_t dot = 0;
        for (int32_t m = 0; m < p->n_memory; m++)
          dot += svdf_state_get(p->weights_time, f * p->n_memory + m, bits) *
                 (svdf_state_get(state, base + f * p->n_memory + m, bits) - p->state_zp);
        acc += dot;
      }
      out[b * n_unit + u] = (int8_t)bt_clamp(bt_mbqm(acc, p->mult2, p->shift2) + p->output_zp, -128, 127);
    }
  }
}
