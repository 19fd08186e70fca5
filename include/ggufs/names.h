// How key and tensor names become file names, and how file-derived text is made safe to print.
#pragma once

#include <string>
#include <string_view>

namespace ggufs {

/// The file name under which a key or tensor named `name` appears. A usable name is kept as it
/// is; otherwise percent-escapes are applied: '%' → "%25", '/' → "%2F", NUL and other control
/// bytes → "%XX"; an empty name becomes "%", and "." / ".." become "%2E" / "%2E%2E". '%' is
/// always escaped, so two distinct names never map to the same file name. The result never
/// contains '/' or NUL and is never "", "." or "..".
std::string file_name_for(std::string_view name);

/// `s` with control bytes and DEL escaped as \xNN (and backslash as \\) so that text from a
/// file cannot inject terminal sequences into messages and logs.
std::string printable(std::string_view s);

}  // namespace ggufs
