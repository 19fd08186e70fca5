// The config.json under construction (hf_config.cpp, plan_config), as the steps of config.json
// and a family's quirks (hf_architectures.h, ConfigQuirk) see it. Internal to the hf layer.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ggufs/gguf.h"
#include "hf_architectures.h"
#include "hf_plan.h"

namespace ggufs::hf {

/// The config under construction: its fields, and for each field set from a key the GGUF key
/// that set it and what it must hold.
struct ConfigFields {
  const GgufFile& file;
  const Architecture& row;
  std::string arch;     ///< general.architecture
  std::string updated;  ///< the name load_gguf_checkpoint puts in place of `arch` in str values
  nlohmann::json& config;
  std::map<std::string, std::string> source;
  std::map<std::string, ValueKind> kinds;
  std::uint64_t layers = 0;  ///< block_count as config.json holds it, at most 65536
  const Value* find(std::string_view key) const { return find_key(file, key); }
  const Value* find_arch(std::string_view suffix) const {
    return find(fmt::format("{}.{}", arch, suffix));
  }
  auto finder() const {
    return [this](std::string_view key) { return find(key); };
  }
};

/// A GGUF value as load_gguf_checkpoint holds it (str values with `arch` replaced by `updated`):
/// a list of its parsed parts, unwrapped when there is exactly one.
nlohmann::json field_json(const Value& v, std::string_view arch, std::string_view updated);

/// A JSON integer above 0 (a bool is not one).
bool is_positive(const nlohmann::json& j);

/// Config field `field` where it holds a count, else 0.
std::uint64_t count_field(const nlohmann::json& config, const std::string& field);

/// The config field of `row`'s keys for GGUF key suffix `gguf`, or "".
std::string field_for(const Architecture& row, std::string_view gguf);

}  // namespace ggufs::hf
