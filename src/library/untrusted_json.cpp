#include "untrusted_json.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

// Thrown by the parser callback at the bracket that opens one level too many.
struct TooDeep {};

// What a JSON number may be made of (RFC 8259 §6).
constexpr std::string_view kNumberBytes = "+-0123456789.eE";

// Where the parser stopped in `text` for a reason other than syntax: the bracket that opens level
// kMaxJsonDepth + 1, or the first byte of a number beyond the range of a double (nlohmann-json
// reads every number that does not fit a 64-bit integer as a double, with strtod, and refuses
// infinity). All of `text` before that point is valid JSON, in which a bracket outside a string
// opens or closes a level, a string ends at the first '"' not escaped by a '\', and a number
// outside a string starts with '-' or a digit; so the first of the two is where it stopped.
std::uint64_t stop_offset(std::string_view text) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const std::string number(text.substr(i, text.find_first_not_of(kNumberBytes, i) - i));
      if (!std::isfinite(std::strtod(number.c_str(), nullptr))) return i;
      i += number.size() - 1;
    }
  }
  return text.size();  // not reached: the parser stopped inside `text`
}

// nlohmann-json's message of a syntax error. Up to "last read: '" it is nlohmann-json's own
// words (where, and what the lexer saw); then comes the token it stopped in, which can be the
// rest of the file and hold any text, then maybe "'; expected …": that tail goes through
// quote_json whole, as no end of the token can be told apart from text inside it.
std::string syntax_error(const nlohmann::json::parse_error& e) {
  const std::string_view what = e.what();
  constexpr std::string_view kLastRead = "last read: '";
  const std::size_t at = what.find(kLastRead);
  if (at == std::string_view::npos) return printable(what);
  const std::size_t tail = at + kLastRead.size();
  return printable(what.substr(0, tail)) + quote_json(what.substr(tail));
}

}  // namespace

nlohmann::json parse_untrusted_json(std::string_view text, const std::string& file,
                                    std::string_view refusal) {
  // The callback sees each array or object open with `depth`, the number of levels around it.
  const nlohmann::json::parser_callback_t limit = [](int depth, nlohmann::json::parse_event_t event,
                                                     nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::array_start ||
         event == nlohmann::json::parse_event_t::object_start) &&
        depth >= kMaxJsonDepth) {
      throw TooDeep{};
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, limit);
  } catch (const nlohmann::json::parse_error& e) {
    throw ParseError(file, e.byte > 0 ? e.byte - 1 : 0,
                     fmt::format("{}: not JSON ({})", refusal, syntax_error(e)));
  } catch (const nlohmann::json::out_of_range&) {
    // 406, "number overflow": the only one the text parser raises. Its message quotes the whole
    // number, so the problem is told here with a part of it.
    const std::uint64_t at = stop_offset(text);
    const std::string_view number = text.substr(at, text.find_first_not_of(kNumberBytes, at) - at);
    throw ParseError(file, at,
                     fmt::format("{}: not JSON (a number beyond the range of a double: {})",
                                 refusal, quote_json(number)));
  } catch (const TooDeep&) {
    throw ParseError(
        file, stop_offset(text),
        fmt::format("{}: JSON nested more than {} levels deep", refusal, kMaxJsonDepth));
  }
}

std::string quote_json(std::string_view text) {
  if (text.size() <= kMaxQuotedJsonBytes) return printable(text);
  std::size_t cut = kMaxQuotedJsonBytes;
  // Back off from the middle of a UTF-8 sequence: continuation bytes are 10xxxxxx.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return printable(text.substr(0, cut)) + "…";
}

}  // namespace ggufs
