/* FULLY_CONNECTED int8, TFLM reference_integer_ops::FullyConnected(PerChannel) arithmetic. */
#include "bt_kernels.h"
#include "requant.h"

void bt_fully_connected_s8(const bt_fc_params *p, const int8_t *in, int8_t *out) {
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t *x = in + b * p->n_in;
    for (int32_t o = 0; o < p->n_out; o++) {
      const int8_t *w = p->weights + o * p->n_in;
      int32_t acc = 0;
      for (int32_t i = 0; i < p->n_in; i++)
        acc += ((int32_t)w[i] + p->filter_offset) * ((int32_t)x[i] + p->input_offset);
      if (p->bias) acc += p->bias[o];
      const int32_t k = p->per_channel ? o : 0;
      acc = bt_mbqm(acc, p->multiplier[k], p->shift[k]) + p->output_offset;
      out[b * p->n_out + o] = (int8_t)bt_clamp(acc, p->act_min, p->act_max);
    }
  }
}
