/* UNIDIRECTIONAL_SEQUENCE_LSTM, int8 (TFLM's integer LSTM, 8x8->16). See bt_kernels.h. */
#include "bt_kernels.h"
#include "requant.h"


static int32_t lstm_sat16(int32_t v) { return bt_clamp(v, -32768, 32767); }

/* int16 sigmoid of a Q3.12 value -> Q0.15 (input scaled by 3) */
static int32_t lstm_sigmoid(const uint16_t *table, int32_t x) { return bt_sigmoid16(table, x * 3); }

/* int16 tanh of a value on scale 2^power -> Q0.15 (input scaled by 3 << (15 + power - 3)) */
static int32_t lstm_tanh(const uint16_t *table, int32_t x, int32_t power) {
  int32_t shift = 15 + power - 3, mult = 3;
  if (shift < 0) shift = -shift;
  else { mult = 3 << shift; shift = 0; }
  const int32_t rnd = shift > 0 ? 1 << (shift - 1) : 0;
  return bt_tanh16(table, (x * mult + rnd) >> shift);
}

/* pre-activation of one gate for state element o: sat16(input FC + recurrent FC), Q3.12 */
static int32_t lstm_gate(const bt_lstm_gate *q, const bt_lstm_params *p, const int8_t *x, const int8_t *h, int32_t o) {
  const int8_t *wi = q->w_in + o * p->n_input, *wr = q->w_rec + o * p->n_state;
  int32_t acc = q->bias ? q->bias[o] : 0;
  for (int32_t d = 0; d < p->n_input; d++) acc += ((int32_t)wi[d] - q->w_in_zp) * ((int32_t)x[d] - p->input_zp);
  const int32_t a = lstm_sat16(bt_mbqm(acc, q->in_mult, q->in_shift));
  acc = 0;
  for (int32_t j = 0; j < p->n_state; j++) acc += ((int32_t)wr[j] - q->w_rec_zp) * ((int32_t)h[j] - p->hidden_zp);
  return lstm_sat16(a + lstm_sat16(bt_mbqm(acc, q->rec_mult, q->rec_shift)));
}

/* one time step of one batch row: the new hidden values go to out_row first (every gate of the row
   reads the old hidden state), then into the hidden state */
static void lstm_row(const bt_lstm_params *p, const int8_t *x, int8_t *h, int16_t *c, int8_t *out_row) {
  for (int32_t o = 0; o < p->n_state; o++) {
    const int32_t f = lstm_sigmoid(p->sigmoid_table, lstm_gate(&p->forget, p, x, h, o));
    const int32_t i = lstm_sigmoid(p->sigmoid_table, lstm_gate(&p->input, p, x, h, o));
    const int32_t g = lstm_tanh(p->sigmoid_table, lstm_gate(&p->cell, p, x, h, o), -12);
    const int32_t og = lstm_sigmoid(p->sigmoid_table, lstm_gate(&p->output, p, x, h, o));
    const int32_t fc = lstm_sat16(bt_mbqm(f * c[o], p->forget_mult, p->forget_shift));
    const int32_t ic = lstm_sat16(bt_mbqm(i * g, p->input_mult, p->input_shift));
    int32_t cell = lstm_sat16(fc + ic);
    if (p->cell_clip > 0) cell = bt_clamp(cell, -p->cell_clip, p->cell_clip);
    c[o] = (int16_t)cell;
    const int32_t t = lstm_tanh(p->sigmoid_table, cell, p->cell_power);
    out_row[o] = (int8_t)bt_clamp(bt_mbqm(t * og, p->output_mult, p->output_shift) + p->hidden_zp, -128, 127);
  }
  for (int32_t o = 0; o < p->n_state; o++) h[o] = out_row[o];
}

void bt_lstm_s8(const bt_lstm_params *p, const int8_t *in, int8_t *hidden, int16_t *cell, int8_t *out) {
  for (int32_t a = 0; a < (p->time_major ? p->steps : p->batch); a++)
    for (int32_t b = 0; b < (p->time_major ? p->batch : p->steps); b++) {
      const int32_t row = a * (p->time_major ? p->batch : p->steps) + b;  /* position in the input/output */
      const int32_t state = p->time_major ? b : a;                          /* batch row of the state */
      lstm_row(p, in + row * p->n_input, hidden + state * p->n_state, cell + state * p->n_state,
               out + row * p->n_state);
    }
}
