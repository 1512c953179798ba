/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The policy model: what an affinityd configuration says, after schema validation and
 * before resolution against a machine (that is plan.h). Nothing here depends on the machine
 * the daemon runs on, so every file validates anywhere. See docs/policy-format.md and
 * docs/affinityd.yaml.5 for the semantics; policy-yaml.h builds these from YAML.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"
#include "regex-set.h"
#include "macro.h"

/* Bounds of the poll-interval setting, µs. */
#define POLL_INTERVAL_MIN_USEC (10U * 1000U)
#define POLL_INTERVAL_MAX_USEC (3600ULL * 1000U * 1000U)

/* Bounds of the drift-interval setting, µs. */
#define DRIFT_INTERVAL_MIN_USEC (10U * 1000U)
#define DRIFT_INTERVAL_MAX_USEC (24ULL * 3600U * 1000U * 1000U)

/* Bounds and default of the effect-interval setting, µs (docs/policy-format.md, effect-interval). The
 * default keeps effect sampling at <= 1 % of a CPU for 10,000 threads (bench-effect,
 * docs/performance.md). */
#define EFFECT_INTERVAL_MIN_USEC     (1000U * 1000U)
#define EFFECT_INTERVAL_MAX_USEC     (3600ULL * 1000U * 1000U)
#define EFFECT_INTERVAL_DEFAULT_USEC (15ULL * 1000U * 1000U)
/* effect-interval: off — no effect sampling, no isolation audit, no skew detection. */
#define EFFECT_INTERVAL_OFF UINT64_MAX

/* on-drift: what the daemon does when a managed thread's affinity or scheduling state was
 * changed by someone else (found by the drift-interval timer). */
typedef enum DriftMode {
        DRIFT_REPORT,  /* default: log it and count it, nothing more */
        DRIFT_ENFORCE, /* put the applied value back */
        DRIFT_RESPECT, /* accept the new value: stop managing the process until it execs */
        _DRIFT_MODE_MAX,
} DriftMode;

/* Where something was written: file (owned by the Config), 1-based line and column. */
typedef struct Location {
        const char *file;
        unsigned line;
        unsigned column;
} Location;

/* The facts about a process a matcher may need (bit mask); match.h loads them lazily. */
typedef enum ProcessFact {
        FACT_COMM = 1U << 0,    /* /proc/PID/comm */
        FACT_EXE = 1U << 1,     /* readlink /proc/PID/exe */
        FACT_CMDLINE = 1U << 2, /* /proc/PID/cmdline, argv joined by single spaces */
        FACT_UID = 1U << 3,     /* effective uid from /proc/PID/status */
        FACT_CGROUP = 1U << 4,  /* /proc/PID/cgroup: the v2 path, or v1 name=systemd */
        FACT_UNIT = 1U << 5,    /* the systemd unit derived from the cgroup path */
        /* Kubernetes (kube.h): the pod UID and container ID in the cgroup path, named by the
         * kubelet's records; the three are read together */
        FACT_POD = 1U << 6,       /* the pod's name */
        FACT_NAMESPACE = 1U << 7, /* the pod's namespace */
        FACT_CONTAINER = 1U << 8, /* the container's name */
} ProcessFact;

/* The facts one lookup of the kubelet's records gives. */
#define FACT_KUBE (FACT_POD | FACT_NAMESPACE | FACT_CONTAINER)

/*
 * match: every given key must match; within a key a list means "any of".
 * A NULL list means the key was not given.
 */
typedef struct Matcher {
        char **comm;          /* fnmatch(3) globs on /proc/PID/comm */
        char **exe;           /* fnmatch(3) globs on the executable path, " (deleted)" stripped */
        char **cmdline;       /* POSIX ERE source text, unanchored */
        RegexSet *cmdline_re; /* all of them compiled into one linear-time set (regex-set.h) */
        size_t n_cmdline;
        char **user;          /* user names or decimal uids; resolved to uids by plan.h */
        char **cgroup;        /* fnmatch(3) globs on the cgroup path */
        char **unit;          /* fnmatch(3) globs on the unit name */
        char **pod;           /* fnmatch(3) globs on the Kubernetes pod's name */
        char **pod_namespace; /* … on its namespace (the namespace: key) */
        char **container;     /* … on the container's name */
        unsigned facts;       /* ProcessFact mask this matcher needs */
} Matcher;

/*
 * cpus: either a literal cpu-list (taken as written), or a selector mapping that starts from
 * the online CPUs and narrows by nodes/packages/near/kind, removes reserved CPUs and CPUs
 * held by earlier exclusive policies, then takes a count (cores:/cpus:) if it asks for one —
 * physical cores first, packed into the fewest L3 and NUMA domains. In a thread rule,
 * "cpus: spread" hands each matching thread its own CPU from the policy's set.
 */
typedef enum CpuSelectorKind {
        CPU_SELECTOR_NONE,    /* no cpus: key — don't touch CPU affinity */
        CPU_SELECTOR_LITERAL, /* "2-9" */
        CPU_SELECTOR_MAPPING, /* { nodes: ..., packages: ..., near: ..., cores: N, ... } */
        CPU_SELECTOR_SPREAD,  /* thread rules only: "spread" */
} CpuSelectorKind;

typedef enum ReservedMode {
        RESERVED_AVOID, /* default: selectors leave reserved CPUs out */
        RESERVED_ALLOW, /* reserved CPUs may be used */
        RESERVED_ONLY,  /* only reserved CPUs */
} ReservedMode;

typedef enum SmtMode {
        SMT_ALL,          /* default: every PU of a chosen core may be used */
        SMT_ONE_PER_CORE, /* never two SMT siblings of one core */
} SmtMode;

/* Hybrid CPUs (hwloc CPU kinds): P-cores and E-cores. */
typedef enum CpuKindSelector {
        CPU_KIND_ANY,         /* default */
        CPU_KIND_PERFORMANCE, /* the most performant kind (hwloc's highest efficiency rank) */
        CPU_KIND_EFFICIENCY,  /* the least */
} CpuKindSelector;

/* within: what a selector's CPUs are bounded by, per process, at placement. */
typedef enum CpuWithin {
        WITHIN_NONE,   /* default: the selector's set, the same for every process */
        WITHIN_CPUSET, /* "cpuset": narrowed to the CPUs the process's cgroup allows (its
                        * cpuset.cpus.effective), read at each placement (docs/kubernetes.md) */
} CpuWithin;

typedef struct CpuSelector {
        CpuSelectorKind kind;
        Location location; /* of the cpus: value */
        CpuSet literal;    /* CPU_SELECTOR_LITERAL */
        bool has_nodes;
        CpuSet nodes; /* NUMA node numbers */
        bool has_packages;
        CpuSet packages;  /* package (socket) numbers */
        char *near;       /* network interface name ("eth0") or PCI address ("0000:3b:00.0"), or NULL */
        unsigned n_cores; /* cores: N — N whole physical cores (0: not given) */
        unsigned n_cpus;  /* cpus: N — N PUs, one per core before any sibling (0: not given) */
        SmtMode smt;
        CpuKindSelector cpu_kind;
        bool exclusive; /* this policy's set is withheld from every later selector */
        ReservedMode reserved;
        CpuWithin within; /* policies and thread rules only; never with a count or exclusive: */
        /* avoid: (irqs: and net: rules only): the cores of these process policies' CPUs are left
         * out, when that leaves any CPU (the plan, lib/devplan.h). has_avoid false: not given;
         * true with avoid_policies false and n_avoid 0: "avoid: []", sharing cores is meant. */
        bool has_avoid;
        bool avoid_policies;       /* "avoid: policies": every process policy */
        char **avoid;              /* the policy names, NULL-terminated (NULL when none) */
        Location *avoid_locations; /* parallel to avoid: where each name is written */
        size_t n_avoid;
        Location avoid_location; /* of the avoid: value */
} CpuSelector;

/* per: of a reserve selector: where its cores: count applies. */
typedef enum ReservePer {
        RESERVE_PER_NONE,    /* default: cores: N in all, over what the selector covers */
        RESERVE_PER_PACKAGE, /* cores: N in each package (socket) it covers */
        RESERVE_PER_NODE,    /* cores: N in each NUMA node it covers */
} ReservePer;

/*
 * reserve: as a selector mapping ({ cores: 1, per: package }, { cores: 2, near: eth0 }): the
 * housekeeping CPUs are whole cores (every SMT sibling of a chosen core), chosen on each
 * machine by the plan (plan.h). Keys: nodes:, packages:, near:, kind:, cores: (required), per:.
 */
typedef struct ReserveSelector {
        CpuSelector cpus; /* first: the selector keys' parsers take the struct as a CpuSelector */
        ReservePer per;
} ReserveSelector;

/*
 * The words of scheduler: (policy: and io: class:) and the kernel values they stand for; the
 * appliers (apply-sched.h) set and read back these values.
 */

/* I/O priority classes (linux/ioprio.h values). NONE: no I/O priority set, the kernel derives
 * one from the nice value (best-effort, level (nice + 20) / 5). */
#define POLICY_IOPRIO_CLASS_NONE 0
#define POLICY_IOPRIO_CLASS_RT   1
#define POLICY_IOPRIO_CLASS_BE   2
#define POLICY_IOPRIO_CLASS_IDLE 3

/* Highest real-time priority of SCHED_FIFO / SCHED_RR (sched_get_priority_max(2)). */
#define POLICY_SCHED_PRIORITY_MAX 99U

/* The names of the scheduling policies that can be set, in the order messages list them:
 * "other", "batch", "idle", "fifo", "rr". */
#define SCHED_POLICY_NAMES_MAX 5U
extern const char *const sched_policy_names[SCHED_POLICY_NAMES_MAX];

/* The I/O priority class names, indexed by POLICY_IOPRIO_CLASS_*: "none", "realtime",
 * "best-effort", "idle". */
extern const char *const ioprio_class_names[POLICY_IOPRIO_CLASS_IDLE + 1];

/* A name of sched_policy_names ↔ SCHED_* (<sched.h>). from_string returns the SCHED_* value or
 * -EINVAL (NULL, another word); to_string returns NULL for a class it has no name for
 * (SCHED_DEADLINE is "deadline", a class only ever read back). */
int sched_policy_from_string(const char *s);
const char *sched_policy_to_string(int policy);

/* "realtime", "best-effort", "idle" ↔ POLICY_IOPRIO_CLASS_*. from_string returns the class or
 * -EINVAL ("none" is not accepted: it is what a thread has before anyone sets a class);
 * to_string gives "none" for POLICY_IOPRIO_CLASS_NONE, NULL for an unknown class. */
int ioprio_class_from_string(const char *s);
const char *ioprio_class_to_string(int io_class);

/*
 * scheduler: per policy and per thread rule (a thread rule's keys override the policy's, key
 * by key). Every field is optional; has_* says whether it was given. Real-time classes
 * (fifo, rr) are refused at validation unless affinityd.yaml says allow-realtime: true.
 */
typedef struct SchedulerSpec {
        Location location;        /* of the scheduler: value */
        Location policy_location; /* of the policy: value (real-time opt-in diagnostics) */
        Location io_location;     /* of the io: class value (real-time opt-in diagnostics) */
        bool has_policy;
        int policy; /* SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR */
        bool has_priority;
        unsigned priority; /* 1..99, fifo and rr only */
        bool has_nice;
        int nice; /* -20..19 */
        bool has_reset_on_fork;
        bool reset_on_fork;
        bool has_io;  /* io: { class: realtime|best-effort|idle, level: 0-7 } */
        int io_class; /* POLICY_IOPRIO_CLASS_* */
        unsigned io_level;
} SchedulerSpec;

/* memory: per policy only (a thread's mempolicy can only be set by the thread itself). */
typedef enum MemoryNodesKind {
        MEMORY_NONE,  /* no memory: key */
        MEMORY_LOCAL, /* nodes: local — the NUMA nodes of the policy's CPUs */
        MEMORY_NODES, /* nodes: "0-1" */
} MemoryNodesKind;

typedef struct MemorySpec {
        Location location; /* of the memory: value */
        MemoryNodesKind kind;
        CpuSet nodes; /* MEMORY_NODES */
        bool migrate; /* move pages already allocated (migrate_pages(2)); default false */
} MemorySpec;

/* via: how a policy's CPUs (and memory nodes) reach its processes. */
typedef enum PlacementVia {
        VIA_PROCESS, /* default: sched_setaffinity on every thread, per process */
        VIA_SYSTEMD, /* AllowedCPUs=/AllowedMemoryNodes= on the matched units through systemd's
                      * SetUnitProperties (runtime), falling back to VIA_PROCESS for a unit where it
                      * is not effective. Requires match: unit: with literal unit names only. */
        _PLACEMENT_VIA_MAX,
} PlacementVia;

typedef struct ThreadRule {
        char *name; /* fnmatch(3) glob on /proc/PID/task/TID/comm */
        Location location;
        CpuSelector cpus;        /* kind NONE: the thread gets the policy's set */
        SchedulerSpec scheduler; /* overrides the policy's, key by key */
        /*
         * spread-over: policy (with cpus: spread only): the rule's spread slots are the policy's,
         * shared by the matching threads of all its processes, rather than each process's own
         * (spread-over: process, the default).
         */
        bool spread_over_policy;
        Location spread_over_location; /* of the spread-over: value (zero when not given) */
} ThreadRule;

typedef struct Policy {
        char *name;
        Location location;      /* of the list item */
        Location name_location; /* of the name: value (duplicate-name diagnostics) */
        Matcher match;
        CpuSelector cpus;
        MemorySpec memory;
        SchedulerSpec scheduler;
        ThreadRule *threads;
        size_t n_threads;
        DriftMode on_drift;    /* on-drift: report (default), enforce, respect */
        PlacementVia via;      /* via: process (default) or systemd */
        Location via_location; /* of the via: value (zero when not given) */
        /*
         * processes: spread — each process of the policy holds a spread slot of the policy's
         * set (one CPU: one PU of every core first, then SMT siblings, round robin past the end),
         * and its threads that no thread rule gives CPUs of their own run there. A process
         * that forks processes of the policy (a pre-fork master) holds none and gets the whole
         * set (docs/policy-format.md, `processes:`).
         */
        bool spread_processes;
        Location processes_location; /* of the processes: value (zero when not given) */
} Policy;

/*
 * irqs: rules. An IRQ is selected when every given match key matches (a list means "any of"):
 * device: the MSI/MSI-X vectors (or the legacy INTx line) of the PCI function of a network
 * interface or of a PCI address, from sysfs; action: fnmatch(3) globs on the IRQ's action
 * names as /proc/interrupts shows them (each name of a shared IRQ is tried; an IRQ with a blank
 * name matches only "*"). At least one key is given. For an IRQ the first matching rule wins,
 * in file order. See lib/devplan.h for how the CPUs are handed out.
 */
typedef struct IrqRule {
        char *name;             /* unique among irqs: rules */
        Location location;      /* of the list item */
        Location name_location; /* of the name: value */
        char **device;          /* match.device: interface names or PCI addresses; NULL: not given */
        char **action;          /* match.action: globs; NULL: not given */
        CpuSelector cpus;       /* required (kind LITERAL or MAPPING) */
        bool spread;            /* spread: true — one CPU per IRQ, round robin, in IRQ order */
        DriftMode on_drift;     /* report (default), enforce, respect (stop managing that IRQ) */
} IrqRule;

/* xps: of a net: rule. */
typedef enum XpsMode {
        XPS_NONE,     /* no xps: key — transmit queues untouched */
        XPS_SPREAD,   /* xps: spread — the CPUs of the rule's rps: selection (without rps:, what an
                       * empty selector mapping gives) divided among the tx queues */
        XPS_SELECTOR, /* xps: SELECTOR — that selector's CPUs divided among the tx queues */
} XpsMode;

/*
 * net: rules, per network device (receive and transmit packet steering, kernel
 * Documentation/networking/scaling.rst). For a device the first rule whose device glob matches
 * wins, in file order.
 */
typedef struct NetRule {
        char *name;        /* name: if given, else a copy of device; unique among net: rules */
        Location location; /* of the list item */
        char *device;      /* fnmatch(3) glob on interface names */
        Location device_location;
        CpuSelector rps; /* kind NONE: rx queues untouched; else every rx-N/rps_cpus */
        XpsMode xps;
        CpuSelector xps_cpus;  /* XPS_SELECTOR */
        Location xps_location; /* of the xps: value */
        DriftMode on_drift;    /* report (default), enforce, respect */
} NetRule;

/* A whole configuration: affinityd.yaml settings plus every policy, in file order. */
typedef struct Config {
        char **files; /* every file read, in the order read (affinityd.yaml first if present) */
        bool has_reserve;
        CpuSet reserve; /* housekeeping CPUs as a literal cpu-list (empty for a selector) */
        Location reserve_location;
        /* reserve: as a selector mapping (cpus.kind CPU_SELECTOR_MAPPING), resolved by the plan
         * (Plan.reserve); cpus.kind CPU_SELECTOR_NONE when reserve: is a cpu-list or not given */
        ReserveSelector reserve_selector;
        bool allow_realtime; /* allow-realtime: fifo/rr may be used by policies */
        Location allow_realtime_location;
        /* restore-on-exit: give every managed thread its originals back at SIGTERM/SIGINT
         * (default false: placements survive a restart) */
        bool restore_on_exit;
        uint64_t poll_interval_usec; /* poll-interval: /proc scan period without the proc
                                      * connector, µs; 0 = not set (the daemon's default) */
        /* drift-interval: period of the drift re-check of managed threads, µs; 0 = not set (no
         * re-check, no timer) */
        uint64_t drift_interval_usec;
        /* effect-interval: period of the effect sampling of managed threads, the isolation audit
         * and the IRQ skew check, µs; 0 = not set (EFFECT_INTERVAL_DEFAULT_USEC),
         * EFFECT_INTERVAL_OFF = off. Read it with config_effect_interval_usec(). */
        uint64_t effect_interval_usec;
        /* rfs: global RFS flow table size (net.core.rps_sock_flow_entries), 0 = not set; on
         * each rx queue an rps: rule covers, rps_flow_cnt = rfs / number of rx queues */
        uint32_t rfs_entries;
        Location rfs_location;
        /* kubelet-cpu-manager-state: the kubelet's CPU manager checkpoint, whose exclusive CPUs no
         * selector hands out (kubelet-cpu-manager.h); NULL: not given (the default path); "": none
         * (not read). See config_kubelet_cpu_manager_state(). */
        char *kubelet_cpu_manager_state;
        Location kubelet_cpu_manager_state_location;
        Policy *policies; /* in the order rules apply: first match wins */
        size_t n_policies;
        IrqRule *irq_rules; /* irqs:, in file order: first match wins */
        size_t n_irq_rules;
        NetRule *net_rules; /* net:, in file order: first match wins */
        size_t n_net_rules;
        unsigned facts; /* union of every matcher's facts */
} Config;

/*
 * The path of the kubelet's CPU manager checkpoint c says to read: kubelet-cpu-manager-state:
 * as given, KUBELET_CPU_MANAGER_STATE_DEFAULT when not given (or c is NULL), NULL for
 * "kubelet-cpu-manager-state: none". Borrowed from c (or static).
 */
const char *config_kubelet_cpu_manager_state(const Config *c);

/*
 * The effect-interval c says, µs: as given, EFFECT_INTERVAL_DEFAULT_USEC when not given (or c is
 * NULL), 0 for "effect-interval: off" (no effect sampling, audit or skew check).
 */
uint64_t config_effect_interval_usec(const Config *c);

/* A new, empty Config (no files, no reserve, no policies), or NULL on OOM. */
Config *config_new(void);
/* Frees c and everything it owns, including the file names Locations point to. Accepts NULL,
 * returns NULL. */
Config *config_free(Config *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(Config *, config_free);

/*
 * Release everything a Policy / Matcher / CpuSelector / ThreadRule owns (not the struct
 * itself, which lives in an array or on the stack) and reset it to all-zero, so it may be
 * reused. NULL is accepted. Usable as _cleanup_() functions.
 */
void policy_done(Policy *p);
void matcher_done(Matcher *m);
void cpu_selector_done(CpuSelector *s);
void thread_rule_done(ThreadRule *t);
void irq_rule_done(IrqRule *r);
void net_rule_done(NetRule *r);

/*
 * Moves *p to the end of c->policies (first match wins, so this is file order) and adds its
 * matcher's facts to c->facts. *p is zeroed on success and untouched on failure. Pointers into
 * c->policies are invalidated. Returns 0 or -ENOMEM.
 */
int config_add_policy(Config *c, Policy *p);

/* Move *r to the end of c->irq_rules / c->net_rules (file order). *r is zeroed on success and
 * untouched on failure. Returns 0 or -ENOMEM. */
int config_add_irq_rule(Config *c, IrqRule *r);
int config_add_net_rule(Config *c, NetRule *r);

/* The irqs: / net: rule named name, or NULL. */
const IrqRule *config_find_irq_rule(const Config *c, const char *name);
const NetRule *config_find_net_rule(const Config *c, const char *name);

/* The policy named name, or NULL. */
const Policy *config_find_policy(const Config *c, const char *name);

/*
 * The cpus: value of s as one line of text, for D-Bus (org.affinityd1.Policy.Selector) and
 * messages: "" for CPU_SELECTOR_NONE, "spread", a literal as its canonical cpu-list ("0-3,8";
 * the model keeps the set, not the characters written), or a mapping in flow style with the
 * keys in the order the documentation lists them (nodes, packages, near, kind, reserved,
 * cores, cpus, smt, exclusive), giving only keys that differ from their defaults:
 * "{ near: eth0, cores: 8, smt: one-per-core }", "{}" for an empty mapping. A node or package
 * list holding a comma is double-quoted ("{ nodes: \"0,2\" }"), so the text is valid YAML that
 * parses back to the same selector. Newly allocated string in *ret.
 * Returns 0, -EINVAL for an unknown kind or enum value, or -ENOMEM.
 */
int cpu_selector_format(const CpuSelector *s, char **ret);

/*
 * The reserve: selector mapping of s as one line of flow-style YAML, as cpu_selector_format()
 * writes a mapping, with per: last when given: "{ cores: 1, per: package }". Newly allocated
 * string in *ret. Returns 0, -EINVAL when s is not a mapping or has an unknown enum value, or
 * -ENOMEM.
 */
int reserve_selector_format(const ReserveSelector *s, char **ret);

/*
 * Stores a copy of path in c->files and returns the stored pointer (for Location.file), or
 * NULL on OOM.
 */
const char *config_add_file(Config *c, const char *path);

/*
 * Where a message is about, as the prefix that goes before it: "FILE:LINE:COLUMN: ",
 * "FILE:LINE: " without a column, "" for l NULL or without a file. Into buf (size bytes,
 * truncated to fit); returns buf.
 */
const char *location_prefix(const Location *l, char *buf, size_t size);
