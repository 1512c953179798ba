/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * affinityctl: the command-line client of affinityd. status, policies, processes, explain, irqs,
 * net, top, monitor, metrics, reload and rescan talk to the daemon over D-Bus (org.affinityd1 on the
 * system bus, or --bus-address; ctl-bus.c); validate and plan work offline with the same loader
 * and planner the daemon uses: validate checks the files for any machine (and with --here
 * resolves them on this one), plan resolves them on this machine; both resolve on an hwloc XML
 * topology with --topology=FILE.xml. This file: main(), the command line and the table of verbs
 * with their help (VERB --help); each verb is in the ctl-*.c file named in ctl.h, and prints
 * through ctl-output.h, as text or --json.
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
bool arg_here = false;
const char *arg_interrupts = NULL;
const char *arg_sysfs = NULL;
uint64_t arg_interval_usec = 1000000;
uint64_t arg_iterations = 0;
const char *arg_listen = NULL;
uint64_t arg_for_usec = UINT64_C(10) * 1000000;
static bool arg_for_set = false;
bool arg_latency = false;
static bool arg_interval_set = false;
static bool arg_help = false;

/*
 * The options: a bit each for the verbs they apply to (Verb.options), and their help lines.
 * Those in OPTS_VERB_ONLY are refused by the verbs that don't name them; the others are
 * accepted by every verb, and shown in the help of those they make a difference to.
 */
typedef enum Option {
        OPT_BUS_ADDRESS = 1U << 0,
        OPT_SOCKET = 1U << 1,
        OPT_JSON = 1U << 2,
        OPT_NO_LEGEND = 1U << 3,
        OPT_INTERVAL = 1U << 4,
        OPT_ITERATIONS = 1U << 5,
        OPT_LISTEN = 1U << 6,
        OPT_CONFIG_DIR = 1U << 7,
        OPT_HERE = 1U << 8,
        OPT_TOPOLOGY = 1U << 9,
        OPT_INTERRUPTS = 1U << 10,
        OPT_SYSFS = 1U << 11,
        OPT_FOR = 1U << 12,
        OPT_LATENCY = 1U << 13,
        OPTS_VERB_ONLY = OPT_FOR | OPT_LATENCY | OPT_INTERVAL | OPT_ITERATIONS | OPT_LISTEN |
                OPT_CONFIG_DIR | OPT_HERE | OPT_TOPOLOGY | OPT_INTERRUPTS | OPT_SYSFS,
        OPTS_BUS = OPT_BUS_ADDRESS | OPT_SOCKET,
} Option;

static const struct {
        Option option;
        const char *name; /* for "--listen= is only for metrics." */
        const char *help; /* lines, each ending in '\n' */
} options_help[] = {
        {OPT_BUS_ADDRESS, "--bus-address=",
         "     --bus-address=ADDRESS   Talk to the daemon on this D-Bus address\n"
         "                             (default: the system bus)\n"},
        {OPT_SOCKET, "--socket=",
         "     --socket=PATH           Talk to the daemon peer to peer on its\n"
         "                             --api-socket=PATH (no bus: in a pod)\n"},
        {OPT_JSON, "--json",
         "     --json                  Print one JSON document on stdout (monitor, and\n"
         "                             top with --iterations above 1: one JSON document\n"
         "                             per line)\n"},
        {OPT_NO_LEGEND, "--no-legend",
         "     --no-legend             Leave out table headers and summary lines\n"},
        {OPT_INTERVAL,
         "--interval=", "     --interval=SEC          top: the sampling interval (default 1)\n"},
        {OPT_FOR, "--for=", "     --for=SEC               verify: the measuring window (default 10)\n"},
        {OPT_LATENCY, "--latency",
         "     --latency               verify: also probe wake-up latency (a 1 ms timer\n"
         "                             thread on each exclusive CPU and one shared CPU;\n"
         "                             SCHED_FIFO as root)\n"},
        {OPT_ITERATIONS, "--iterations=",
         "     --iterations=N          top: stop after N reports (default: until\n"
         "                             Ctrl-C; with --json 1)\n"},
        {OPT_LISTEN, "--listen=",
         "     --listen=ADDRESS:PORT   metrics: serve GET /metrics over HTTP on\n"
         "                             127.0.0.1:9187, [::1]:9187 or :9187 (every\n"
         "                             address); \"systemd\": on the socket systemd passed\n"},
        {OPT_CONFIG_DIR, "--config-dir=",
         "     --config-dir=DIR        validate, plan: read DIR/affinityd.yaml and\n"
         "                             DIR/policy.d/*.yaml instead of the standard path\n"},
        {OPT_HERE, "--here",
         "     --here                  validate: also resolve against this machine\n"
         "                             (pending policies are warnings)\n"},
        {OPT_TOPOLOGY, "--topology=",
         "     --topology=FILE.xml     validate, plan: resolve against this hwloc XML\n"
         "                             topology (lstopo FILE.xml) instead of this machine;\n"
         "                             validate: a policy that can't be resolved there\n"
         "                             is an error\n"},
        {OPT_INTERRUPTS, "--interrupts=",
         "     --interrupts=FILE       plan, with --topology: the IRQs of a saved\n"
         "                             /proc/interrupts of that machine\n"},
        {OPT_SYSFS, "--sysfs=",
         "     --sysfs=DIR             plan, with --topology: the queues of a copy of\n"
         "                             that machine's /sys/class/net/*/queues under DIR\n"},
};

/* Returns 1 to go on (--help too: main() says whose help), 0 to exit successfully (--version),
 * -EINVAL on a usage error. */
static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_BUS_ADDRESS,
                ARG_SOCKET,
                ARG_JSON,
                ARG_CONFIG_DIR,
                ARG_TOPOLOGY,
                ARG_HERE,
                ARG_NO_LEGEND,
                ARG_INTERVAL,
                ARG_ITERATIONS,
                ARG_LISTEN,
                ARG_INTERRUPTS,
                ARG_SYSFS,
                ARG_FOR,
                ARG_LATENCY,
        };
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, ARG_VERSION},
                {"bus-address", required_argument, NULL, ARG_BUS_ADDRESS},
                {"socket", required_argument, NULL, ARG_SOCKET},
                {"json", no_argument, NULL, ARG_JSON},
                {"config-dir", required_argument, NULL, ARG_CONFIG_DIR},
                {"topology", required_argument, NULL, ARG_TOPOLOGY},
                {"here", no_argument, NULL, ARG_HERE},
                {"no-legend", no_argument, NULL, ARG_NO_LEGEND},
                {"interval", required_argument, NULL, ARG_INTERVAL},
                {"iterations", required_argument, NULL, ARG_ITERATIONS},
                {"listen", required_argument, NULL, ARG_LISTEN},
                {"interrupts", required_argument, NULL, ARG_INTERRUPTS},
                {"sysfs", required_argument, NULL, ARG_SYSFS},
                {"for", required_argument, NULL, ARG_FOR},
                {"latency", no_argument, NULL, ARG_LATENCY},
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        arg_help = true;
                        break;
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
                case ARG_HERE:
                        arg_here = true;
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
                case ARG_LATENCY:
                        arg_latency = true;
                        break;
                case ARG_FOR: {
                        char *end;
                        double sec;

                        errno = 0;
                        sec = strtod(optarg, &end);
                        /* 100 ms .. 1 day */
                        if (errno != 0 || end == optarg || *end || !isfinite(sec) || sec < 0.1 ||
                            sec > 86400) {
                                fprintf(stderr,
                                        "--for= needs a number of seconds from 0.1 to 86400, not \"%s\".\n",
                                        optarg);
                                return -EINVAL;
                        }
                        arg_for_usec = (uint64_t)(sec * 1e6 + 0.5);
                        arg_for_set = true;
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
        VERB_NO_ARGS,      /* takes no arguments */
        VERB_ONE_PID,      /* explain PID: one argument */
        VERB_PATHS,        /* validate, plan: PATHs, or --config-dir= */
        VERB_POLICY_NAMES, /* verify: POLICY names, or none for all */
} VerbArgs;

#define EXIT_STATUS_BUS "0 ok, 1 failure, 2 usage error, 3 affinityd not running."

/*
 * The verbs. Each one's help is here and nowhere else: the global --help lists the verbs with
 * their summaries, VERB --help shows the synopsis, the summary, the options of the verb and
 * its exit status.
 */
static const struct Verb {
        const char *name;
        VerbArgs args;
        int (*run)(char **args);
        unsigned options;        /* the Option bits that apply */
        const char *summary;     /* what it does: lines of up to 52 columns, '\n' between */
        const char *exit_status; /* "0 ok, 1 failure, ...", lines of up to 64 columns */
} verbs[] = {
        {"status", VERB_NO_ARGS, verb_status, OPTS_BUS | OPT_JSON | OPT_NO_LEGEND,
         "Show the daemon's state, counters and pending policies", EXIT_STATUS_BUS},
        {"policies", VERB_NO_ARGS, verb_policies, OPTS_BUS | OPT_JSON | OPT_NO_LEGEND,
         "List the policies: file and line, CPUs, active or\n"
         "pending and why",
         EXIT_STATUS_BUS},
        {"processes", VERB_NO_ARGS, verb_processes, OPTS_BUS | OPT_JSON | OPT_NO_LEGEND,
         "List the managed processes: policy and CPUs applied", EXIT_STATUS_BUS},
        {"explain", VERB_ONE_PID, verb_explain, OPTS_BUS | OPT_JSON | OPT_NO_LEGEND,
         "Show which policy matched PID and why, which didn't\n"
         "and why not, and per thread the CPUs applied and now,\n"
         "the last CPU, migrations, run-queue delay and\n"
         "involuntary switches since placement",
         "0 ok, 1 failure, 2 usage error, 3 affinityd not running,\n"
         "4 no such process."},
        {"irqs", VERB_NO_ARGS, verb_irqs, OPTS_BUS | OPT_JSON | OPT_NO_LEGEND,
         "List every IRQ: the rule that places it, the CPUs\n"
         "asked for and in effect, its state and why",
         EXIT_STATUS_BUS},
        {"net", VERB_NO_ARGS, verb_net, OPTS_BUS | OPT_JSON | OPT_NO_LEGEND,
         "List the RPS/XPS settings of every network queue:\n"
         "CPUs, RFS flow count, rule and state",
         EXIT_STATUS_BUS},
        {"top", VERB_NO_ARGS, verb_top, OPTS_BUS | OPT_JSON | OPT_NO_LEGEND | OPT_INTERVAL | OPT_ITERATIONS,
         "Show live, per policy and per thread, migrations/s,\n"
         "run-queue delay p50/p99 and involuntary switches/s",
         EXIT_STATUS_BUS},
        {"verify", VERB_POLICY_NAMES, verb_verify,
         OPTS_BUS | OPT_JSON | OPT_NO_LEGEND | OPT_FOR | OPT_LATENCY,
         "Measure for --for=SEC whether the policies (all, or\n"
         "those named) hold: foreign CPU time, migrations,\n"
         "run-queue delay, intruders, IRQs on exclusive CPUs;\n"
         "one verdict per policy",
         "0 every policy as declared, 1 a violation, 2 an error\n"
         "(usage, no such policy, daemon unreachable)."},
        {"monitor", VERB_NO_ARGS, verb_monitor, OPT_BUS_ADDRESS | OPT_JSON | OPT_NO_LEGEND,
         "Follow the daemon's signals (placements, failures,\n"
         "reloads, drift), one line each, until Ctrl-C; says\n"
         "when the daemon goes away and comes back",
         "0 stopped by Ctrl-C or SIGTERM, 1 failure, 2 usage error,\n"
         "3 affinityd not running (or no bus)."},
        {"metrics", VERB_NO_ARGS, verb_metrics, OPTS_BUS | OPT_LISTEN,
         "Print the daemon's metrics in the Prometheus text\n"
         "format; with --listen, serve them over HTTP",
         "0 ok (with --listen: stopped by SIGINT or SIGTERM), 1 failure,\n"
         "2 usage error (--json too), 3 affinityd not running."},
        {"reload", VERB_NO_ARGS, verb_reload, OPTS_BUS | OPT_JSON,
         "Reload the configuration and wait until it is done",
         "0 reloaded, 1 failure (an invalid configuration, which the\n"
         "daemon does not take; not root), 2 usage error, 3 affinityd\n"
         "not running."},
        {"rescan", VERB_NO_ARGS, verb_rescan, OPTS_BUS | OPT_JSON,
         "Rescan /proc and the devices and wait until done",
         "0 rescanned, 1 failure (not root), 2 usage error, 3 affinityd\n"
         "not running."},
        {"validate", VERB_PATHS, verb_validate, OPT_JSON | OPT_CONFIG_DIR | OPT_HERE | OPT_TOPOLOGY,
         "Check policy files (default: the standard search\n"
         "path; a directory is read as a config dir\n"
         "(affinityd.yaml, policy.d/) or else as a\n"
         "policy.d): the schema, types, values and the checks\n"
         "across files, for any machine; with --here also\n"
         "resolved on this machine (pending: a warning),\n"
         "with --topology on that one (pending: an error)",
         "0 valid (with --topology: every policy resolved there),\n"
         "1 invalid, a policy that can't be resolved on --topology, or a\n"
         "topology that can't be loaded, 2 usage error."},
        {"plan", VERB_PATHS, verb_plan,
         OPT_JSON | OPT_CONFIG_DIR | OPT_TOPOLOGY | OPT_INTERRUPTS | OPT_SYSFS,
         "Show offline, for each policy, the CPUs and NUMA\n"
         "nodes it resolves to and why, its thread rules, or\n"
         "why it is pending; for each irqs: rule the IRQs it\n"
         "takes and their CPUs, for each net: rule the RPS/XPS\n"
         "masks and RFS flow counts of the queues it sets (with\n"
         "--topology: the devices the XML lists, the IRQs of\n"
         "--interrupts, the queues of --sysfs)",
         "0 planned (pending policies too), 1 an invalid configuration\n"
         "or a topology that can't be loaded, 2 usage error."},
};

/* "PID", "[PATH...]" or "": what follows the verb on its command line. */
static const char *verb_arguments(const struct Verb *v) {
        return v->args == VERB_ONE_PID         ? "PID"
                : v->args == VERB_PATHS        ? "[PATH...]"
                : v->args == VERB_POLICY_NAMES ? "[POLICY...]"
                                               : "";
}

/* text with indent spaces after each newline. */
static void print_indented(const char *text, int indent) {
        for (const char *p = text; *p; p++) {
                putchar(*p);
                if (*p == '\n')
                        printf("%*s", indent, "");
        }
}

static void help(void) {
        printf("%s [OPTIONS] COMMAND\n"
               "\n"
               "Query and control affinityd, the CPU placement daemon.\n"
               "\n"
               "Commands:\n",
               program_invocation_short_name);
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                _cleanup_free_ char *synopsis = NULL;

                if (asprintf(&synopsis, "%s %s", verbs[i].name, verb_arguments(&verbs[i])) < 0)
                        synopsis = NULL;
                printf("  %-20s ", synopsis ?: verbs[i].name);
                print_indented(verbs[i].summary, 23);
                putchar('\n');
        }
        printf("\n"
               "Options:\n"
               "  -h --help                  Show this help (COMMAND --help: that command's)\n"
               "     --version               Show the version\n");
        for (size_t i = 0; i < ELEMENTSOF(options_help); i++)
                fputs(options_help[i].help, stdout);
        printf("\n"
               "Exit status: 0 ok, 1 failure, 2 usage error, 3 affinityd not running,\n"
               "4 no such process (explain).\n");
}

/* VERB --help: its synopsis, what it does, the options that apply to it, its exit status. */
static void verb_help(const struct Verb *v) {
        printf("%s [OPTIONS] %s%s%s\n\n", program_invocation_short_name, v->name,
               v->args == VERB_NO_ARGS ? "" : " ", verb_arguments(v));
        print_indented(v->summary, 0);
        printf(".\n\n"
               "Options of %s (each may come before or after it):\n"
               "  -h --help                  Show this help\n",
               v->name);
        for (size_t i = 0; i < ELEMENTSOF(options_help); i++)
                if (v->options & options_help[i].option)
                        fputs(options_help[i].help, stdout);
        printf("\nExit status: %s\n", v->exit_status);
}

/* The OPTS_VERB_ONLY options given. */
static unsigned verb_only_options_given(void) {
        return (arg_for_set ? OPT_FOR : 0) | (arg_latency ? OPT_LATENCY : 0) |
                (arg_interval_set ? OPT_INTERVAL : 0) | (arg_iterations > 0 ? OPT_ITERATIONS : 0) |
                (arg_listen ? OPT_LISTEN : 0) | (arg_config_dir ? OPT_CONFIG_DIR : 0) |
                (arg_here ? OPT_HERE : 0) | (arg_topology ? OPT_TOPOLOGY : 0) |
                (arg_interrupts ? OPT_INTERRUPTS : 0) | (arg_sysfs ? OPT_SYSFS : 0);
}

/* "OPTION is only for top." or "... for validate and plan.", from the table. */
static void refuse_option(Option option) {
        size_t n = 0, k = 0;

        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                n += (verbs[i].options & option) != 0;
        for (size_t i = 0; i < ELEMENTSOF(options_help); i++)
                if (options_help[i].option == option)
                        fprintf(stderr, "%s is only for ", options_help[i].name);
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (verbs[i].options & option) {
                        k++;
                        fprintf(stderr, "%s%s", k == 1 ? "" : k == n ? " and " : ", ", verbs[i].name);
                }
        fputs(".\n", stderr);
}

/* Whether the options and the n_args arguments suit verb v; says why not. Returns 0 or
 * EXIT_USAGE. */
static int check_verb(const struct Verb *v, size_t n_args) {
        unsigned refused = verb_only_options_given() & ~v->options;

        if (refused != 0) {
                refuse_option((Option)(refused & -refused)); /* the first one */
                return EXIT_USAGE;
        }
        if (arg_config_dir && n_args > 0) {
                fprintf(stderr, "%s: give either --config-dir=DIR or PATHs, not both.\n", v->name);
                return EXIT_USAGE;
        }
        if ((arg_interrupts || arg_sysfs) && !arg_topology) {
                fprintf(stderr, "%s is only for plan with --topology= (this machine's are read from %s).\n",
                        arg_interrupts ? "--interrupts=" : "--sysfs=",
                        arg_interrupts ? "/proc/interrupts" : "/sys/class/net");
                return EXIT_USAGE;
        }
        if (arg_here && arg_topology) {
                fprintf(stderr, "%s: give either --here or --topology=FILE.xml, not both.\n", v->name);
                return EXIT_USAGE;
        }
        if (v->args == VERB_ONE_PID && n_args != 1) {
                fprintf(stderr, "%s takes one PID.\n", v->name);
                return EXIT_USAGE;
        }
        if (v->args == VERB_NO_ARGS && n_args > 0) {
                fprintf(stderr, "%s takes no arguments.\n", v->name);
                return EXIT_USAGE;
        }
        return 0;
}

int main(int argc, char *argv[]) {
        const struct Verb *v = NULL;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_OK;

        if (optind >= argc) {
                if (arg_help) {
                        help();
                        return EXIT_OK;
                }
                fprintf(stderr, "Missing command; see %s --help.\n", program_invocation_short_name);
                return EXIT_USAGE;
        }
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(argv[optind], verbs[i].name))
                        v = &verbs[i];
        if (!v) {
                fprintf(stderr, "Unknown command \"%s\"; see %s --help.\n", argv[optind],
                        program_invocation_short_name);
                return EXIT_USAGE;
        }
        if (arg_help) {
                verb_help(v);
                return EXIT_OK;
        }

        r = check_verb(v, (size_t)(argc - optind - 1));
        if (r > 0)
                return r;
        return v->run(argv + optind + 1);
}
