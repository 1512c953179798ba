/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* affinityd: main(), the command line, logging setup. The work is in the Manager (manager.h). */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-introspect.h"
#include "cgroup-ns.h"
#include "config.h"
#include "log.h"
#include "manager.h"

#define EXIT_USAGE 2

static ManagerOptions arg_options = {.bus_kind = MANAGER_BUS_SYSTEM};
static int arg_log_level = LOG_INFO;
static LogTarget arg_log_target = LOG_TARGET_AUTO;
static const char *arg_bus_introspect = NULL;

static void help(void) {
        printf("NAME\n"
               "       affinityd - place processes and threads on CPUs by policy\n"
               "\n"
               "SYNOPSIS\n"
               "       affinityd [OPTIONS...]\n"
               "\n"
               "DESCRIPTION\n"
               "       affinityd enforces the CPU placement declared in YAML policies. It follows\n"
               "       processes through the kernel's proc connector: when a process matching a\n"
               "       policy execs (or is forked by a managed process, or creates a thread, or\n"
               "       renames one), every one of its threads gets the policy's CPUs with\n"
               "       sched_setaffinity(2). Processes already running are placed at startup.\n"
               "       A process that stops matching after a reload gets its original affinity\n"
               "       back. irqs: and net: rules place IRQs (/proc/irq/N/smp_affinity_list) and\n"
               "       the RPS/XPS masks and RFS flow counts of network queues the same way, as\n"
               "       devices and queues appear. The daemon always runs in the foreground\n"
               "       (systemd Type=notify) and serves org.affinityd1 on D-Bus; see\n"
               "       affinityctl(1).\n"
               "\n"
               "OPTIONS\n"
               "       --config-dir=DIR\n"
               "           Read DIR/affinityd.yaml and DIR/policy.d/*.yaml only, instead of the\n"
               "           standard search path (see FILES).\n"
               "\n"
               "       --bus=system|session|none\n"
               "           The bus to serve org.affinityd1 on. Default: system. With none, no\n"
               "           D-Bus interface; signals still work.\n"
               "\n"
               "       --bus-address=ADDRESS\n"
               "           Connect to the bus at ADDRESS (a D-Bus address such as\n"
               "           unix:path=/run/test-bus) instead of the one --bus names.\n"
               "\n"
               "       --topology=FILE.xml\n"
               "           Plan against an hwloc XML topology (lstopo FILE.xml) instead of the\n"
               "           live machine. Implies --dry-run.\n"
               "\n"
               "       --state-dir=DIR\n"
               "           Where originals are persisted before the first write, so a restarted\n"
               "           daemon can give them back: the placement of every managed thread in\n"
               "           the journal DIR/originals, and the affinity of every IRQ and the\n"
               "           rps_cpus, xps_cpus and rps_flow_cnt of every queue (and\n"
               "           net.core.rps_sock_flow_entries) an irqs: or net: rule set, in\n"
               "           DIR/targets/. Default: " AFFINITYD_RUNTIME_DIR ".\n"
               "\n"
               "       --systemd-bus-address=ADDRESS\n"
               "           Reach systemd (for via: systemd policies) at ADDRESS instead of the\n"
               "           system bus.\n"
               "\n"
               "       --dry-run\n"
               "           Match and plan as usual and log at info level what would be done, but\n"
               "           change no affinity, IRQ or queue setting.\n"
               "\n"
               "       --api-socket=PATH\n"
               "           Serve the org.affinityd1 API peer to peer on the unix socket PATH too\n"
               "           (mode 0600), for hosts and pods without a system bus:\n"
               "           affinityctl --socket=PATH. Signals are sent on the bus only.\n"
               "\n"
               "       --watch-config\n"
               "           Reload by itself when the configuration's files change (inotify on its\n"
               "           directories, a kubelet ConfigMap volume included), as SIGHUP does: a\n"
               "           configuration with errors is logged and the running one kept.\n"
               "\n"
               "       --log-level=LEVEL\n"
               "           err, warning, notice, info (default) or debug. Per-event detail is\n"
               "           logged at debug only.\n"
               "\n"
               "       --log-target=auto|console|journal\n"
               "           Where to log. auto (default): the journal, with the structured fields\n"
               "           POLICY=, PID=, COMM=, CPUS=, when stderr is connected to it\n"
               "           ($JOURNAL_STREAM), else stderr.\n"
               "\n"
               "       --bus-introspect=FILE\n"
               "           Write the D-Bus introspection XML of org.affinityd1.Manager and\n"
               "           org.affinityd1.Policy to FILE (- for standard output) and exit,\n"
               "           without reading any configuration.\n"
               "\n"
               "       -h, --help\n"
               "           Show this help and exit.\n"
               "\n"
               "       --version\n"
               "           Show the version and exit.\n"
               "\n"
               "SIGNALS\n"
               "       SIGHUP reloads the configuration (as the D-Bus Reload method): if any file\n"
               "       is invalid the running configuration stays in force and the errors are\n"
               "       logged. SIGTERM and SIGINT exit cleanly.\n"
               "\n"
               "FILES\n"
               "       " AFFINITYD_CONF_DIR "/affinityd.yaml\n"
               "           Daemon and machine-wide settings: reserve:, allow-realtime:,\n"
               "           restore-on-exit:, poll-interval:, drift-interval:, effect-interval:, rfs:.\n"
               "       " AFFINITYD_VENDOR_POLICY_DIR "/*.yaml,\n"
               "       " AFFINITYD_RUNTIME_DIR "/policy.d/*.yaml,\n"
               "       " AFFINITYD_CONF_DIR "/policy.d/*.yaml\n"
               "           Rules: policies: (processes and threads), irqs: (IRQ affinity) and\n"
               "           net: (RPS/XPS of network queues), any of them in one file. A file in\n"
               "           /etc overrides a same-named one in /run, which overrides /usr/lib; a\n"
               "           symlink to /dev/null masks it. The files are read in lexical order of\n"
               "           their names; for each process, IRQ or device the first matching rule\n"
               "           of its kind wins.\n"
               "\n"
               "EXIT STATUS\n"
               "       0 after SIGTERM/SIGINT, 1 on a failure (an invalid configuration at\n"
               "       startup, no bus), 2 on a usage error.\n"
               "\n"
               "SEE ALSO\n"
               "       affinityctl(1), affinityd.yaml(5), sched_setaffinity(2), taskset(1)\n");
}

static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_CONFIG_DIR,
                ARG_BUS,
                ARG_BUS_ADDRESS,
                ARG_TOPOLOGY,
                ARG_DRY_RUN,
                ARG_WATCH_CONFIG,
                ARG_API_SOCKET,
                ARG_STATE_DIR,
                ARG_SYSTEMD_BUS_ADDRESS,
                ARG_LOG_LEVEL,
                ARG_LOG_TARGET,
                ARG_BUS_INTROSPECT,
        };
        static const struct option options[] = {
                {"help", no_argument, NULL, 'h'},
                {"version", no_argument, NULL, ARG_VERSION},
                {"config-dir", required_argument, NULL, ARG_CONFIG_DIR},
                {"bus", required_argument, NULL, ARG_BUS},
                {"bus-address", required_argument, NULL, ARG_BUS_ADDRESS},
                {"topology", required_argument, NULL, ARG_TOPOLOGY},
                {"dry-run", no_argument, NULL, ARG_DRY_RUN},
                {"watch-config", no_argument, NULL, ARG_WATCH_CONFIG},
                {"api-socket", required_argument, NULL, ARG_API_SOCKET},
                {"state-dir", required_argument, NULL, ARG_STATE_DIR},
                {"systemd-bus-address", required_argument, NULL, ARG_SYSTEMD_BUS_ADDRESS},
                {"log-level", required_argument, NULL, ARG_LOG_LEVEL},
                {"log-target", required_argument, NULL, ARG_LOG_TARGET},
                {"bus-introspect", required_argument, NULL, ARG_BUS_INTROSPECT},
                {},
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("affinityd %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_CONFIG_DIR:
                        arg_options.config_dir = optarg;
                        break;
                case ARG_BUS:
                        arg_options.bus_kind = manager_bus_kind_from_string(optarg);
                        if (arg_options.bus_kind < 0) {
                                fprintf(stderr,
                                        "affinityd: --bus: expected system, session or none, got \"%s\"\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_BUS_ADDRESS:
                        arg_options.bus_address = optarg;
                        break;
                case ARG_TOPOLOGY:
                        arg_options.topology_path = optarg;
                        arg_options.dry_run = true;
                        break;
                case ARG_DRY_RUN:
                        arg_options.dry_run = true;
                        break;
                case ARG_WATCH_CONFIG:
                        arg_options.watch_config = true;
                        break;
                case ARG_API_SOCKET:
                        arg_options.api_socket = optarg;
                        break;
                case ARG_STATE_DIR:
                        arg_options.state_dir = optarg;
                        break;
                case ARG_SYSTEMD_BUS_ADDRESS:
                        arg_options.systemd_bus_address = optarg;
                        break;
                case ARG_LOG_LEVEL:
                        arg_log_level = log_level_from_string(optarg);
                        if (arg_log_level < 0) {
                                fprintf(stderr,
                                        "affinityd: --log-level: expected err, warning, notice, info or "
                                        "debug, got \"%s\"\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_LOG_TARGET:
                        arg_log_target = log_target_from_string(optarg);
                        if (arg_log_target < 0) {
                                fprintf(stderr,
                                        "affinityd: --log-target: expected auto, console or journal, got "
                                        "\"%s\"\n",
                                        optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_BUS_INTROSPECT:
                        arg_bus_introspect = optarg;
                        break;
                case '?':
                        return -EINVAL;
                default:
                        abort();
                }

        if (optind < argc) {
                fprintf(stderr, "affinityd: unexpected argument \"%s\" (see --help)\n", argv[optind]);
                return -EINVAL;
        }
        if (arg_options.bus_address && arg_options.bus_kind == MANAGER_BUS_NONE) {
                fprintf(stderr, "affinityd: --bus-address and --bus=none contradict each other\n");
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char *argv[]) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        if (arg_bus_introspect) {
                r = bus_introspect_write(arg_bus_introspect);
                if (r < 0) {
                        fprintf(stderr, "affinityd: --bus-introspect=%s: %s\n", arg_bus_introspect,
                                strerror(-r));
                        return EXIT_FAILURE;
                }
                return EXIT_SUCCESS;
        }

        log_set_target(arg_log_target);
        log_set_max_level(arg_log_level);

        /* Before the worker thread starts: it reads cgroup paths too. */
        (void)cgroup_ns_join_init();

        r = manager_new(&arg_options, &m);
        if (r < 0) {
                log_error_errno(r, "Failed to set up the event loop: %m");
                return EXIT_FAILURE;
        }
        log_info("affinityd %s starting (pid %d)", PACKAGE_VERSION, (int)getpid());

        r = manager_startup(m);
        if (r < 0)
                return EXIT_FAILURE;

        r = manager_run(m);
        if (r == -ENOTCONN) /* the bus went away: already logged */
                return EXIT_FAILURE;
        if (r < 0) {
                log_error_errno(r, "Event loop failed: %m");
                return EXIT_FAILURE;
        }
        log_info("Stopped");
        return EXIT_SUCCESS;
}
