// Tests of what is installed beside the binary: the man page (src/daemon/ggufs.1) is clean mdoc
// and documents exactly the options `ggufs --help` lists, and the bash completion
// (src/daemon/ggufs.bash-completion) completes those options, -o names and operands.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mount_util.h"

namespace ggufs::test {
namespace {

const std::filesystem::path kManPage =
    std::filesystem::path(GGUFS_SOURCE_DIR) / "src/daemon/ggufs.1";
const std::filesystem::path kCompletion =
    std::filesystem::path(GGUFS_SOURCE_DIR) / "src/daemon/ggufs.bash-completion";
const char* const kBashCompletion = "/usr/share/bash-completion/bash_completion";

// fstab options: accepted for mount(8), nothing to offer on a command line.
const std::set<std::string> kFstabOnly = {"auto", "noauto", "nofail", "_netdev", "defaults",
                                          "user", "users",  "nouser", "owner",   "group"};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string help_text() {
  const RunResult r = run(std::string(GGUFS_BINARY) + " --help 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

struct HelpOptions {
  std::set<std::string> flags;          // -h, --help, ..., -o
  std::set<std::string> mount_options;  // the names of -o: read_timeout, allow_other, ...
};

// The options `ggufs --help` lists. Flags start lines indented by 2 to 4 spaces ("  -h, --help",
// "  --info FILE", "    -o allow_other" in libfuse's part); ggufs's -o options start lines
// indented by exactly 5, as "name", "name=ARG" or a comma-separated list of them
// ("uid=N, gid=N").
HelpOptions parse_help(const std::string& help) {
  HelpOptions out;
  static const std::regex flag(R"(^ {2,4}(--?[A-Za-z][a-z-]*)(, (--[a-z-]+))?( (\S+))?)");
  static const std::regex name(R"(^([a-z_][a-z0-9_]*)(=[^,\s]*)?(?=,|\s|$))");
  for (const std::string& line : lines_of(help)) {
    std::smatch m;
    if (std::regex_search(line, m, flag)) {
      out.flags.insert(m[1]);
      if (m[3].matched) out.flags.insert(m[3]);
      if (m[1] == "-o" && m[5].matched && std::regex_match(m[5].str(), std::regex("[a-z_]+"))) {
        out.mount_options.insert(m[5]);  // libfuse's "-o allow_other   allow access by ..."
      }
    } else if (line.starts_with("     ") && line[5] != ' ') {
      std::string rest = line.substr(5);
      while (std::regex_search(rest, m, name)) {
        out.mount_options.insert(m[1]);
        rest = m.suffix();
        if (!rest.starts_with(", ")) break;
        rest = rest.substr(2);
      }
    }
  }
  return out;
}

// The options the man page documents: the first Fl or Cm of each .It line of its OPTIONS
// section, and each one after a "," (".It Fl h , Fl -help", ".It Cm uid Ns = Ns Ar N , Cm gid
// ..."); Fl's argument is written without its leading "-".
std::set<std::string> man_options(const std::string& page) {
  std::set<std::string> out;
  std::string joined;  // lines continued with a trailing backslash, joined
  bool in_options = false;
  for (const std::string& raw : lines_of(page)) {
    if (!raw.empty() && raw.back() == '\\') {
      joined += raw.substr(0, raw.size() - 1) + " ";
      continue;
    }
    const std::string line = joined + raw;
    joined.clear();
    if (line.starts_with(".Sh ")) in_options = line == ".Sh OPTIONS";
    if (!in_options || !line.starts_with(".It ")) continue;
    std::istringstream words(line.substr(4));
    const std::vector<std::string> w{std::istream_iterator<std::string>(words),
                                     std::istream_iterator<std::string>()};
    for (std::size_t i = 0; i + 1 < w.size(); ++i) {
      if ((i == 0 || w[i - 1] == ",") && (w[i] == "Fl" || w[i] == "Cm")) {
        out.insert(w[i] == "Fl" ? "-" + w[i + 1] : w[i + 1]);
      }
    }
  }
  return out;
}

// `word` occurs in `text` as a whole word (not inside a longer option name).
bool has_word(const std::string& text, const std::string& word) {
  const auto part = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || (!part(text[at - 1]) && text[at - 1] != '-');
    const bool ends = at + word.size() == text.size() || !part(text[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}

std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

TEST(Docs, ManPageIsCleanMdoc) {
  if (run("command -v mandoc >/dev/null").exit_code != 0) {
    GTEST_SKIP() << "mandoc is missing (apt mandoc): the man page is not linted";
  }
  const RunResult r = run("mandoc -T lint -W warning " + quote(kManPage) + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "");
}

TEST(Docs, ManPageDocumentsEveryOptionOfHelp) {
  const std::string help = help_text();
  const HelpOptions listed = parse_help(help);
  // The parse found the options (a help text it cannot read must not pass as empty).
  for (const char* f : {"-h", "--help", "-V", "--version", "--info", "--json", "-f", "-d", "-s",
                        "-q", "-v", "-o"}) {
    EXPECT_TRUE(listed.flags.contains(f)) << f << " not found in --help:\n" << help;
  }
  for (const char* o : {"max_read", "read_ahead_kb", "force", "uid", "gid", "notify_pipe", "redact",
                        "safetensors_dtype", "cache_dir", "cache_size_mib", "read_timeout",
                        "ca_file", "token_file", "s3_path_style", "s3_virtual_host", "s3_anonymous",
                        "allow_other", "allow_root", "noauto"}) {
    EXPECT_TRUE(listed.mount_options.contains(o)) << o << " not found in --help:\n" << help;
  }

  const std::set<std::string> documented = man_options(read_text(kManPage));
  for (const std::string& f : listed.flags) {
    EXPECT_TRUE(documented.contains(f)) << "ggufs.1 has no .It entry for " << f;
  }
  for (const std::string& o : listed.mount_options) {
    EXPECT_TRUE(documented.contains(o)) << "ggufs.1 has no .It Cm entry for -o " << o;
  }
  // And the other way: the man page documents no option that the command does not have.
  EXPECT_GT(documented.size(), 40u);
  for (const std::string& d : documented) {
    EXPECT_TRUE(has_word(help, d)) << "ggufs.1 documents " << d << ", which --help does not list";
  }
}

// A command line to complete at its end: as typed, and its words as bash splits them (at
// blanks, and around the "=" of COMP_WORDBREAKS), the last one being completed.
struct CommandLine {
  std::string line;
  std::vector<std::string> words;
};

// Sources bash-completion and the completion, then prints what the function `complete -p
// ggufs` names answers for each command line, one reply per line, "#nospace" when it asked for
// no space after the word, and "--" after each command line.
std::string complete(const std::filesystem::path& cwd, const std::vector<CommandLine>& lines) {
  std::string script = "cd " + sh_quote(cwd.string()) + " || exit 2\n" + "source " +
                       kBashCompletion + " || exit 2\n" + "source " +
                       sh_quote(kCompletion.string()) + " || exit 2\n" +
                       R"(f=$(complete -p ggufs | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
[ -n "$f" ] || { echo "no complete -F for ggufs"; exit 2; }
compopt() { [ "$*" = "-o nospace" ] && nospace=1; }
comp() {
  COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; shift
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
  COMPREPLY=(); nospace=
  "$f" ggufs "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  [ ${#COMPREPLY[@]} -eq 0 ] || printf '%s\n' "${COMPREPLY[@]}" | sort
  [ -n "$nospace" ] && echo "#nospace"
  echo --
}
)";
  for (const CommandLine& l : lines) {
    script += "comp " + sh_quote(l.line);
    for (const std::string& w : l.words) script += " " + sh_quote(w);
    script += "\n";
  }
  const RunResult r = run("bash -c " + sh_quote(script) + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

TEST(Docs, BashCompletionCompletesOptionsAndOperands) {
  if (!std::filesystem::exists(kBashCompletion)) {
    GTEST_SKIP() << kBashCompletion << " is missing (apt bash-completion)";
  }
  TempDir dir;
  std::ofstream(dir.path() / "model.gguf") << "x";
  std::ofstream(dir.path() / "notes.txt") << "x";
  std::filesystem::create_directory(dir.path() / "mnt");
  const std::string out =
      complete(dir.path(),
               {
                   {"ggufs -o read_t", {"ggufs", "-o", "read_t"}},
                   {"ggufs --in", {"ggufs", "--in"}},
                   {"ggufs -o allow_other,s3_a", {"ggufs", "-o", "allow_other,s3_a"}},
                   {"ggufs -o for", {"ggufs", "-o", "for"}},
                   {"ggufs -o safetensors_dtype=b", {"ggufs", "-o", "safetensors_dtype", "=", "b"}},
                   {"ggufs -f ", {"ggufs", "-f", ""}},
                   {"ggufs model.gguf ", {"ggufs", "model.gguf", ""}},
                   {"ggufs model.gguf mnt ", {"ggufs", "model.gguf", "mnt", ""}},
               });
  // "=" names get no space (the value follows); a name complete in itself gets one.
  EXPECT_EQ(out,
            "read_timeout=\n#nospace\n--\n"
            "--info\n--\n"
            "allow_other,s3_anonymous\n--\n"
            "force\n--\n"
            "bf16\n--\n"
            "mnt\nmodel.gguf\n--\n"  // FILE: .gguf files and folders
            "mnt\n--\n"              // MOUNTPOINT: folders
            "--\n");
}

TEST(Docs, BashCompletionCompletesOllamaModelsAsOllamaListNamesThem) {
  if (!std::filesystem::exists(kBashCompletion)) {
    GTEST_SKIP() << kBashCompletion << " is missing (apt bash-completion)";
  }
  TempDir dir;
  const auto manifests = dir.path() / "store" / "manifests";
  for (const char* m :
       {"registry.ollama.ai/library/tiny/latest", "registry.ollama.ai/library/tiny/q8",
        "registry.ollama.ai/someone/thing/v1", "hf.co/org/repo/Q4_K_M"}) {
    std::filesystem::create_directories((manifests / m).parent_path());
    std::ofstream(manifests / m) << "{}";
  }
  ::setenv("OLLAMA_MODELS", (dir.path() / "store").c_str(), 1);
  const std::string out =
      complete(dir.path(), {
                               {"ggufs oll", {"ggufs", "oll"}},
                               {"ggufs ollama:", {"ggufs", "ollama", ":"}},
                               {"ggufs ollama:ti", {"ggufs", "ollama", ":", "ti"}},
                               {"ggufs ollama:tiny:", {"ggufs", "ollama", ":", "tiny", ":"}},
                           });
  ::unsetenv("OLLAMA_MODELS");
  // Readline replaces the text after the last ":" (COMP_WORDBREAKS), so the replies are that
  // part of each name.
  EXPECT_EQ(out,
            "ollama:\n#nospace\n--\n"
            "hf.co/org/repo:Q4_K_M\nsomeone/thing:v1\ntiny:latest\ntiny:q8\n--\n"
            "tiny:latest\ntiny:q8\n--\n"
            "latest\nq8\n--\n");
}

TEST(Docs, BashCompletionOffersEveryOptionOfHelp) {
  if (!std::filesystem::exists(kBashCompletion)) {
    GTEST_SKIP() << kBashCompletion << " is missing (apt bash-completion)";
  }
  const HelpOptions listed = parse_help(help_text());
  TempDir dir;
  const std::string out =
      complete(dir.path(), {{"ggufs -", {"ggufs", "-"}}, {"ggufs -o ", {"ggufs", "-o", ""}}});
  const auto split = out.find("\n--\n");  // the end of the first command line's replies
  ASSERT_NE(split, std::string::npos) << out;
  std::set<std::string> flags, names;
  for (const std::string& l : lines_of(out.substr(0, split))) flags.insert(l);
  for (const std::string& l : lines_of(out.substr(split + 4))) {
    if (l != "--") names.insert(l.substr(0, l.find('=')));
  }
  EXPECT_EQ(flags, listed.flags);
  for (const std::string& o : listed.mount_options) {
    if (kFstabOnly.contains(o)) continue;
    EXPECT_TRUE(names.contains(o)) << "-o " << o << " not offered";
  }
}

}  // namespace
}  // namespace ggufs::test
