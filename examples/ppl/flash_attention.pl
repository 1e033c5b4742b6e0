// flash_attention.pl: attention, out = softmax(q k^T * scale) v, one head
// at a time, in the flash-attention way: the keys in blocks, a running row
// maximum, row sum and output accumulator rescaled per block, so no whole
// score matrix is ever in local memory. fp16 and bf16 inputs, scores and
// accumulator in fp32, probabilities rounded to the input type for the
// second matrix product.
//
// Its block temporaries are declared without a shape (`tensor<fp32> s;`,
// spec §2.6): each takes the shape of the first operation that writes it.
// The running state is filled before its first use, so it has a shape.
//
// q, k, v and out are [batch, seq, heads, dim] in memory (the layout of the
// frameworks); make_gtensor_permute reads them as [heads, seq, batch, dim],
// so one head of one batch is rows of `seq` on the channels.
#include "ppl.h"
#include "ppl_wrapper_func.h"
using namespace ppl;

// Folds one block of keys and values into the state (the body of the
// pipelined loop over key blocks).
template <typename T>
void fold_key_block(tensor<fp32> &m, tensor<fp32> &l, tensor<fp32> &acc, const tensor<T> &q, gtensor<T> &g_k,
                    gtensor<T> &g_v, dim4 &kv_real, dim4 &kv_offset, float scale) {
  enable_pipeline();
  tensor<T> k, v;
  dma::load(k, g_k.sub_view(kv_real, kv_offset));  // [1, bk, 1, dim]
  dma::load(v, g_v.sub_view(kv_real, kv_offset));
  tensor<fp32> s, scaled;
  tiu::fmm2(s, q, k, false, true, false);  // [1, br, 1, bk] = q k^T
  tiu::fmul(scaled, s, scale);
  dim4 scores = scaled.getShape();
  tensor<fp32> block_max, m_new;
  quick_pooling(block_max, scaled, &scores, &scores, -1e30f, 0);  // [1, br, 1, 1]
  tiu::fmax(m_new, m, block_max);
  tensor<fp32> shifted, p;
  tiu::fsub(shifted, scaled, m_new);  // m_new broadcast over W
  exp_no_overflow(p, shifted, &scores, &scores);
  tensor<fp32> block_sum, drop_raw, drop, correction;
  quick_pooling(block_sum, p, &scores, &scores, 0.0f, 1);
  // m - m_new, from -1e30 at the first block: bounded below, so e^x is 0
  // in effect (l and acc are 0 then) without an extreme argument.
  tiu::fsub(drop_raw, m, m_new);
  tiu::fmax(drop, drop_raw, -80.0f);
  dim4 rows = m.getShape();
  exp_no_overflow(correction, drop, &rows, &rows);  // e^(m - m_new) <= 1
  tiu::fmul(l, l, correction);
  tiu::fadd(l, l, block_sum);
  tensor<T> p_narrow;
  tiu::cast(p_narrow, p);
  tensor<fp32> pv;
  tiu::fmm2(pv, p_narrow, v);  // [1, br, 1, dim]
  tiu::fmul(acc, acc, correction);
  tiu::fadd(acc, acc, pv);
  tiu::move(m, m_new);
}

// One block of query rows of one head: the state filled, the key blocks
// folded in, acc / l stored.
template <typename T>
void attend_rows(gtensor<T> &g_out, gtensor<T> &g_q, gtensor<T> &g_k, gtensor<T> &g_v, dim4 &q_real,
                 dim4 &q_offset, int seq_k, int dim, int block_q, int block_k, float scale) {
  // The running maximum m, sum l and unnormalised output acc of the rows.
  const dim4 row_block = {1, block_q, 1, 1}, wide_block = {1, block_q, 1, dim};
  const dim4 rows = {1, q_real.c, 1, 1}, wide = {1, q_real.c, 1, dim};
  auto m = make_tensor<fp32>(row_block, rows);
  auto l = make_tensor<fp32>(row_block, rows);
  auto acc = make_tensor<fp32>(wide_block, wide);
  tiu::fill(m, -1e30f);
  tiu::zero(l);
  tiu::zero(acc);
  tensor<T> q;
  dma::load(q, g_q.sub_view(q_real, q_offset));  // [1, br, 1, dim]
  for (int k0 = 0; k0 < seq_k; k0 += block_k) {
    dim4 kv_real = {1, min(block_k, seq_k - k0), 1, dim};
    dim4 kv_offset = {q_offset.n, k0, q_offset.h, 0};
    fold_key_block(m, l, acc, q, g_k, g_v, kv_real, kv_offset, scale);
  }
  tensor<fp32> o;
  tiu::fdiv(o, acc, l);  // l broadcast over W
  tensor<T> o_narrow;
  tiu::cast(o_narrow, o);
  dma::store(g_out.sub_view(q_real, q_offset), o_narrow);
}

template <typename T>
void flash_attention(T *out, T *q, T *k, T *v, int batch, int heads, int seq_q, int seq_k, int dim, float scale,
                     int block_q, int block_k) {
  const int to_head_major[4] = {2, 1, 0, 3};  // [b, s, h, d] read as [h, s, b, d]
  dim4 q_memory = {batch, seq_q, heads, dim}, kv_memory = {batch, seq_k, heads, dim};
  auto g_q = make_gtensor_permute<T>(q_memory, GLOBAL, q, to_head_major);
  auto g_out = make_gtensor_permute<T>(q_memory, GLOBAL, out, to_head_major);
  auto g_k = make_gtensor_permute<T>(kv_memory, GLOBAL, k, to_head_major);
  auto g_v = make_gtensor_permute<T>(kv_memory, GLOBAL, v, to_head_major);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int q0 = 0; q0 < seq_q; q0 += block_q) {
        dim4 q_real = {1, min(block_q, seq_q - q0), 1, dim};
        dim4 q_offset = {h, q0, b, 0};
        attend_rows(g_out, g_q, g_k, g_v, q_real, q_offset, seq_k, dim, block_q, block_k, scale);
      }
}

__KERNEL__ void flash_attention_f16(fp16 *out, fp16 *q, fp16 *k, fp16 *v, int batch, int heads, int seq_q,
                                    int seq_k, int dim, float scale, const int block_q, const int block_k) {
  flash_attention(out, q, k, v, batch, heads, seq_q, seq_k, dim, scale, block_q, block_k);
}

__KERNEL__ void flash_attention_bf16(bf16 *out, bf16 *q, bf16 *k, bf16 *v, int batch, int heads, int seq_q,
                                     int seq_k, int dim, float scale, const int block_q, const int block_k) {
  flash_attention(out, q, k, v, batch, heads, seq_q, seq_k, dim, scale, block_q, block_k);
}

// Host tests (a __TEST__ program, tests/ppl/flash_attention_check.py
// compares each call's output with numpy): 2 batches, 3 heads, 37 query
// rows in blocks of 16 (the last block short), 45 keys in blocks of 16
// (the last of 13), head size 24.
__TEST__ int flash_attention_test_f16() {
  dim4 q_shape = {2, 37, 3, 24}, kv_shape = {2, 45, 3, 24};
  fp16 *out = malloc<fp16>(&q_shape);
  fp16 *q = rand<fp16>(&q_shape, -2.0f, 2.0f);
  fp16 *k = rand<fp16>(&kv_shape, -2.0f, 2.0f);
  fp16 *v = rand<fp16>(&kv_shape, -1.0f, 1.0f);
  return flash_attention_f16(out, q, k, v, 2, 3, 37, 45, 24, 0.5f, 16, 16);
}

__TEST__ int flash_attention_test_bf16() {
  dim4 q_shape = {2, 37, 3, 24}, kv_shape = {2, 45, 3, 24};
  bf16 *out = malloc<bf16>(&q_shape);
  bf16 *q = rand<bf16>(&q_shape, -2.0f, 2.0f);
  bf16 *k = rand<bf16>(&kv_shape, -2.0f, 2.0f);
  bf16 *v = rand<bf16>(&kv_shape, -1.0f, 1.0f);
  return flash_attention_bf16(out, q, k, v, 2, 3, 37, 45, 24, 0.5f, 16, 16);
}
