/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Loads affinityd configuration from YAML (libyaml's event parser) into the policy model,
 * with strict schema validation and file:line:column diagnostics.
 *
 * Layout (docs/policy-format.md, "Files"): settings in affinityd.yaml; rules in *.yaml files of the
 * policy directories /usr/lib/affinityd/policy.d, /run/affinityd/policy.d and
 * /etc/affinityd/policy.d. A file in /etc overrides a same-named file in /run, which
 * overrides /usr/lib; a symlink to /dev/null masks the name; the surviving files are read in
 * lexical order of their names, whatever directory they came from.
 *
 * YAML subset: one document per file (a second document is an error); anchors (&a), aliases
 * (*a) and explicit tags (!!str) are rejected, so every value has exactly one place in a file
 * and diagnostics always point at it. Scalars are taken as text (cpus: 3 is the cpu-list "3",
 * comm: yes is the program "yes"); an empty value (or ~, null) is "nothing", accepted only
 * where a list may be empty (policies:, threads:). Nesting deeper than 64 levels and files
 * larger than 16 MiB are rejected. Only diagnostics name the problems: lib/ never logs them.
 *
 * Selector mappings (cpus: {…}, docs/policy-format.md): nodes:/packages: are cpu-lists; near:
 * a network interface name (syntax only: 1-15 bytes, no "/", ":" or white space) or a PCI
 * address, stored canonically as sysfs writes it ("3b:00.0" becomes "0000:3b:00.0"); cores:
 * and cpus: (inside the mapping, a count, not a cpu-list) are numbers from 1 to
 * CPUSET_MAX_CPUS and exclude each other; smt: one-per-core|all; kind: performance|efficiency;
 * reserved: avoid|allow|only; exclusive: true|false; in irqs: and net: rules only, avoid:
 * policies, a policy name, a list of them or [] (the names checked by config_verify()). A
 * thread rule's cpus: may also be the word spread (CPU_SELECTOR_SPREAD); anywhere else
 * "spread" is an error. Whether a selector can be satisfied on a machine is the plan's
 * business (plan.h), never the loader's.
 *
 * scheduler: (a policy's and a thread rule's): policy: other|batch|idle|fifo|rr, priority: 1-99
 * (only with fifo/rr, and required there), nice: -20..19 (not with fifo/rr), reset-on-fork:
 * true|false, io: {class: realtime|best-effort|idle (required), level: 0-7 (default 4; not with
 * idle)}; those combinations are checked within one scheduler: mapping. memory: (a policy's
 * only; in a thread rule it is an error saying why): nodes: local or a node list (required),
 * migrate: true|false (default false). The settings' allow-realtime: true|false (default false)
 * gates fifo, rr and io class realtime: config_verify() refuses them without it.
 *
 * Device rules (policy.d files, beside policies:; docs/policy-format.md): irqs: entries have
 * name: (required, unique among the irqs: rules of every file read), match: (required, at least
 * one of device: — interface names or PCI addresses, not globs, PCI addresses stored
 * canonically — and action: — globs on IRQ names; each a string or a list), cpus: (required: a
 * cpu-list or a selector mapping), spread: true|false (default false) and on-drift:. net:
 * entries have device: (required: a glob on interface names), name: (default: the device glob;
 * unique among the net: rules), rps: (a cpu-list or a selector mapping), xps: (spread, a
 * cpu-list or a selector mapping) — at least one of rps:/xps: — and on-drift:. Their selector
 * mappings take the keys of a policy's except exclusive: (an error: it applies to policies
 * only), and the word spread is an error for cpus: and rps:. rfs: (affinityd.yaml only) is an
 * integer from 1 to 2^29 (NETDEV_RFS_ENTRIES_MAX, the kernel's limit); a value that is not a power of
 * two gets a warning (the kernel rounds it up).
 */

#include "policy.h"

typedef enum DiagnosticLevel {
        DIAGNOSTIC_ERROR,
        DIAGNOSTIC_WARNING,
} DiagnosticLevel;

typedef struct Diagnostic {
        DiagnosticLevel level;
        char *file;            /* NULL when not tied to a file */
        unsigned line, column; /* 1-based; 0 when unknown */
        char *message;
} Diagnostic;

/* Everything the loader had to say. Errors make the load fail; warnings don't. */
typedef struct Diagnostics {
        Diagnostic *items;
        size_t n_items;
        unsigned n_errors;
        unsigned n_warnings;
} Diagnostics;

/* Frees every diagnostic; *d is empty (all zero) afterwards and may be reused. */
void diagnostics_done(Diagnostics *d);
/* Appends a diagnostic. file may be NULL. Returns 0 or -ENOMEM. */
_printf_(6, 7) int diagnostics_add(
        Diagnostics *d, DiagnosticLevel level, const char *file, unsigned line, unsigned column,
        const char *format, ...);
/*
 * Formats one diagnostic as "file:line:column: error: message" (or "warning:"), the form
 * compilers use, in a newly allocated string. Returns 0 or -ENOMEM.
 */
int diagnostic_format(const Diagnostic *d, char **ret);
/* All diagnostics, one per line, newline-terminated ("" if none). Returns 0 or -ENOMEM. */
int diagnostics_format(const Diagnostics *d, char **ret);

/* The standard search path, from the build's configuration (config.h: AFFINITYD_CONF_DIR,
 * AFFINITYD_VENDOR_POLICY_DIR, AFFINITYD_RUNTIME_DIR; /etc/affinityd, /usr/lib/affinityd/policy.d
 * and /run/affinityd as distributions build it): the vendor, runtime and configuration policy.d
 * directories, in that order, NULL-terminated. */
extern const char *const policy_dirs_default[];
/* AFFINITYD_CONF_DIR "/affinityd.yaml". */
extern const char config_settings_default[];

/*
 * Loads the whole configuration.
 * config_dir NULL: the standard path (AFFINITYD_CONF_DIR/affinityd.yaml and the three
 * policy.d directories of policy_dirs_default, with override and masking rules).
 * A missing affinityd.yaml or policy.d is not an error there.
 * config_dir set (--config-dir=DIR): DIR/affinityd.yaml and DIR/policy.d/ *.yaml only, and DIR
 * must be a configuration directory, so that a mistyped path never runs with no policies
 * unsaid: an empty string is an error (-EINVAL); a DIR that doesn't exist (-ENOENT) or is not
 * a directory (-ENOTDIR) is an error naming it; a DIR with neither affinityd.yaml nor policy.d/
 * but with *.yaml files is an error (-EINVAL) with the hint that it looks like a policy.d
 * directory whose parent was meant; a DIR with neither and no *.yaml file loads as an empty
 * configuration with a warning. Either one of affinityd.yaml and policy.d/ alone is fine.
 * Returns 0 and *ret on success (warnings may be in *diag); -EINVAL if any file had an error
 * (every error is in *diag, *ret untouched); -ENOMEM; other -errno when a directory can't be
 * read (also reported in *diag).
 */
int config_load(const char *config_dir, Config **ret, Diagnostics *diag);

/*
 * The engine behind config_load(), with the search path spelled out (tests use temporary
 * directories): settings_path (may be NULL or missing) is read first as settings, then the
 * *.yaml files of policy_dirs (NULL-terminated, LOWEST priority first, as
 * policy_dirs_default) as rules: a name in a later directory overrides the same name in an
 * earlier one, a symlink to /dev/null (or the /dev/null device itself) masks the name, hidden
 * files (".x.yaml") and names not ending in ".yaml" are ignored, and the survivors are read in
 * strcmp() order of their names. Missing directories are skipped. Every error of every file
 * is collected before returning. Returns 0 and *ret; -EINVAL if a file had an error; the
 * -errno of the first directory or file that could not be read (reported in *diag too);
 * -ENOMEM. *ret is untouched on failure.
 */
int config_load_dirs(
        const char *settings_path, const char *const *policy_dirs, Config **ret, Diagnostics *diag);

/*
 * Loads exactly the given paths, in the given order (affinityctl validate PATH…). A file
 * named affinityd.yaml is read as settings, any other as rules. A directory that holds
 * policy.d/ or affinityd.yaml is read as a config dir (as --config-dir); any other directory
 * as a policy.d directory (its *.yaml files in name order, with the drop-in rules of
 * config_load_dirs()); one with no *.yaml file at all gives a warning. A directory whose name
 * ends in ".yaml" is an error ("is a directory", -EISDIR). Files are read to EOF whatever
 * st_size says (/proc); one that changes while being read is an error (-ESTALE).
 * Same return convention as config_load().
 */
int config_load_paths(char *const *paths, Config **ret, Diagnostics *diag);

/*
 * Parses one YAML document from memory into c, as settings (is_settings) or as rules.
 * file names the source in diagnostics (NULL: "<string>") and is appended to c->files.
 * text need not be NUL-terminated; len is in bytes. diag may be NULL (diagnostics dropped).
 * Duplicate policy names are found by config_verify(), not here; a duplicate irqs: or net:
 * rule name is reported here, against the rules already in c (so across files read into one
 * Config too).
 * Returns 0, -EINVAL (errors in *diag; c then holds a partial model and should be freed),
 * -ENOMEM. Mainly for tests and fuzzing.
 */
int config_parse_string(
        Config *c, const char *file, const char *text, size_t len, bool is_settings, Diagnostics *diag);

/*
 * Checks a whole Config after every file is parsed: duplicate policy names (both places
 * named); real-time classes (scheduler: policy fifo or rr, io: class realtime, in a policy or a
 * thread rule) without allow-realtime: true in the settings, each named at its value
 * ("file:line:column: error: scheduler: policy fifo needs allow-realtime: true in
 * affinityd.yaml (…)"); a name in avoid: of an irqs: or net: rule's selector that no policy
 * has, at the name ("avoid: no policy is named \"wbe\" …"). Settings, rules and policies may
 * come from different files, which is why this is checked here. Returns 0 or -EINVAL with
 * errors in *diag.
 */
int config_verify(const Config *c, Diagnostics *diag);
