// JSON that ggufs does not trust: files in a store that anyone with write access to it may have
// written (Ollama's manifests). Every reader of such JSON goes through parse_untrusted_json, so
// that no document can make ggufs recurse deeper than kMaxJsonDepth, and quotes it in messages
// through quote_json only.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ggufs {

/// The deepest nesting of arrays and objects parse_untrusted_json accepts. nlohmann-json parses
/// without recursion, but copying, comparing and printing a value recurse once per level: at
/// 100 000 levels that overflows a thread's stack. Real documents are far shallower (an OCI image
/// manifest nests 4 levels: the manifest, "layers", a layer, its "annotations"), so 64 refuses
/// nothing real and bounds that recursion to a few kilobytes of stack.
inline constexpr int kMaxJsonDepth = 64;

/// Longest run of bytes of a document that quote_json puts in a message.
inline constexpr std::size_t kMaxQuotedJsonBytes = 64;

/// Parses `text`, the content of file `file`. Throws ParseError naming `file`, its problem
/// starting with `refusal` (e.g. "not an Ollama manifest"): when `text` is not JSON, at the byte
/// offset where its syntax breaks, nlohmann-json's message quoting the file through quote_json,
/// or at the first byte of a number beyond the range of a double; when arrays and objects nest
/// more than kMaxJsonDepth levels, at the byte offset of the bracket that opens level
/// kMaxJsonDepth + 1.
nlohmann::json parse_untrusted_json(std::string_view text, const std::string& file,
                                    std::string_view refusal);

/// Text from an untrusted document, fit for a message: at most kMaxQuotedJsonBytes bytes of `text`
/// (never cut inside a UTF-8 character), then "…" when it was longer, made printable().
std::string quote_json(std::string_view text);

}  // namespace ggufs
