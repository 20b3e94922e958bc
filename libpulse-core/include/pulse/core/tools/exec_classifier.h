// The structural classifier of `pulse_read action=exec`: it proves a command
// read-only by its shape alone, or refuses it before anything is dispatched. It never asks a
// shell: the text is split into an argument vector by the small quoting rules below, and the
// vector is checked against an allowlist of read-only programs with per-program argument
// rules. Anything it does not positively recognise is refused (fail closed). Pure functions
// over plain values; safe from any thread.
//
// Tokenizing (the whole text, before any program is considered):
//  * printable ASCII only: control characters (NUL, tab, newline, ...), DEL and every byte
//    >= 0x80 (so every Unicode lookalike) are refused;
//  * words are separated by spaces and made of [A-Za-z0-9] and - _ . / : = , + @ % only; every
//    other character (; & | ` $ ( ) < > \ ! * ? [ ] { } ~ # ^ and so on) is refused, quoted or
//    not, so there is no chaining, piping, redirection, substitution, expansion or globbing;
//    the one exception is the whole word %{http_code} (curl's -w status format), as written;
//  * a word may be wrapped in '...' or "..." to contain spaces; quotes must open at the start
//    of a word and close at its end, nothing is escaped, an empty quoted word is refused;
//  * at most kMaxExecCommandBytes of text, kMaxExecArgs words of kMaxExecArgBytes each.
//
// Programs (the first word; a bare name, never a path such as /bin/cat or ./cat):
//   cat, head, tail, wc        files under /proc, /sys, /etc, /var/log (IsReadableExecPath);
//                              head/tail take -n/-c counts; tail never -f/-F/--follow; never a
//                              /proc link out of the roots (cwd, root, exe of any process)
//   ls, stat, df, du, lsblk    metadata of absolute paths; read-only option sets
//   free, uptime, uname, hostname, whoami, id, nproc, lscpu, lsmod, arch, vmstat
//                              read-only option sets; hostname never takes a name (that sets
//                              it), vmstat never a delay (that runs forever)
//   date                       +FORMAT, -u, -R, -I, -d; never -s/--set
//   ps                         selection and format options; never the e (environment) form
//   ss                         listing options and filters; never -K/--kill or -D/--diag
//   ip                         addr | route | link | neigh with show/list only
//   mount, dmesg               mount without arguments; dmesg without -c/-C/-D/-E/-n/-w
//   journalctl                 -u -n -p -b -k -S -U -o -t -g -r ...; never -f, --vacuum-*,
//                              --rotate, --flush, --sync, --file/--directory/--root
//   systemctl                  status | show | list-units | list-unit-files | list-timers |
//                              list-sockets | is-active | is-enabled | is-failed; no --user/-H;
//                              show's --value/-P only with named properties that are not
//                              Environment* or *Credential* (their values are masked by name,
//                              MaskExecOutput, which --value would drop)
//   find                       absolute start paths and test predicates; never -exec, -execdir,
//                              -ok, -okdir, -delete, -fprint*, -fls
//   qm, pct                    list | status <id> | config <id>
//   pvesm status, pveversion   as written
//   docker                     ps | images | logs (no -f) | top | stats --no-stream
//   curl                       an HTTP(S) health probe of one http(s):// URL: -s -S -I
//                              -o /dev/null -w %{http_code} -m 1..60 only, and the body
//                              discarded (-o /dev/null or -I); never -d/-F/-T (data, upload),
//                              -X (method), -K (config), -b/-c (cookies), another -o, -H, -L
//   wget                       --spider (required) with -q, --no-verbose, -S, -T 1..60,
//                              -t 1..3 and one http(s):// URL; nothing is saved
//   ping                       -c 1..3 and -W 1..5 (both required), -n -q -4 -6, one address
//                              or host name; never -f, -i, -s, -p, -b, -I
//   timeout DURATION CMD ...   only when CMD ... is itself accepted (no nested timeout)
// Refused outright: shells and dual-use interpreters (sh, bash, python, perl, ruby, node, ...),
// wrappers (env, sudo, xargs, nice, nohup, watch, ...), editors and stream editors (sed, awk,
// tee, dd, vi, ...), other network clients (ssh, scp, nc, socat, rsync, ...) and every program
// not listed above.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pulse/core/model/exec_output.h"

namespace pulse::core {

inline constexpr std::size_t kMaxExecCommandBytes = 1024;  // the pulse_read schema's maxLength
inline constexpr std::size_t kMaxExecArgs = 64;
inline constexpr std::size_t kMaxExecArgBytes = 512;

// Why a command was refused. Wire (ToString): none, empty, too_long, control_character,
// non_ascii, shell_syntax, malformed_quoting, too_many_arguments, path_command, interpreter,
// not_allowlisted, unsafe_argument, sensitive_path.
enum class ExecRefusal {
  kNone,              // accepted
  kEmpty,             // nothing but spaces
  kTooLong,           // over kMaxExecCommandBytes, kMaxExecArgs or kMaxExecArgBytes
  kControlCharacter,  // NUL, newline, tab, any byte < 0x20, DEL
  kNonAscii,          // any byte >= 0x80 (Unicode, including lookalikes)
  kShellSyntax,       // a character outside the word set: metacharacters, globs, escapes
  kMalformedQuoting,  // unterminated, mid-word or empty quotes
  kTooManyArguments,  // a program given more operands than it accepts
  kPathCommand,       // the program is given as a path
  kInterpreter,       // a shell or dual-use interpreter
  kNotAllowlisted,    // any other program outside the allowlist
  kUnsafeArgument,    // an allowlisted program with an option or operand outside its rules
  kSensitivePath,     // a file outside the readable roots or one that holds secrets
};
std::string_view ToString(ExecRefusal refusal);

struct ExecVerdict {
  bool allowed = false;
  ExecRefusal refusal = ExecRefusal::kNotAllowlisted;  // kNone exactly when allowed
  // Why it was refused, naming the offending word or character (printable, never the raw
  // bytes of a control or non-ASCII character); "read-only" when allowed.
  std::string reason;
  // The argument vector to execute (program first), set only when allowed. An executor
  // passes it to execve as is: it is never re-joined into a string for a shell.
  std::vector<std::string> argv;
  // Indices into argv of the words the program opens and reads as files (the operands of
  // cat, head, tail and wc, also under timeout), in order; set only when allowed. An executor
  // that can follow symbolic links must resolve each one in the frame the program will see,
  // refuse it when it cannot be resolved or leaves the readable roots, and hand the program the
  // file it checked (not the name again), so nothing can be swapped in between.
  std::vector<std::size_t> file_operands;
};

// Classifies `command`. Never fails: anything unrecognised is a refusal.
ExecVerdict ClassifyExecCommand(std::string_view command);

// True for a normalized absolute path (no "//", "." or ".." component) under /proc, /sys, /etc
// or /var/log that IsSensitiveExecPath does not flag: the files cat/head/tail/wc may read.
// Executors that resolve symbolic links re-check the resolved path with this rule.
bool IsReadableExecPath(std::string_view path);

// True for paths that hold secrets or block a reader even under the readable roots: shadow
// and sudoers files, private keys and key-like names (*.key, *_key, *.pem, *.keyring, ...),
// anything named private, secret(s), token, password, *passwd* (not passwd itself) or
// credential, service credentials (.netrc, .pgpass, debian.cnf, docker config.json, auth.json,
// kubeconfigs, /etc/kubernetes, /etc/rancher, NetworkManager system-connections,
// wpa_supplicant), each also as a backup copy (shadow-, shadow.bak, *~, *.old, *.dpkg-*,
// *.rpmsave, ...), the process memory/environment views under /proc (environ, mem, kcore,
// kmsg, pagemap, fd, map_files, ...) and the /proc links that leave the readable roots
// (cwd, root and exe of any process or thread, ns).
bool IsSensitiveExecPath(std::string_view path);

// The output of an accepted command as it may leave the executor: for systemctl, the values
// of Environment=, EnvironmentFiles=, SetCredential= and SetCredentialEncrypted= lines are
// replaced by *** (as a unit's configuration read masks them); other output is unchanged.
std::string MaskExecOutput(const std::vector<std::string>& argv, std::string_view output);

// The allowlisted program names, sorted (documentation and tests).
const std::vector<std::string_view>& ExecAllowedPrograms();

}  // namespace pulse::core
