/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What affinityctl's offline verbs, validate and plan, share: loading the configuration they
 * are asked about and the topology they resolve against, and showing diagnostics.
 */

#include "ctl-output.h"
#include "policy-yaml.h"
#include "topology.h"

/*
 * The configuration validate and plan are asked about: --config-dir=DIR, the PATHs given
 * (NULL-terminated; none: the standard search path). Same return convention as config_load().
 */
int ctl_load_config(char **paths, Config **ret, Diagnostics *diag);

/* --topology=FILE.xml, or this machine's topology. Returns 0 or a negative errno, a failure
 * (other than -ENOMEM) said on stderr. */
int ctl_load_topology(Topology **ret);

/* Each diagnostic on its own line of stderr ("file:line:column: error: ..."). Returns 0 or
 * -ENOMEM. */
int ctl_print_diagnostics(const Diagnostics *diag);

/* "file", "line" and "column" of l, as fields of the JSON object being written. */
void ctl_json_location(JsonWriter *w, const Location *l);

/* diag (NULL: none) as a JSON array of {"level","file","line","column","message"}. */
void ctl_json_diagnostics(JsonWriter *w, const Diagnostics *diag);

/*
 * Runs an offline verb: run(paths, diag) with an empty diag, freed afterwards; run returns the
 * exit code, or -ENOMEM for this to say "Out of memory.". Returns the exit code.
 */
int ctl_run_offline(int (*run)(char **paths, Diagnostics *diag), char **paths);
