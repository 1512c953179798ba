/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl: the command-line client of affinityd. status, policies, processes, explain, irqs,
 * net, top, monitor, metrics, reload and rescan talk to the daemon over D-Bus (org.affinityd1 on the
 * system bus, or --bus-address; ctl-bus.c); validate and plan work offline with the same loader
 * and planner the daemon uses, against this machine or an hwloc XML topology
 * (--topology=FILE.xml). This file: main(), the command line and the table of verbs; each verb
 * is in the ctl-*.c file named in ctl.h, and prints through ctl-output.h, as text or --json.
 *
 * Exit codes: 0 ok, 1 failure, 2 usage, 3 the daemon is not running (nobody owns
 * org.affinityd1, or the bus can't be reached), 4 no such process (explain).
 */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#include "ctl.h"
#include "macro.h"

const char *arg_bus_address = NULL;
const char *arg_socket = NULL;
bool arg_json = false;
bool arg_no_legend = false;
const char *arg_config_dir = NULL;
const char *arg_topology = NULL;
const char *arg_interrupts = NULL;
const char *arg_sysfs = NULL;
uint64_t arg_interval_usec = 1000000;
uint64_t arg_iterations = 0;
const char *arg_listen = NULL;
static bool arg_interval_set = false;

static void help(void) {
        printf("%s [OPTIONS] COMMAND\n"
               "\n"
               "Query and control affinityd, the CPU placement daemon.\n"
               "\n"
               "Commands:\n"
               "  status               Show the daemon's state, counters and pending policies\n"
               "  policies             List the policies: file and line, CPUs, active or\n"
               "                       pending and why\n"
               "  processes            List the managed processes: policy and CPUs applied\n"
               "  explain PID          Show which policy matched PID and why, which didn't\n"
               "                       and why not, and per thread the CPUs applied and now,\n"
               "                       the last CPU, migrations, run-queue delay and\n"
               "                       involuntary switches since placement\n"
               "  top                  Show live, per policy and per thread, migrations/s,\n"
               "                       run-queue delay p50/p99 and involuntary switches/s\n"
               "  monitor              Follow the daemon's signals (placements, failures,\n"
               "                       reloads, drift), one line each, until Ctrl-C; says\n"
               "                       when the daemon goes away and comes back\n"
               "  metrics              Print the daemon's metrics in the Prometheus text\n"
               "                       format; with --listen, serve them over HTTP\n"
               "  reload               Reload the configuration and wait until it is done\n"
               "  rescan               Rescan /proc and the devices and wait until done\n"
               "  irqs                 List every IRQ: the rule that places it, the CPUs\n"
               "                       asked for and in effect, its state and why\n"
               "  net                  List the RPS/XPS settings of every network queue:\n"
               "                       CPUs, RFS flow count, rule and state\n"
               "  validate [PATH...]   Check policy files offline (default: the standard\n"
               "                       search path); a directory is read as a config dir\n"
               "                       (affinityd.yaml, policy.d/) or else as a policy.d;\n"
               "                       with --topology, a policy that can't be resolved\n"
               "                       on that topology is an error too\n"
               "  plan [PATH...]       Show offline, for each policy, the CPUs and NUMA\n"
               "                       nodes it resolves to and why, its thread rules, or\n"
               "                       why it is pending; for each irqs: rule the IRQs it\n"
               "                       takes and their CPUs, for each net: rule the RPS/XPS\n"
               "                       masks and RFS flow counts of the queues it sets (with\n"
               "                       --topology: the devices the XML lists, the IRQs of\n"
               "                       --interrupts, the queues of --sysfs)\n"
               "\n"
               "Options:\n"
               "  -h --help                  Show this help\n"
               "     --version               Show the version\n"
               "     --bus-address=ADDRESS   Talk to the daemon on this D-Bus address\n"
               "                             (default: the system bus)\n"
               "     --socket=PATH           Talk to the daemon peer to peer on its\n"
               "                             --api-socket=PATH (no bus: in a pod)\n"
               "     --json                  Print one JSON document on stdout (monitor, and\n"
               "                             top with --iterations above 1: one JSON document\n"
               "                             per line)\n"
               "     --no-legend             Leave out table headers and summary lines\n"
               "     --interval=SEC          top: the sampling interval (default 1)\n"
               "     --iterations=N          top: stop after N reports (default: until\n"
               "                             Ctrl-C; with --json 1)\n"
               "     --listen=ADDRESS:PORT   metrics: serve GET /metrics over HTTP on\n"
               "                             127.0.0.1:9187, [::1]:9187 or :9187 (every\n"
               "                             address); \"systemd\": on the socket systemd passed\n"
               "     --config-dir=DIR        validate, plan: read DIR/affinityd.yaml and\n"
               "                             DIR/policy.d/*.yaml instead of the standard path\n"
               "     --topology=FILE.xml     validate, plan: resolve against this hwloc XML\n"
               "                             topology (lstopo FILE.xml) instead of this machine\n"
               "     --interrupts=FILE       plan, with --topology: the IRQs of a saved\n"
               "                             /proc/interrupts of that machine\n"
               "     --sysfs=DIR             plan, with --topology: the queues of a copy of\n"
               "                             that machine's /sys/class/net/*/queues under DIR\n"
               "\n"
               "Exit status: 0 ok, 1 failure, 2 usage error, 3 affinityd not running,\n"
               "4 no such process (explain).\n",
               program_invocation_short_name);
}

/* Returns 1 to go on, 0 to exit successfully (--help, --version), -EINVAL on a usage error. */
static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_BUS_ADDRESS,
                ARG_SOCKET,
                ARG_JSON,
                ARG_CONFIG_DIR,
                ARG_TOPOLOGY,
                ARG_NO_LEGEND,
                ARG_INTERVAL,
                ARG_ITERATIONS,
                ARG_LISTEN,
                ARG_INTERRUPTS,
                ARG_SYSFS,
        };
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, ARG_VERSION},
                {"bus-address", required_argument, NULL, ARG_BUS_ADDRESS},
                {"socket", required_argument, NULL, ARG_SOCKET},
                {"json", no_argument, NULL, ARG_JSON},
                {"config-dir", required_argument, NULL, ARG_CONFIG_DIR},
                {"topology", required_argument, NULL, ARG_TOPOLOGY},
                {"no-legend", no_argument, NULL, ARG_NO_LEGEND},
                {"interval", required_argument, NULL, ARG_INTERVAL},
                {"iterations", required_argument, NULL, ARG_ITERATIONS},
                {"listen", required_argument, NULL, ARG_LISTEN},
                {"interrupts", required_argument, NULL, ARG_INTERRUPTS},
                {"sysfs", required_argument, NULL, ARG_SYSFS},
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("affinityctl %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_BUS_ADDRESS:
                        if (optarg[0] == 0) {
                                fprintf(stderr, "--bus-address= needs an address.\n");
                                return -EINVAL;
                        }
                        arg_bus_address = optarg;
                        break;
                case ARG_SOCKET:
                        if (optarg[0] == 0) {
                                fprintf(stderr, "--socket= needs a path.\n");
                                return -EINVAL;
                        }
                        arg_socket = optarg;
                        break;
                case ARG_JSON:
                        arg_json = true;
                        break;
                case ARG_CONFIG_DIR:
                        /* An empty DIR is left to the loader, which explains it. */
                        arg_config_dir = optarg;
                        break;
                case ARG_TOPOLOGY:
                        if (optarg[0] == 0) {
                                fprintf(stderr, "--topology= needs an hwloc XML file.\n");
                                return -EINVAL;
                        }
                        arg_topology = optarg;
                        break;
                case ARG_NO_LEGEND:
                        arg_no_legend = true;
                        break;
                case ARG_INTERVAL: {
                        char *end;
                        double sec;

                        errno = 0;
                        sec = strtod(optarg, &end);
                        /* 1 ms .. 1 day */
                        if (errno != 0 || end == optarg || *end || !isfinite(sec) || sec < 0.001 ||
                            sec > 86400) {
                                fprintf(stderr,
                                        "--interval= needs a number of seconds from 0.001 to 86400, not "
                                        "\"%s\".\n",
                                        optarg);
                                return -EINVAL;
                        }
                        arg_interval_usec = (uint64_t)(sec * 1e6 + 0.5);
                        arg_interval_set = true;
                        break;
                }
                case ARG_ITERATIONS: {
                        char *end;

                        errno = 0;
                        arg_iterations = strtoull(optarg, &end, 10);
                        if (errno != 0 || end == optarg || *end || optarg[0] == '-' || arg_iterations == 0) {
                                fprintf(stderr, "--iterations= needs a positive number, not \"%s\".\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                }
                case ARG_LISTEN:
                        /* The address is checked by metrics, which says what it takes. */
                        arg_listen = optarg;
                        break;
                case ARG_INTERRUPTS:
                        if (optarg[0] == 0) {
                                fprintf(stderr, "--interrupts= needs a saved /proc/interrupts.\n");
                                return -EINVAL;
                        }
                        arg_interrupts = optarg;
                        break;
                case ARG_SYSFS:
                        if (optarg[0] == 0) {
                                fprintf(stderr, "--sysfs= needs a directory.\n");
                                return -EINVAL;
                        }
                        arg_sysfs = optarg;
                        break;
                default: /* getopt_long() said what is wrong */
                        return -EINVAL;
                }
        return 1;
}

typedef enum VerbArgs {
        VERB_NO_ARGS, /* takes no arguments, nor --config-dir= or --topology= */
        VERB_ONE_PID, /* explain PID: one argument, no --config-dir= or --topology= */
        VERB_PATHS,   /* validate, plan: PATHs or --config-dir=, and --topology= */
} VerbArgs;

static const struct {
        const char *name;
        VerbArgs args;
        int (*run)(char **args);
} verbs[] = {
        {"status", VERB_NO_ARGS, verb_status},
        {"policies", VERB_NO_ARGS, verb_policies},
        {"processes", VERB_NO_ARGS, verb_processes},
        {"explain", VERB_ONE_PID, verb_explain},
        {"irqs", VERB_NO_ARGS, verb_irqs},
        {"net", VERB_NO_ARGS, verb_net},
        {"top", VERB_NO_ARGS, verb_top},
        {"monitor", VERB_NO_ARGS, verb_monitor},
        {"metrics", VERB_NO_ARGS, verb_metrics},
        {"reload", VERB_NO_ARGS, verb_reload},
        {"rescan", VERB_NO_ARGS, verb_rescan},
        {"validate", VERB_PATHS, verb_validate},
        {"plan", VERB_PATHS, verb_plan},
};

/* Whether the options and the n_args arguments suit verb (NULL: unknown); says why not.
 * Returns 0 or EXIT_USAGE. */
static int check_verb(const char *name, int index, size_t n_args) {
        if (arg_listen && !streq(name, "metrics")) {
                fprintf(stderr, "--listen= is only for metrics.\n");
                return EXIT_USAGE;
        }
        if ((arg_interrupts || arg_sysfs) && (!streq(name, "plan") || !arg_topology)) {
                fprintf(stderr, "%s is only for plan with --topology= (this machine's are read from %s).\n",
                        arg_interrupts ? "--interrupts=" : "--sysfs=",
                        arg_interrupts ? "/proc/interrupts" : "/sys/class/net");
                return EXIT_USAGE;
        }
        if (index >= 0 && verbs[index].args == VERB_PATHS) {
                if (arg_config_dir && n_args > 0) {
                        fprintf(stderr, "%s: give either --config-dir=DIR or PATHs, not both.\n", name);
                        return EXIT_USAGE;
                }
                return 0;
        }
        if ((arg_interval_set || arg_iterations > 0) && !streq(name, "top")) {
                fprintf(stderr, "%s is only for top.\n", arg_interval_set ? "--interval=" : "--iterations=");
                return EXIT_USAGE;
        }
        if (index < 0) {
                fprintf(stderr, "Unknown command \"%s\"; see %s --help.\n", name,
                        program_invocation_short_name);
                return EXIT_USAGE;
        }
        if (arg_config_dir || arg_topology) {
                fprintf(stderr, "%s is only for validate and plan.\n",
                        arg_config_dir ? "--config-dir=" : "--topology=");
                return EXIT_USAGE;
        }
        if (verbs[index].args == VERB_ONE_PID && n_args != 1) {
                fprintf(stderr, "%s takes one PID.\n", name);
                return EXIT_USAGE;
        }
        if (verbs[index].args == VERB_NO_ARGS && n_args > 0) {
                fprintf(stderr, "%s takes no arguments.\n", name);
                return EXIT_USAGE;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        const char *name;
        int r, index = -1;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_OK;

        if (optind >= argc) {
                fprintf(stderr, "Missing command; see %s --help.\n", program_invocation_short_name);
                return EXIT_USAGE;
        }
        name = argv[optind];
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(name, verbs[i].name))
                        index = (int)i;

        r = check_verb(name, index, (size_t)(argc - optind - 1));
        if (r > 0)
                return r;
        return verbs[index].run(argv + optind + 1);
}
