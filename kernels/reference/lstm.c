/* UNIDIRECTIONAL_SEQUENCE_LSTM, int8 (TFLM's integer LSTM, 8x8->16). See bt_kernels.h. */
#include "bt_kernels.h"
#include "requant.h"

/* sigmoid(i / 24) in unsigned 0.16 fixed point (TFLite's table for its int16 sigmoid and tanh) */
static const uint16_t lstm_sigmoid_table[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

static int32_t lstm_sat16(int32_t v) { return bt_clamp(v, -32768, 32767); }

/* int16 sigmoid of a Q3.12 value -> Q0.15 (input scaled by 3, table step 2^9) */
static int32_t lstm_sigmoid(int32_t x) {
  const int32_t v = x * 3;
  const uint32_t a = (uint32_t)(v < 0 ? -v : v), uh = a >> 9;
  uint32_t r;
  if (uh >= 255) r = 0x7FFFu << 10;
  else r = ((uint32_t)lstm_sigmoid_table[uh] << 9) + (a & 0x1FF) * (uint32_t)(lstm_sigmoid_table[uh + 1] - lstm_sigmoid_table[uh]);
  r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
  return (int16_t)(r >> 10);
}

/* int16 tanh of a value on scale 2^power -> Q0.15 (input scaled by 3 << (15 + power - 3), table step 2^8) */
static int32_t lstm_tanh(int32_t x, int32_t power) {
  int32_t shift = 15 + power - 3, mult = 3;
  if (shift < 0) shift = -shift;
  else { mult = 3 << shift; shift = 0; }
  const int32_t rnd = shift > 0 ? 1 << (shift - 1) : 0;
  const int32_t v = (x * mult + rnd) >> shift;
  const uint32_t a = (uint32_t)(v < 0 ? -v : v), uh = a >> 8;
  int32_t r;
  if (uh >= 255) r = 0xFFFF << 8;
  else r = (int32_t)(((uint32_t)lstm_sigmoid_table[uh] << 8) + (a & 0xFF) * (uint32_t)(lstm_sigmoid_table[uh + 1] - lstm_sigmoid_table[uh]));
  r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return (int16_t)(r >> 8);
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
    const int32_t f = lstm_sigmoid(lstm_gate(&p->forget, p, x, h, o));
    const int32_t i = lstm_sigmoid(lstm_gate(&p->input, p, x, h, o));
    const int32_t g = lstm_tanh(lstm_gate(&p->cell, p, x, h, o), -12);
    const int32_t og = lstm_sigmoid(lstm_gate(&p->output, p, x, h, o));
    const int32_t fc = lstm_sat16(bt_mbqm(f * c[o], p->forget_mult, p->forget_shift));
    const int32_t ic = lstm_sat16(bt_mbqm(i * g, p->input_mult, p->input_shift));
    int32_t cell = lstm_sat16(fc + ic);
    if (p->cell_clip > 0) cell = bt_clamp(cell, -p->cell_clip, p->cell_clip);
    c[o] = (int16_t)cell;
    const int32_t t = lstm_tanh(cell, p->cell_power);
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
