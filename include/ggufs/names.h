// How key and tensor names become file names, and how file-derived text is made safe to print.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ggufs {

/// The file name under which a key or tensor named `name` appears. A usable name is kept as it
/// is; otherwise percent-escapes are applied: '%' → "%25", '/' → "%2F", NUL and other control
/// bytes → "%XX"; an empty name becomes "%", and "." / ".." become "%2E" / "%2E%2E". '%' is
/// always escaped, so two distinct names never map to the same file name. The result never
/// contains '/' or NUL and is never "", "." or "..".
std::string file_name_for(std::string_view name);

/// Longest file name the kernel accepts (NAME_MAX): a longer one cannot be looked up, and one
/// above 1024 bytes makes the kernel refuse the whole directory listing.
inline constexpr std::size_t kMaxFileNameBytes = 255;

/// The file name of metadata entry `index` (0-based, file order) with key `key`:
/// file_name_for(key) when that fits in `max_bytes` (at least 230); else its first at most 200
/// bytes (never cut inside a %XX escape or a UTF-8 character), then "%~" and `index` in decimal.
/// No other file name contains "%~" (every other '%' starts a %XX escape), so names stay unique.
/// A caller that appends to the name (unique_names' "~N") passes a smaller `max_bytes`.
std::string key_file_name(std::string_view key, std::size_t index,
                          std::size_t max_bytes = kMaxFileNameBytes);

/// Whether `s` is a sha256 digest written as 64 lower-case hex digits, as the chunk cache names
/// its key folders and Ollama its blobs (blobs/sha256-<hex>): a name that cannot reach outside
/// its folder.
bool is_sha256_hex(std::string_view s);

/// `s` with control bytes and DEL escaped as \xNN (and backslash as \\) so that text from a
/// file cannot inject terminal sequences into messages and logs.
std::string printable(std::string_view s);

/// Length in bytes of the well-formed UTF-8 sequence of 2 to 4 bytes that starts `s`, or 0 when
/// `s` does not start with one (RFC 3629 §4: no overlong forms, no surrogates, nothing above
/// U+10FFFF). ASCII bytes are not sequences here: 0 for them too.
std::size_t utf8_sequence_length(std::string_view s);

/// Whether all of `s` is well-formed UTF-8 (utf8_sequence_length's rules; ASCII included).
bool is_utf8(std::string_view s);

/// `s` with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD, one
/// replacement per byte (as gguf.json writes names). Formats whose names must be Unicode text
/// (JSON keys) take this; two different names can then become the same text, hence
/// unique_names.
std::string valid_utf8(std::string_view s);

/// Names made distinct, in order: `names[i]` stays as it is unless an earlier name is the same
/// text; such a repeat becomes NAME~N, with the smallest N >= 2 that is neither one of `names`
/// nor given out already. Used wherever distinct things must get distinct names after a lossy
/// mapping (library folders after escaping; safetensors keys after valid_utf8).
std::vector<std::string> unique_names(std::vector<std::string> names);

/// Appends `s` to `out` escaped as the inside of a JSON string (\\ \" \n \r \t \b \f, other
/// control bytes as \u00XX); bytes ≥ 0x80 are copied as they are.
void append_json_escaped(std::string& out, std::string_view s);

/// Appends `s` to `out` as a JSON string, quotes included: escaped as append_json_escaped does,
/// and every byte that is not part of well-formed UTF-8 (RFC 3629: no overlong forms, no
/// surrogates, at most U+10FFFF) replaced by U+FFFD, byte by byte (as valid_utf8 does), so the
/// text is valid UTF-8 (RFC 8259 §8.1) for any input.
void append_json_string(std::string& out, std::string_view s);

}  // namespace ggufs
