// The architecture table (hf_architectures.h): its rows come from each family's file under
// architectures/ (table.h); here, the lookups over them.
#include "hf_architectures.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <iterator>

#include "architectures/table.h"

namespace ggufs::hf {
namespace {

std::vector<Architecture> build() {
  std::vector<Architecture> rows;
  for (const auto add_family : table::kFamilies) add_family(rows);
  return rows;
}

}  // namespace

const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> rows = build();
  return rows;
}

const Architecture* find_architecture(std::string_view model_type, std::string_view gguf_arch) {
  const Architecture* first = nullptr;
  for (const Architecture& a : architectures()) {
    if (a.model_type != model_type) continue;
    if (a.gguf_arch == gguf_arch) return &a;
    if (!first) first = &a;
  }
  return first;
}

std::optional<std::pair<std::uint64_t, std::string_view>> layer_of(std::string_view name,
                                                                   std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  const std::size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 19) return std::nullopt;
  if (dot > 1 && name[0] == '0') return std::nullopt;
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < dot; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(name[i] - '0');  // 19 digits fit in 64 bits
  }
  return std::pair{n, name.substr(dot + 1)};
}

std::vector<std::uint64_t> layers_holding(const GgufFile& file, std::string_view tensor,
                                          std::uint64_t count, std::string_view prefix) {
  std::vector<std::uint64_t> out;
  for (const TensorInfo& t : file.tensors) {
    const auto l = layer_of(t.name, prefix);
    if (l && l->first < count && l->second == tensor) out.push_back(l->first);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// A count key `<arch>.<suffix>` of the file (an unsigned or non-negative integer), or nullopt.
std::optional<std::uint64_t> count_key(const GgufFile& file, std::string_view arch,
                                       std::string_view suffix) {
  for (const KeyValue& kv : file.kv) {
    if (kv.key.size() != arch.size() + 1 + suffix.size() || !kv.key.starts_with(arch) ||
        kv.key[arch.size()] != '.' || !kv.key.ends_with(suffix)) {
      continue;
    }
    if (const auto* u = std::get_if<std::uint64_t>(&kv.value.data)) return *u;
    if (const auto* i = std::get_if<std::int64_t>(&kv.value.data); i && *i >= 0) {
      return static_cast<std::uint64_t>(*i);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// The layers (below their count) of each layer prefix of `row`'s files: "blk." or, for an
// encoder-decoder, "enc.blk." and "dec.blk." (t5.py, T5Model).
struct LayerSet {
  std::string_view prefix;
  std::uint64_t count;
};
std::vector<LayerSet> layer_sets(const Architecture& row, std::uint64_t blocks,
                                 const GgufFile& file) {
  if (row.decoder_prefix.empty()) return {{"blk.", blocks}};
  return {{"enc.blk.", blocks},
          {"dec.blk.", count_key(file, row.gguf_arch, "decoder_block_count").value_or(blocks)}};
}

}  // namespace

RowChoice with_layer_tensors(const Architecture* row, const GgufFile& file) {
  if (!row) return {};
  const auto blocks = count_key(file, row->gguf_arch, "block_count");
  if (!blocks) return {row, ""};
  const Architecture* chosen = row;
  for (const Architecture& a : architectures()) {
    if (a.gguf_arch != row->gguf_arch || a.required_tensor.empty() || !a.required_key.empty()) {
      continue;
    }
    for (const LayerSet& set : layer_sets(a, *blocks, file)) {
      const std::vector<std::uint64_t> have =
          layers_holding(file, a.required_tensor, set.count, set.prefix);
      if (!have.empty() && have.back() >= a.required_from_layer) chosen = &a;
    }
    if (chosen != row) break;
  }
  if (chosen->required_tensor.empty()) return {chosen, ""};
  // The chosen row's tensor in every layer that needs it. Every layer from required_from_layer:
  // the first one lacking it lies within have.size() + 1 steps, whatever the block count says.
  for (const LayerSet& set : layer_sets(*chosen, *blocks, file)) {
    const std::vector<std::uint64_t> have =
        layers_holding(file, chosen->required_tensor, set.count, set.prefix);
    auto lacks = [&](std::uint64_t l) { return !std::binary_search(have.begin(), have.end(), l); };
    std::optional<std::uint64_t> missing;
    if (chosen->required_with.empty()) {
      for (std::uint64_t l = chosen->required_from_layer; l < set.count && !missing; ++l) {
        if (lacks(l)) missing = l;
      }
    } else {
      for (const std::uint64_t l :
           layers_holding(file, chosen->required_with, set.count, set.prefix)) {
        if (lacks(l)) {
          missing = l;
          break;
        }
      }
    }
    if (missing) {
      return {nullptr,
              fmt::format("no tensor '{}{}.{}': {} needs it in every layer{}{}", set.prefix,
                          *missing, chosen->required_tensor, chosen->class_name,
                          chosen->required_with.empty() ? "" : " holding ", chosen->required_with)};
    }
  }
  return {chosen, ""};
}

namespace {

// A layer group's tensors that the row's entries name, each with whether it is required
// (WeightEntry::optional).
struct GroupNames {
  std::uint8_t choice = 0;
  std::string_view layer_type;
  std::vector<std::pair<std::string_view, bool>> names;
  // The first required tensor (the first, where none is).
  std::string_view first() const {
    for (const auto& entry : names) {
      if (entry.second) return entry.first;
    }
    return names.front().first;
  }
};

std::vector<GroupNames> group_names(const Architecture& row, std::span<const WeightEntry> entries) {
  std::vector<GroupNames> out;
  for (const LayerGroup& g : row.layer_groups) {
    GroupNames group{g.choice, g.layer_type, {}};
    for (const std::string_view name : g.tensors) {
      const auto e = std::find_if(entries.begin(), entries.end(), [&](const WeightEntry& w) {
        return w.gguf == name || w.then[0] == name || w.then[1] == name;
      });
      if (e != entries.end()) group.names.emplace_back(name, !e->optional);
    }
    if (!group.names.empty()) out.push_back(std::move(group));
  }
  return out;
}

// The first tensor of `group` layer `tensors` holds, else nullptr.
const std::string_view* held_of(const GroupNames& group, const LayerTensors& tensors) {
  for (const auto& entry : group.names) {
    if (tensors.contains(entry.first)) return &entry.first;
  }
  return nullptr;
}

// Layer n's fault against the row's groups (LayerGroup): a group held in part, the group of the
// layer's kind in `kinds` not held, or no group of a choice held; else "".
std::string kind_fault(const Architecture& row, std::string_view prefix, std::uint64_t n,
                       std::size_t count, const LayerTensors& tensors,
                       const std::vector<GroupNames>& groups, const LayerKinds& kinds) {
  auto path = [&](std::string_view name) { return fmt::format("'{}{}.{}'", prefix, n, name); };
  for (const GroupNames& g : groups) {
    const std::string_view* held = held_of(g, tensors);
    for (const auto& [name, required] : g.names) {
      if (held && required && !tensors.contains(name)) {
        return fmt::format("layer {} of {} has no {}, which {} builds in every layer holding {}", n,
                           count, path(name), row.class_name, path(*held));
      }
    }
  }
  for (const LayerKinds::Axis& axis : kinds.axes) {
    if (n >= axis.of_layer.size()) continue;
    for (const GroupNames& g : groups) {
      if (g.layer_type.empty() || axis.of_layer[n] != g.layer_type || held_of(g, tensors)) continue;
      return fmt::format("layer {} of {} has no {}, which {} builds in every '{}' layer of {}", n,
                         count, path(g.first()), row.class_name, g.layer_type, axis.field);
    }
    // A group a layer may lack (choice 0) of a kind the row's layer_types gives, held by a layer
    // of its other kind: a tensor the class does not build there (GlmMoeDsaAttention: no indexer
    // in a "shared" layer).
    const LayerTypes& lt = row.layer_types;
    if (lt.empty() || axis.field != lt.field || axis.of_layer[n].empty()) continue;
    for (const GroupNames& g : groups) {
      if (g.choice != 0 || (g.layer_type != lt.nonzero && g.layer_type != lt.zero) ||
          axis.of_layer[n] == g.layer_type) {
        continue;
      }
      if (const std::string_view* held = held_of(g, tensors)) {
        return fmt::format(
            "layer {} of {} holds {}, which {} builds only in '{}' layers of {} "
            "(this one is '{}')",
            n, count, path(*held), row.class_name, g.layer_type, axis.field, axis.of_layer[n]);
      }
    }
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::uint8_t choice = groups[i].choice;
    auto of_choice = [&](const GroupNames& g) { return g.choice == choice; };
    if (choice == 0 || std::find_if(groups.begin(), groups.end(), of_choice) != groups.begin() + i)
      continue;  // a group a layer may lack, or a choice seen
    if (std::any_of(groups.begin() + i, groups.end(),
                    [&](const GroupNames& g) { return of_choice(g) && held_of(g, tensors); })) {
      continue;
    }
    std::string none;
    for (auto g = groups.begin() + i; g != groups.end(); ++g) {
      if (of_choice(*g)) none += fmt::format("{}{}", none.empty() ? "" : " nor ", path(g->first()));
    }
    return fmt::format("layer {} of {} has no {}: {} builds one of them in every layer", n, count,
                       none, row.class_name);
  }
  return "";
}

}  // namespace

std::string uneven_layer(const Architecture& row, std::string_view prefix, const Layers& layers,
                         std::span<const WeightEntry> entries, const LayerKinds& kinds) {
  if (layers.empty()) return "";
  // Not a structured binding: clang 14 does not capture one in a lambda.
  const std::uint64_t first = layers.begin()->first;
  const auto& first_tensors = layers.begin()->second;
  const std::vector<GroupNames> groups = group_names(row, entries);
  auto is_varying = [&](std::string_view name) {
    return std::any_of(row.layer_groups.begin(), row.layer_groups.end(), [&](const LayerGroup& g) {
      return std::find(g.tensors.begin(), g.tensors.end(), name) != g.tensors.end();
    });
  };
  // An entry of the same HF name held instead (granitehybrid's shared MLP: ffn_gate_shexp with
  // experts, ffn_gate without) stands in for a required one.
  auto stood_in = [&](const WeightEntry& e) {
    return std::any_of(entries.begin(), entries.end(), [&](const WeightEntry& other) {
      return other.hf == e.hf && first_tensors.contains(other.gguf);
    });
  };
  // Each name every layer must agree on, with whether the first layer holds it.
  std::vector<std::pair<std::string_view, bool>> names;
  for (const WeightEntry& e : entries) {
    for (const std::string_view name : {e.gguf, e.then[0], e.then[1]}) {
      if (name.empty() || is_varying(name)) continue;
      const bool held = first_tensors.contains(name);
      if (!held && !e.optional && !stood_in(e)) {
        return fmt::format("layer {} of {} has no '{}{}.{}', which {} builds in every layer", first,
                           layers.size(), prefix, first, name, row.class_name);
      }
      names.emplace_back(name, held);
    }
  }
  for (const auto& [n, tensors] : layers) {
    for (const auto& [name, first_holds] : names) {
      if (tensors.contains(name) == first_holds) continue;
      return first_holds ? fmt::format("layer {} of {} has no '{}{}.{}', which layer {} holds", n,
                                       layers.size(), prefix, n, name, first)
                         : fmt::format("layer {} of {} holds '{}{}.{}', which layer {} has not", n,
                                       layers.size(), prefix, n, name, first);
    }
    std::string why = kind_fault(row, prefix, n, layers.size(), tensors, groups, kinds);
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace ggufs::hf
