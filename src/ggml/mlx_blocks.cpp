// ggml blocks in MLX's quantized form (ggufs/mlx_blocks.h). Each type's unpacker reads one block
// (layouts: src/ggml/README.md §6–§11) into its quants in element order and its groups' scales;
// one bit writer then packs the row as MLX does (mlx/ops.cpp affine_quantize: element i at bits
// [i·bits, (i+1)·bits) of the row, least significant bit first). The scales are ggml's own float32
// products (d·sc as ggml's dequantize_row_q4_K forms it), so MLX's scale·q + bias equals ggml's
// value; the unit and MLX tests (tests/unit/unit_mlx_blocks.cpp, tests/python/test_mlx_blocks.py)
// check that against ggml's reference output.
#include "ggufs/mlx_blocks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>

#include "block_fields.h"
#include "le_load.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ggufs {

namespace {

using kernels::load_half;
using kernels::load_u32;
using kernels::load_u64;

// One block's quants in element order and its groups' scales (affine: float scale and bias; the
// FP4 modes: the scale byte). False when the block has no exact MLX form. The unpackers of the
// rows marked `packs` write the block's packed words themselves (`words`, where not null: whole
// words of the row's stream) and never `q`, a word at a time rather than a bit writer's value at
// a time (the read path of mlx/ spent three quarters of its time packing Q4_K values one by one);
// the others write `q`. The `packs` unpackers also take null `scales` and `biases` (a read of the
// packed weight alone), the others always get them.
struct BlockOut {
  std::uint8_t* q;
  float* scales;
  float* biases;
  std::uint8_t* scale_bytes;
  std::uint32_t* words;
};
using Unpack = bool (*)(const std::uint8_t* block, const BlockOut& out);

// Group g's affine scale and bias, where the reader wants them.
void put_scale(const BlockOut& out, int g, float scale, float bias) {
  if (out.scales) {
    out.scales[g] = scale;
    out.biases[g] = bias;
  }
}

#if defined(__SSE2__)
// The low nibbles (`high` false) or high ones of 16 bytes, each pair (2j, 2j + 1) as byte j's
// low and high nibble, in the low byte of 16-bit lane j (the high byte zero), for packus.
__m128i nibble_pairs(__m128i v, bool high) {
  const __m128i nibbles = _mm_set1_epi8(0x0F);
  if (high) v = _mm_srli_epi16(v, 4);
  v = _mm_and_si128(v, nibbles);
  return _mm_and_si128(_mm_or_si128(v, _mm_srli_epi16(v, 4)), _mm_set1_epi16(0x00FF));
}
#else
// MLX's word of eight 4-bit values (value i at bits 4i): the low (`shift` 0) or high (4) nibbles
// of bytes p[0..7], gathered pairwise in one 64-bit register.
std::uint32_t nibble_word(const std::uint8_t* p, int shift) {
  std::uint64_t x = (load_u64(p) >> shift) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | x >> 4) & 0x00FF00FF00FF00FFULL;
  x = (x | x >> 8) & 0x0000FFFF0000FFFFULL;
  return static_cast<std::uint32_t>(x | x >> 16);
}
#endif

// The words of kBytes (16 or 32) bytes of 4-bit pairs: kBytes / 8 words of their low nibbles,
// then kBytes / 8 of their high ones (MLX's word: value i at bits 4i); with SSE2 (x86-64's
// baseline, so no dispatch), 16 bytes a register, the pairs joined by packus; elsewhere
// nibble_word, a word at a time.
template <int kBytes>
void nibble_words(const std::uint8_t* p, std::uint32_t* words) {
#if defined(__SSE2__)
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (kBytes == 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(words),
                     _mm_packus_epi16(nibble_pairs(a, false), nibble_pairs(a, true)));
  } else {
    static_assert(kBytes == 32);
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(words),
                     _mm_packus_epi16(nibble_pairs(a, false), nibble_pairs(b, false)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(words + 4),
                     _mm_packus_epi16(nibble_pairs(a, true), nibble_pairs(b, true)));
  }
#else
  for (int k = 0; k < kBytes / 8; ++k) {
    words[k] = nibble_word(p + 8 * k, 0);
    words[kBytes / 8 + k] = nibble_word(p + 8 * k, 4);
  }
#endif
}

// Q4_0 and Q4_1's 16 bytes of quants: elements 0–15 their low nibbles, 16–31 their high ones.
void four_bit_block(const std::uint8_t* qs, const BlockOut& out) {
  if (out.words) nibble_words<16>(qs, out.words);
}

// The forms d·(q − k) written as d·q + (−k·d) (Q4_0, Q5_0, Q8_0, Q8_1, TQ1_0, TQ2_0, Q1_0, Q2_0)
// hold ggml's values for a finite d only: for d = ±inf ggml's (q − k)·d is ±inf, or NaN at q = k,
// while MLX's inf·q + (−inf) is NaN for every q. (A NaN d is NaN both ways; Q4_1, Q5_1, Q4_K and
// Q5_K compute MLX's scale·q + bias themselves, so any d is theirs.)
bool exact_d(float d) { return !std::isinf(d); }

// Q4_0, Q5_0: ggml's f(q − 8)·d and f(q − 16)·d equal d·q + (−8d), d·q + (−16d): d·q and the
// bias are exact (a power of two times d), so the one rounded sum is the exact value ggml's exact
// product gives.
bool unpack_q4_0(const std::uint8_t* b, const BlockOut& out) {
  const float d = load_half(b);
  if (!exact_d(d)) return false;
  four_bit_block(b + 2, out);
  put_scale(out, 0, d, -8.0f * d);
  return true;
}

// The 5-bit quants of Q5_0 (qh at 2, qs at 6) and Q5_1 (at 4, 8): bit j of qh is element j's.
void five_bit_quants(const std::uint8_t* qh_bytes, const std::uint8_t* qs, std::uint8_t* q) {
  const std::uint32_t qh = load_u32(qh_bytes);
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<std::uint8_t>((qs[j] & 15) | ((qh >> j) & 1) << 4);
    q[j + 16] = static_cast<std::uint8_t>((qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4);
  }
}

bool unpack_q5_0(const std::uint8_t* b, const BlockOut& out) {
  const float d = load_half(b);
  if (!exact_d(d)) return false;
  five_bit_quants(b + 2, b + 6, out.q);
  out.scales[0] = d;
  out.biases[0] = -16.0f * d;
  return true;
}

// Q4_1, Q5_1: ggml's f(q)·d + m is MLX's formula itself.
bool unpack_q4_1(const std::uint8_t* b, const BlockOut& out) {
  four_bit_block(b + 4, out);
  if (out.scales) put_scale(out, 0, load_half(b), load_half(b + 2));
  return true;
}

bool unpack_q5_1(const std::uint8_t* b, const BlockOut& out) {
  five_bit_quants(b + 4, b + 8, out.q);
  out.scales[0] = load_half(b);
  out.biases[0] = load_half(b + 2);
  return true;
}

// Q8_0 (qs at 2) and Q8_1 (qs at 4; its s is unused): the signed quant q stored as q + 128 (its
// byte with the top bit flipped); d·(q + 128) (at most 19 significant bits) and −128d are exact,
// so their sum is ggml's exact f(q)·d.
template <int kQs>
bool unpack_q8(const std::uint8_t* b, const BlockOut& out) {
  const float d = load_half(b);
  if (!exact_d(d)) return false;
  if (out.words) {  // four values a word, byte i of a little-endian word value i
    for (int k = 0; k < 8; ++k) out.words[k] = load_u32(b + kQs + 4 * k) ^ 0x80808080u;
  }
  put_scale(out, 0, d, -128.0f * d);
  return true;
}

// Q4_K (qs at 16) and Q5_K (qh at 16, qs at 48): eight groups of 32 with scale d·sc and bias
// −dmin·mn, ggml's float32 products (dequantize_row_q4_K's d1 and m1); ggml's d1·q − m1 and
// MLX's d1·q + (−m1) round the same exact product and difference.
template <bool kFifthBit>
bool unpack_k(const std::uint8_t* b, const BlockOut& out) {
  const float d = load_half(b);
  const float dmin = load_half(b + 2);
  const std::uint8_t* scales = b + 4;
  const std::uint8_t* qh = b + 16;
  const std::uint8_t* qs = kFifthBit ? b + 48 : b + 16;
  if (out.scales) {
    for (int g = 0; g < 8; ++g) {
      const kernels::ScaleMin sm = kernels::scale_min_k4(scales, g);
      put_scale(out, g, d * static_cast<float>(sm.sc), -(dmin * static_cast<float>(sm.mn)));
    }
  }
  // Groups 2h and 2h + 1: the low and high nibbles of qs[32h ..], fifth bits 2h and 2h + 1 of
  // qh[l].
  if (!kFifthBit) {  // Q4_K packs its own words (Row::packs)
    if (out.words) {
      for (int h = 0; h < 4; ++h) nibble_words<32>(qs + 32 * h, out.words + 8 * h);
    }
    return true;
  }
  for (int g = 0; g < 8; ++g) {
    for (int l = 0; l < 32; ++l) {
      int q = (qs[32 * (g / 2) + l] >> (4 * (g % 2))) & 15;
      q |= ((qh[l] >> g) & 1) << 4;
      out.q[32 * g + l] = static_cast<std::uint8_t>(q);
    }
  }
  return true;
}

// The ternary and two-level types: ggml's f(q − 1)·d equals d·q + (−d) (every term exact).
// `groups` is 256 / 128 or 64 / 64 or 128 / 128: one d per ggml block, repeated per MLX group.
// False where d is infinite (exact_d).
bool scale_minus_d(float d, int groups, const BlockOut& out) {
  for (int g = 0; g < groups; ++g) {
    out.scales[g] = d;
    out.biases[g] = -d;
  }
  return exact_d(d);
}

// TQ1_0: digits of qs[0..31] (elements 32n + m), qs[32..47] (160 + 16n + m), qh[0..3]
// (240 + 4n + m), as ggml's dequantize_row_tq1_0 writes them; q = digit + 1.
bool unpack_tq1_0(const std::uint8_t* b, const BlockOut& out) {
  static constexpr int kRuns[3][4] = {{0, 32, 5, 0}, {32, 16, 5, 160}, {48, 4, 4, 240}};
  for (const auto& run : kRuns) {
    for (int n = 0; n < run[2]; ++n) {
      for (int m = 0; m < run[1]; ++m) {
        out.q[run[3] + run[1] * n + m] =
            static_cast<std::uint8_t>(kernels::ternary_digit(b[run[0] + m], n) + 1);
      }
    }
  }
  return scale_minus_d(load_half(b + 52), 2, out);
}

// TQ2_0: element 128h + 32p + m is bits 2p, 2p + 1 of qs[32h + m]; code 3 decodes as 2d, as in
// ggml.
bool unpack_tq2_0(const std::uint8_t* b, const BlockOut& out) {
  for (int e = 0; e < 256; ++e) {
    out.q[e] = (b[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
  }
  return scale_minus_d(load_half(b + 64), 2, out);
}

// Q1_0: ±d as q = 0 or 2 with bias −d: 0·d − d and 2d − d, both exact.
bool unpack_q1_0(const std::uint8_t* b, const BlockOut& out) {
  for (int j = 0; j < 128; ++j) out.q[j] = ((b[2 + j / 8] >> (j % 8)) & 1) ? 2 : 0;
  return scale_minus_d(load_half(b), 1, out);
}

// Q2_0: element j is bits 2·(j mod 4), +1 of qs[j / 4], already MLX's order.
bool unpack_q2_0(const std::uint8_t* b, const BlockOut& out) {
  for (int j = 0; j < 64; ++j) out.q[j] = (b[2 + j / 4] >> (2 * (j % 4))) & 3;
  return scale_minus_d(load_half(b), 1, out);
}

// MXFP4: ggml's kvalues_mxfp4[c]·2^(e − 128) is the E2M1 value of code c (half the table entry)
// times 2^(e − 127), MLX's mxfp4 (fp_dequantize: E2M1 table, 2^(scale − 127)). The codes are in
// ggml's nibble order (element j low nibble of qs[j], j + 16 its high one). e = 255: ggml reads
// 2^127, MLX 2^128 = inf.
bool unpack_mxfp4(const std::uint8_t* b, const BlockOut& out) {
  if (b[0] == 255) return false;
  out.scale_bytes[0] = b[0];
  for (int j = 0; j < 16; ++j) {
    out.q[j] = b[1 + j] & 15;
    out.q[j + 16] = b[1 + j] >> 4;
  }
  return true;
}

// NVFP4: four sub-blocks of 16 (MLX's nvfp4 group); ggml's kvalues_mxfp4[c]·ue4m3_half(x) is the
// E2M1 value times UE4M3(x), which is E4M3(x) for x < 0x7F; ggml ignores bit 7 and reads 0x7F as
// 0, MLX reads bit 7 as a sign and 0x7F as NaN, so bit 7 is cleared and 0x7F becomes 0x00. 0xFF
// (ggml 480) is above E4M3's 448. Nibble order within each sub-block's 8 bytes.
bool unpack_nvfp4(const std::uint8_t* b, const BlockOut& out) {
  for (int s = 0; s < 4; ++s) {
    if (b[s] == 0xff) return false;
    out.scale_bytes[s] = static_cast<std::uint8_t>((b[s] & 0x7f) == 0x7f ? 0 : b[s] & 0x7f);
    for (int j = 0; j < 8; ++j) {
      out.q[16 * s + j] = b[4 + 8 * s + j] & 15;
      out.q[16 * s + 8 + j] = b[4 + 8 * s + j] >> 4;
    }
  }
  return true;
}

struct Row {
  MlxBlockForm form;
  Unpack unpack;
  bool packs = false;  // the unpacker writes BlockOut::words, not q
};

// In type id order (mlx_block_forms). Groups: ggml's scale span, at most MLX's largest (128).
constexpr Row kRows[] = {
    {{GGML_TYPE_Q4_0, MlxMode::kAffine, 4, 32}, unpack_q4_0, true},
    {{GGML_TYPE_Q4_1, MlxMode::kAffine, 4, 32}, unpack_q4_1, true},
    {{GGML_TYPE_Q5_0, MlxMode::kAffine, 5, 32}, unpack_q5_0},
    {{GGML_TYPE_Q5_1, MlxMode::kAffine, 5, 32}, unpack_q5_1},
    {{GGML_TYPE_Q8_0, MlxMode::kAffine, 8, 32}, unpack_q8<2>, true},
    {{GGML_TYPE_Q8_1, MlxMode::kAffine, 8, 32}, unpack_q8<4>, true},
    {{GGML_TYPE_Q4_K, MlxMode::kAffine, 4, 32}, unpack_k<false>, true},
    {{GGML_TYPE_Q5_K, MlxMode::kAffine, 5, 32}, unpack_k<true>},
    {{GGML_TYPE_TQ1_0, MlxMode::kAffine, 2, 128}, unpack_tq1_0},
    {{GGML_TYPE_TQ2_0, MlxMode::kAffine, 2, 128}, unpack_tq2_0},
    {{GGML_TYPE_MXFP4, MlxMode::kMxfp4, 4, 32}, unpack_mxfp4},
    {{GGML_TYPE_NVFP4, MlxMode::kNvfp4, 4, 16}, unpack_nvfp4},
    {{GGML_TYPE_Q1_0, MlxMode::kAffine, 2, 128}, unpack_q1_0},
    {{GGML_TYPE_Q2_0, MlxMode::kAffine, 2, 64}, unpack_q2_0},
};

constexpr std::size_t kRowCount = std::size(kRows);
constexpr std::array<MlxBlockForm, kRowCount> forms_of_rows() {
  std::array<MlxBlockForm, kRowCount> forms{};
  for (std::size_t i = 0; i < kRowCount; ++i) forms[i] = kRows[i].form;
  return forms;
}
constexpr std::array<MlxBlockForm, kRowCount> kForms = forms_of_rows();

const Row* row_of(std::uint32_t type) {
  for (const Row& r : kRows) {
    if (r.form.type == type) return &r;
  }
  return nullptr;
}

// MLX's bit stream: each value's bits go in above the previous ones; full words go out.
class BitWriter {
 public:
  BitWriter(std::uint32_t* out, std::uint32_t bits) : out_(out), bits_(bits) {}
  void put(std::uint32_t q) {
    acc_ |= std::uint64_t{q} << filled_;
    filled_ += bits_;
    if (filled_ >= 32) {
      *out_++ = static_cast<std::uint32_t>(acc_);
      acc_ >>= 32;
      filled_ -= 32;
    }
  }

 private:
  std::uint32_t* out_;
  std::uint32_t bits_;
  std::uint64_t acc_ = 0;
  std::uint32_t filled_ = 0;
};

void require_size(std::size_t have, std::size_t want, const char* what) {
  if (have != want) {
    throw std::invalid_argument(std::string("encode_mlx_row: ") + what + " holds " +
                                std::to_string(have) + ", the row needs " + std::to_string(want));
  }
}

}  // namespace

std::string_view mlx_mode_name(MlxMode mode) {
  switch (mode) {
    case MlxMode::kAffine:
      return "affine";
    case MlxMode::kMxfp4:
      return "mxfp4";
    case MlxMode::kNvfp4:
      return "nvfp4";
  }
  return "affine";
}

std::span<const MlxBlockForm> mlx_block_forms() { return kForms; }

const MlxBlockForm* mlx_requantized_form(std::uint32_t bits) {
  // The bit widths MLX's affine quantize takes (mlx/ops.cpp, validate_mode_with_type).
  static constexpr MlxBlockForm kRequantized[] = {
      {GGML_TYPE_F32, MlxMode::kAffine, 2, 32}, {GGML_TYPE_F32, MlxMode::kAffine, 3, 32},
      {GGML_TYPE_F32, MlxMode::kAffine, 4, 32}, {GGML_TYPE_F32, MlxMode::kAffine, 5, 32},
      {GGML_TYPE_F32, MlxMode::kAffine, 6, 32}, {GGML_TYPE_F32, MlxMode::kAffine, 8, 32},
  };
  for (const MlxBlockForm& f : kRequantized) {
    if (f.bits == bits) return &f;
  }
  return nullptr;
}

const MlxBlockForm* mlx_block_form(std::uint32_t type) {
  const Row* r = row_of(type);
  return r ? &kForms[static_cast<std::size_t>(r - kRows)] : nullptr;
}

std::size_t mlx_weight_words(const MlxBlockForm& form, std::size_t ne0) {
  return ne0 / 32 * form.bits;
}

std::size_t mlx_groups(const MlxBlockForm& form, std::size_t ne0) { return ne0 / form.group_size; }

MlxRowStatus encode_mlx_row(std::uint32_t type, std::span<const std::uint8_t> blocks,
                            const MlxRow& out) {
  const Row* row = row_of(type);
  const TypeTraits* traits = type_traits(type);
  if (row == nullptr || traits == nullptr) {
    throw std::invalid_argument("encode_mlx_row: ggml type " + std::to_string(type) +
                                " has no exact MLX form");
  }
  const MlxBlockForm& form = row->form;
  if (blocks.size() % traits->type_size != 0) {
    throw std::invalid_argument("encode_mlx_row: " + std::to_string(blocks.size()) +
                                " bytes are not whole " + std::string(traits->name) + " blocks");
  }
  const std::size_t n_blocks = blocks.size() / traits->type_size;
  const std::size_t ne0 = n_blocks * traits->block_size;
  const std::size_t groups = mlx_groups(form, ne0);
  const bool affine = form.mode == MlxMode::kAffine;
  const bool pack = !out.weight.empty();  // empty: the scales (and biases) alone
  // All three empty: the packed weight alone.
  const bool keep_scales = !out.scales.empty() || !out.biases.empty() || !out.scale_bytes.empty();
  if (pack) require_size(out.weight.size(), mlx_weight_words(form, ne0), "weight");
  if (keep_scales || !pack) {
    require_size(out.scales.size(), affine ? groups : 0, "scales");
    require_size(out.biases.size(), affine ? groups : 0, "biases");
    require_size(out.scale_bytes.size(), affine ? 0 : groups, "scale_bytes");
  }

  const std::size_t groups_per_block = traits->block_size / form.group_size;
  const std::size_t words_per_block = traits->block_size / 32 * form.bits;
  std::array<std::uint8_t, 256> q{};
  // Where the scales are not kept, the unpackers that always write them write here (at most 8
  // groups a block: Q5_K's).
  std::array<float, 8> spare_scales{}, spare_biases{};
  std::array<std::uint8_t, 8> spare_scale_bytes{};
  if (groups_per_block > spare_scales.size()) {
    throw std::invalid_argument("encode_mlx_row: more groups a block than the spare scales hold");
  }
  BitWriter writer(out.weight.data(), form.bits);
  for (std::size_t b = 0; b < n_blocks; ++b) {
    const std::size_t g = b * groups_per_block;
    // Only the outputs of the form's mode: the others' spans are empty (null data).
    float* scales = !affine       ? nullptr
                    : keep_scales ? out.scales.data() + g
                    : row->packs  ? nullptr
                                  : spare_scales.data();
    float* biases = !affine       ? nullptr
                    : keep_scales ? out.biases.data() + g
                    : row->packs  ? nullptr
                                  : spare_biases.data();
    std::uint8_t* scale_bytes = affine        ? nullptr
                                : keep_scales ? out.scale_bytes.data() + g
                                              : spare_scale_bytes.data();
    const BlockOut block_out{
        row->packs ? nullptr : q.data(), scales, biases, scale_bytes,
        pack && row->packs ? out.weight.data() + b * words_per_block : nullptr};
    if (!row->unpack(blocks.data() + b * traits->type_size, block_out)) {
      return MlxRowStatus::kNoExactForm;
    }
    if (pack && !row->packs) {
      for (std::uint32_t e = 0; e < traits->block_size; ++e) writer.put(q[e]);
    }
  }
  return MlxRowStatus::kOk;
}

MlxRowStatus quantize_mlx_row(std::span<const float> values, const MlxBlockForm& form,
                              const MlxRow& out) {
  if (form.mode != MlxMode::kAffine || form.group_size == 0 || form.bits == 0 || form.bits > 8) {
    throw std::invalid_argument("quantize_mlx_row: not an affine form of 1 to 8 bits");
  }
  const std::size_t ne0 = values.size();
  if (ne0 % form.group_size != 0 || ne0 % 32 != 0) {
    throw std::invalid_argument("quantize_mlx_row: " + std::to_string(ne0) +
                                " values are not whole groups of " +
                                std::to_string(form.group_size));
  }
  const std::size_t groups = mlx_groups(form, ne0);
  const bool pack = !out.weight.empty();
  if (pack) require_size(out.weight.size(), mlx_weight_words(form, ne0), "weight");
  require_size(out.scales.size(), groups, "scales");
  require_size(out.biases.size(), groups, "biases");
  require_size(out.scale_bytes.size(), 0, "scale_bytes");
  if (!std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); })) {
    return MlxRowStatus::kNotFinite;
  }
  const float n_bins = static_cast<float>((1u << form.bits) - 1);
  constexpr float kEps = 1e-7f;
  BitWriter writer(out.weight.data(), form.bits);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::span<const float> x = values.subspan(g * form.group_size, form.group_size);
    float w_min = std::numeric_limits<float>::infinity(), w_max = -w_min;
    for (const float v : x) {  // MLX's order of std::max and std::min (the sign of a zero)
      w_max = std::max(w_max, v);
      w_min = std::min(w_min, v);
    }
    const bool min_is_edge = std::abs(w_min) > std::abs(w_max);
    float scale = std::max((w_max - w_min) / n_bins, kEps);
    if (!min_is_edge) scale = -scale;
    const float edge = min_is_edge ? w_min : w_max;
    const float q0 = std::rint(edge / scale);
    float bias = 0;
    if (q0 != 0) {
      scale = edge / q0;
      bias = edge;
    }
    out.scales[g] = scale;
    out.biases[g] = bias;
    // MLX's clamp, min(max(q, 0), n_bins); a NaN quotient (a scale that underflowed to 0 where
    // q0 overflowed) becomes 0 rather than an undefined conversion.
    const auto code = [&](float v) {
      const float q = std::rint((v - bias) / scale);
      return q >= 0 ? static_cast<std::uint32_t>(std::min(q, n_bins)) : 0u;
    };
    // Finite values whose range overflows float32 (max − min = inf) make MLX's scale infinite
    // and every dequantized value NaN or infinite. x ↦ code ↦ scale·code + bias is monotonic, so
    // the group's values dequantize finite exactly when its extremes' codes do.
    const auto finite_at = [&](float v) {
      return std::isfinite(scale * static_cast<float>(code(v)) + bias);
    };
    if (!std::isfinite(w_max - w_min) || !std::isfinite(scale) || !finite_at(w_min) ||
        !finite_at(w_max)) {
      return MlxRowStatus::kNotFinite;
    }
    if (!pack) continue;
    for (const float v : x) writer.put(code(v));
  }
  return MlxRowStatus::kOk;
}

}  // namespace ggufs
