// Opening a model: one GGUF file, or every shard of a split model (llama.cpp's gguf-split,
// the GGUF specification, ggml docs/gguf.md) presented as one file.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/gguf.h"

namespace ggufs {

/// A shard file name, `<prefix>-NNNNN-of-MMMMM.gguf` (5 digits each, counting from 1).
struct SplitName {
  std::string prefix;        ///< everything before "-NNNNN-of-MMMMM.gguf", directory included
  std::uint32_t number = 0;  ///< NNNNN: 1-based
  std::uint32_t count = 0;   ///< MMMMM
};

/// The split name of `path`, or nullopt when it does not follow the pattern (or NNNNN is 0 or
/// above MMMMM).
std::optional<SplitName> parse_split_name(const std::string& path);

/// The path of shard `number` (1-based) of `count`: `<prefix>-NNNNN-of-MMMMM.gguf`.
std::string shard_path(const std::string& prefix, std::uint32_t number, std::uint32_t count);

/// An opened, parsed and validated model; sources[i] serves GgufFile::shards[i] (one source for
/// a single file).
struct Model {
  std::vector<std::unique_ptr<ByteSource>> sources;
  GgufFile file;
  /// The vision projector paired with the model (attach_projector), or nullptr. Shared, never
  /// modified: the models of a library that pair with one projector hold one parsed copy.
  std::shared_ptr<const Model> projector;
  /// Why a model that has a projector beside it is served without one (a library found several,
  /// or the one it found does not open or is none): one line, else empty.
  std::string unpaired;
};

/// Pairs `model` with its vision projector: llama.cpp's mmproj GGUF, which
/// convert_hf_to_gguf.py --mmproj writes for a vision-language model beside the text model
/// (conversion/base.py, MmprojModel: general.architecture "clip", gguf-py's MODEL_ARCH.MMPROJ;
/// clip.* keys, v.* and mm.* tensors). Throws ParseError naming the projector's file when its
/// general.architecture is not "clip", or its byte order is not the model's. Requires a model
/// without a projector; a projector is a single model, not itself paired.
void attach_projector(Model& model, Model projector);
/// The same with a projector that other models may share (it is not modified). Requires
/// `projector` not null.
void attach_projector(Model& model, std::shared_ptr<const Model> projector);

/// A model and its projector as one file for the read path and the folder views: `model.file`
/// (header and keys; its tensors at their own indices) with the projector's tensors after them,
/// each one's `shard` moved past the model's sources, so that shard i is source i of the pair
/// (the model's sources, then the projector's: sources_of_pair); `shards` names every source, for
/// messages. Requires model.projector.
GgufFile paired_file(const Model& model);

/// Opens the file named `path` (throws IoError naming it when it cannot).
using SourceOpener = std::function<std::unique_ptr<ByteSource>(const std::string& path)>;

/// Called before each shard is opened: (1-based shard number, shard count, its path).
using ShardProgress = std::function<void(std::uint32_t, std::uint32_t, const std::string&)>;

/// Opens `path`. A file named like a shard whose split keys say so (split.count > 1), or any
/// file whose split.count is above 1, is opened with all its shards found next to it — from
/// any of them, the first shard's metadata then describes the model. Checked: every shard
/// exists and parses; split.no (uint16, from 0) is the shard's place, split.count (uint16) the
/// same everywhere and equal to the name's count, split.tensors.count (int32) the same
/// everywhere and equal to the total; no tensor name in two shards. The result has the first
/// shard's metadata and every tensor of every shard (TensorInfo::shard says where).
/// Throws IoError (a shard cannot be opened or read: the message names it) or ParseError (file,
/// byte offset, problem; for a mismatch, the shard and key at fault).
/// Each file (the one given, and the other shards by name next to it) is opened with `open`;
/// without one, as a local file (FileSource). open_source (http_source.h) also opens remote
/// names (URLs, s3://, hf://), whose shards are then found next to them the same way.
Model open_model(const std::string& path, const ShardProgress& progress = {},
                 const SourceOpener& open = {});

}  // namespace ggufs
