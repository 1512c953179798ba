/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What the files of affinityctl share: its exit codes, the settings of its command line
 * (affinityctl.c parses them) and the verbs, one function each, that main() dispatches to.
 */

#include <stdbool.h>
#include <stdint.h>

enum {
        EXIT_OK = 0,
        EXIT_FAILURE_ = 1,
        EXIT_USAGE = 2,
        EXIT_NOT_RUNNING = 3,
        EXIT_NO_SUCH_PROCESS = 4,
};

/* The command line (affinityctl.c). */
extern const char *arg_bus_address; /* --bus-address=; NULL: the system bus */
extern const char *arg_socket;      /* --socket=: the daemon's --api-socket, peer to peer; NULL: a bus */
extern bool arg_json;               /* --json */
extern bool arg_no_legend;          /* --no-legend */
extern const char *arg_config_dir;  /* validate, plan: --config-dir=DIR */
extern const char *arg_topology;    /* validate, plan: --topology=FILE.xml */
extern bool arg_here;               /* validate: --here, resolve on this machine too */
extern const char *arg_interrupts;  /* plan, with --topology: --interrupts=FILE */
extern const char *arg_sysfs;       /* plan, with --topology: --sysfs=DIR */
extern uint64_t arg_interval_usec;  /* top: --interval=SEC, in µs */
extern uint64_t arg_iterations;     /* top: --iterations=N; 0: not given */
extern const char *arg_listen;      /* metrics: --listen=ADDR or "systemd"; NULL: print once */
extern uint64_t arg_for_usec;       /* verify: --for=SEC, in µs */
extern bool arg_latency;            /* verify: --latency */

/*
 * The verbs. args: the words after the verb, NULL-terminated (main() has checked their count:
 * none, explain's one, or validate's and plan's PATHs). Each returns the exit code, after
 * saying on stderr what went wrong.
 */
int verb_status(char **args);    /* ctl-status.c */
int verb_policies(char **args);  /* ctl-processes.c */
int verb_processes(char **args); /* ctl-processes.c */
int verb_explain(char **args);   /* ctl-processes.c: args[0] is the PID */
int verb_irqs(char **args);      /* ctl-devices.c */
int verb_net(char **args);       /* ctl-devices.c */
int verb_top(char **args);       /* ctl-top.c */
int verb_verify(char **args);    /* ctl-verify.c: args are POLICY names */
int verb_monitor(char **args);   /* ctl-monitor.c */
int verb_reload(char **args);    /* ctl-admin.c */
int verb_rescan(char **args);    /* ctl-admin.c */
int verb_metrics(char **args);   /* ctl-metrics-http.c */
int verb_validate(char **args);  /* ctl-offline.c: args are PATHs */
int verb_plan(char **args);      /* ctl-plan.c: args are PATHs */
