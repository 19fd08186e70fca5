// Lookup tables of the i-quants and FP4 types (src/ggml/README.md §8–§11), defined in
// ggml_tables.cpp. Used by the kernels and checked by the tests against the checksums in
// tables/README.md.
#pragma once

#include <array>
#include <cstdint>

namespace ggufs::tables {

/// IQ2_XXS, IQ2_XS, IQ3_XXS: 7-bit sign index → 8 sign bits (tables/ksigns_iq2xs.txt).
extern const std::array<std::uint8_t, 128> kSignsIq2xs;

/// IQ4_NL, IQ4_XS: 4-bit code → value (tables/kvalues_iq4nl.txt).
extern const std::array<std::int8_t, 16> kValuesIq4nl;

/// MXFP4, NVFP4: E2M1 code → value × 2 (tables/kvalues_fp4.txt).
extern const std::array<std::int8_t, 16> kValuesFp4;

/// IQ2_XXS: 8 magnitudes per entry, byte j = element j (tables/iq2xxs_grid.txt).
extern const std::array<std::uint64_t, 256> kIq2xxsGrid;

/// IQ2_XS: 8 magnitudes per entry, byte j = element j (tables/iq2xs_grid.txt).
extern const std::array<std::uint64_t, 512> kIq2xsGrid;

/// IQ2_S: 8 magnitudes per entry, byte j = element j (tables/iq2s_grid.txt).
extern const std::array<std::uint64_t, 1024> kIq2sGrid;

/// IQ3_XXS: 4 magnitudes per entry, byte j = element j (tables/iq3xxs_grid.txt).
extern const std::array<std::uint32_t, 256> kIq3xxsGrid;

/// IQ3_S: 4 magnitudes per entry, byte j = element j (tables/iq3s_grid.txt).
extern const std::array<std::uint32_t, 512> kIq3sGrid;

/// IQ1_S, IQ1_M: 8 signed bytes (−1, 0, +1) per entry, byte j = element j (tables/iq1s_grid.txt).
extern const std::array<std::uint64_t, 2048> kIq1sGrid;

}  // namespace ggufs::tables
