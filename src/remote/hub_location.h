// hf:// names: files of Hugging Face Hub repositories.
#pragma once

#include <string>

#include "ggufs/remote_location.h"

namespace ggufs {

/// Resolves hf://[datasets/|spaces/]OWNER/REPO[@REVISION]/PATH as huggingface_hub's file
/// system names files: ${HF_ENDPOINT:-https://huggingface.co}/[datasets/|spaces/]OWNER/REPO/
/// resolve/REVISION/PATH, REVISION "main" by default and percent-encoded (refs/pr/1 →
/// refs%2Fpr%2F1). The token is the one huggingface_hub's get_token() picks: HF_TOKEN, else the
/// file HF_TOKEN_PATH, else $HF_HOME/token (HF_HOME default ${XDG_CACHE_HOME:-~/.cache}/
/// huggingface), CR and LF removed and surrounding whitespace stripped; none is fine (public
/// repositories). Throws IoError naming `name` when it is malformed.
RemoteLocation resolve_hf(const std::string& name, const EnvLookup& env);

/// Percent-encodes `s` for a URL path: unreserved characters (RFC 3986 section 2.3) stay, and
/// '/' too when `keep_slash`.
std::string percent_encode(const std::string& s, bool keep_slash);

}  // namespace ggufs
