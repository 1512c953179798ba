/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * affinityctl irqs / net and the D-Bus methods behind them (ListIrqs, ListNetQueues, the device
 * counters), on the real daemon and this machine's real IRQs and a real veth pair:
 *  - a net: rule for a veth pair the test creates (4 rx / 4 tx queues, named afd<pid>a/b,
 *    deleted at the end of the run whatever happened) with rps: "1", and an irqs: rule whose
 *    action: glob matches nothing;
 *  - ListIrqs lists every numeric IRQ of /proc/interrupts (read by the test), each with the
 *    action names the file shows, no rule, its current smp_affinity_list as requested, and
 *    state "unmanaged" — or "managed" for an IRQ the kernel manages (smp_affinity read-only,
 *    mode 0444), which no rule may touch;
 *  - ListNetQueues shows rx-0..3 of the veth as rps, CPUs 1 (what rx-N/rps_cpus now holds),
 *    the rule and state "applied", with rps_flow_cnt as the file says;
 *  - affinityctl irqs / net print a table with the header line and one row per entry, and with
 *    --json one document (parsed below) that agrees with the bus entry by entry;
 *  - with no daemon on the bus both exit 3; with an argument, 2.
 */

#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "json-reader.h"
#include "macro.h"

#define RX_QUEUES 4
#define NET_RULE  "devctl-steer"
#define IRQ_RULE  "devctl-nothing"

/* The veth pair: named in main() (the runner's PID), so main() can delete it after the run. */
static char veth_a[IF_NAMESIZE], veth_b[IF_NAMESIZE];

/* ---- the machine ---- */

static int run_command(const char *fmt, ...) __attribute__((__format__(printf, 1, 2)));
static int run_command(const char *fmt, ...) {
        char cmd[512];
        va_list ap;
        int status;

        va_start(ap, fmt);
        vsnprintf(cmd, sizeof cmd, fmt, ap);
        va_end(ap);
        status = system(cmd);
        if (status < 0 || !WIFEXITED(status))
                return -1;
        return WEXITSTATUS(status);
}

/* No check assertions: also called from main(). */
static void delete_veth(void) {
        if (if_nametoindex(veth_a) > 0)
                (void)run_command("ip link del dev %s 2>/dev/null", veth_a);
        if (if_nametoindex(veth_b) > 0)
                (void)run_command("ip link del dev %s 2>/dev/null", veth_b);
}

static void create_veth(void) {
        delete_veth();
        ck_assert_msg(
                run_command(
                        "ip link add %s numtxqueues %d numrxqueues %d type veth peer name %s "
                        "numtxqueues %d numrxqueues %d",
                        veth_a, RX_QUEUES, RX_QUEUES, veth_b, RX_QUEUES, RX_QUEUES) == 0,
                "creating the veth pair %s/%s failed", veth_a, veth_b);
}

/* The first line of a file, newline stripped; NULL if it can't be read. */
static char *read_line(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *line = NULL;
        size_t size = 0;
        ssize_t n;

        if (!f)
                return NULL;
        n = getline(&line, &size, f);
        if (n < 0) {
                free(line);
                return NULL;
        }
        if (n > 0 && line[n - 1] == '\n')
                line[n - 1] = '\0';
        return line;
}

/* One numeric line of /proc/interrupts. */
typedef struct ProcIrq {
        unsigned irq;
        char *line; /* the whole line, trailing blanks removed */
} ProcIrq;

/* The numeric lines of /proc/interrupts, in file order (ascending). Returns the count. */
static size_t read_proc_irqs(ProcIrq **ret) {
        _cleanup_fclose_ FILE *f = fopen("/proc/interrupts", "re");
        ProcIrq *list = NULL;
        size_t n = 0, size = 0;
        char *line = NULL;

        ck_assert_msg(f, "/proc/interrupts: %s", strerror(errno));
        while (getline(&line, &size, f) >= 0) {
                const char *p = line + strspn(line, " ");
                char *end = NULL;
                unsigned long irq;
                size_t l;

                if (*p < '0' || *p > '9')
                        continue; /* the header, NMI:, LOC:, ... */
                irq = strtoul(p, &end, 10);
                if (*end != ':')
                        continue;
                l = strlen(line);
                while (l > 0 && strchr(" \t\n", line[l - 1]))
                        line[--l] = '\0';
                list = reallocarray(list, n + 1, sizeof(ProcIrq));
                ck_assert_ptr_nonnull(list);
                list[n].irq = (unsigned)irq;
                list[n].line = strdup(line);
                ck_assert_ptr_nonnull(list[n].line);
                n++;
        }
        free(line);
        ck_assert_uint_gt(n, 0);
        *ret = list;
        return n;
}

static void proc_irqs_free(ProcIrq *l, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(l[i].line);
        free(l);
}

/* The kernel manages the IRQ's affinity itself: its smp_affinity is read-only (0444). */
static bool irq_kernel_managed(unsigned irq) {
        char path[64];
        struct stat st;

        snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity", irq);
        if (stat(path, &st) < 0)
                return false;
        return (st.st_mode & 0222) == 0;
}

/* A hex mask as the kernel prints it ("00000002", "ff,ffffffff") as a cpu-list of CPUs < 64. */
static void mask_to_list(const char *mask, char *buf, size_t size) {
        uint64_t bits = 0;
        size_t n = 0;

        for (const char *p = mask; *p; p++) {
                if (*p == ',')
                        continue;
                ck_assert_msg(strchr("0123456789abcdefABCDEF", *p), "bad mask \"%s\"", mask);
                ck_assert_msg(bits >> 60 == 0, "mask \"%s\" wider than 64 CPUs", mask);
                bits = bits << 4 | (uint64_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
        }
        buf[0] = '\0';
        for (unsigned c = 0; c < 64; c++) {
                unsigned e = c;

                if (!(bits >> c & 1))
                        continue;
                while (e + 1 < 64 && bits >> (e + 1) & 1)
                        e++;
                if (e == c)
                        n += (size_t)snprintf(buf + n, size - n, "%s%u", n ? "," : "", c);
                else
                        n += (size_t)snprintf(buf + n, size - n, "%s%u-%u", n ? "," : "", c, e);
                ck_assert_uint_lt(n, size);
                c = e;
        }
}

/* ---- the bus ---- */

typedef struct IrqRow {
        uint32_t irq;
        char *name, *rule, *requested, *effective, *state, *reason;
} IrqRow;

typedef struct QueueRow {
        char *device, *queue, *kind, *cpus;
        uint32_t flow_cnt;
        char *rule, *state;
} QueueRow;

static sd_bus *connect_bus(Harness *h) {
        sd_bus *b = NULL;

        ck_assert_int_ge(sd_bus_new(&b), 0);
        ck_assert_int_ge(sd_bus_set_address(b, harness_bus_address(h)), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(b, 1), 0);
        ck_assert_int_ge(sd_bus_start(b), 0);
        return b;
}

static char *xstrdup(const char *s) {
        char *t = strdup(s);

        ck_assert_ptr_nonnull(t);
        return t;
}

static size_t list_irqs(Harness *h, IrqRow **ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *b = connect_bus(h);
        IrqRow *rows = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ListIrqs", &error,
                &reply, "");
        ck_assert_msg(r >= 0, "ListIrqs failed: %s: %s", strna(error.name), strna(error.message));
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(ussssss)"), 0);
        for (;;) {
                const char *name, *rule, *requested, *effective, *state, *reason;
                uint32_t irq;

                r = sd_bus_message_read(
                        reply, "(ussssss)", &irq, &name, &rule, &requested, &effective, &state, &reason);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        break;
                rows = reallocarray(rows, n + 1, sizeof(IrqRow));
                ck_assert_ptr_nonnull(rows);
                rows[n++] = (IrqRow){
                        .irq = irq,
                        .name = xstrdup(name),
                        .rule = xstrdup(rule),
                        .requested = xstrdup(requested),
                        .effective = xstrdup(effective),
                        .state = xstrdup(state),
                        .reason = xstrdup(reason),
                };
        }
        ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(b);
        *ret = rows;
        return n;
}

static void irq_rows_free(IrqRow *rows, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(rows[i].name);
                free(rows[i].rule);
                free(rows[i].requested);
                free(rows[i].effective);
                free(rows[i].state);
                free(rows[i].reason);
        }
        free(rows);
}

static size_t list_queues(Harness *h, QueueRow **ret) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *b = connect_bus(h);
        QueueRow *rows = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ListNetQueues", &error,
                &reply, "");
        ck_assert_msg(r >= 0, "ListNetQueues failed: %s: %s", strna(error.name), strna(error.message));
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(ssssuss)"), 0);
        for (;;) {
                const char *device, *queue, *kind, *cpus, *rule, *state;
                uint32_t flow_cnt;

                r = sd_bus_message_read(
                        reply, "(ssssuss)", &device, &queue, &kind, &cpus, &flow_cnt, &rule, &state);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        break;
                rows = reallocarray(rows, n + 1, sizeof(QueueRow));
                ck_assert_ptr_nonnull(rows);
                rows[n++] = (QueueRow){
                        .device = xstrdup(device),
                        .queue = xstrdup(queue),
                        .kind = xstrdup(kind),
                        .cpus = xstrdup(cpus),
                        .flow_cnt = flow_cnt,
                        .rule = xstrdup(rule),
                        .state = xstrdup(state),
                };
        }
        ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(b);
        *ret = rows;
        return n;
}

static void queue_rows_free(QueueRow *rows, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(rows[i].device);
                free(rows[i].queue);
                free(rows[i].kind);
                free(rows[i].cpus);
                free(rows[i].rule);
                free(rows[i].state);
        }
        free(rows);
}

static const QueueRow *find_queue(
        const QueueRow *rows, size_t n, const char *device, const char *queue, const char *kind) {
        for (size_t i = 0; i < n; i++)
                if (streq(rows[i].device, device) && streq(rows[i].queue, queue) &&
                    streq(rows[i].kind, kind))
                        return &rows[i];
        return NULL;
}

static uint64_t get_counter(Harness *h, const char *name) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *b = connect_bus(h);
        uint64_t v = 0;
        int r;

        r = sd_bus_get_property_trivial(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, name, &error, 't', &v);
        ck_assert_msg(r >= 0, "Get(%s) failed: %s: %s", name, strna(error.name), strna(error.message));
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(b);
        return v;
}

/* True once rx-0..RX_QUEUES-1 of the veth are listed as applied by the rule. */
static bool veth_applied(const QueueRow *rows, size_t n) {
        for (unsigned q = 0; q < RX_QUEUES; q++) {
                char queue[16];
                const QueueRow *row;

                snprintf(queue, sizeof queue, "rx-%u", q);
                row = find_queue(rows, n, veth_a, queue, "rps");
                if (!row || !streq(row->state, "applied"))
                        return false;
        }
        return true;
}

/* Waits (bounded) until the veth's rx queues are applied; returns the listing then. */
static size_t wait_veth_applied(Harness *h, QueueRow **ret) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

        for (;;) {
                QueueRow *rows = NULL;
                size_t n = list_queues(h, &rows);

                if (veth_applied(rows, n)) {
                        *ret = rows;
                        return n;
                }
                if (harness_now_usec() >= deadline) {
                        for (size_t i = 0; i < n; i++)
                                fprintf(stderr, "  %s %s %s cpus=\"%s\" flows=%u rule=\"%s\" %s\n",
                                        rows[i].device, rows[i].queue, rows[i].kind, rows[i].cpus,
                                        rows[i].flow_cnt, rows[i].rule, rows[i].state);
                        ck_abort_msg(
                                "the rx queues of %s are not listed as applied (listing above)", veth_a);
                }
                queue_rows_free(rows, n);
                usleep(50 * 1000);
        }
}

/* ---- the test ---- */

static void start(Harness *h) {
        create_veth();
        harness_write_policy(
                h, "30-devices.yaml",
                "irqs:\n"
                "  - name: " IRQ_RULE "\n"
                "    match: { action: \"afd-no-such-irq*\" }\n"
                "    cpus: \"0\"\n"
                "net:\n"
                "  - device: \"%s\"\n"
                "    name: " NET_RULE "\n"
                "    rps: \"1\"\n",
                veth_a);
        harness_start_daemon(h);
}

/* ListIrqs: every numeric IRQ of /proc/interrupts, with its names and its state. */
START_TEST(test_list_irqs) {
        Harness *h = harness_new();
        ProcIrq *proc = NULL;
        IrqRow *rows = NULL;
        size_t n_proc, n_rows;
        unsigned n_managed = 0;

        start(h);
        n_rows = list_irqs(h, &rows);
        n_proc = read_proc_irqs(&proc);

        ck_assert_msg(n_rows == n_proc, "ListIrqs has %zu IRQs, /proc/interrupts %zu", n_rows, n_proc);
        for (size_t i = 0; i < n_proc; i++) {
                const IrqRow *row = &rows[i];
                bool managed = irq_kernel_managed(proc[i].irq);
                char path[64];
                _cleanup_free_ char *affinity = NULL;
                size_t ln = strlen(proc[i].line), lname = strlen(row->name);

                /* Same order (ascending), same numbers. */
                ck_assert_msg(
                        row->irq == proc[i].irq, "entry %zu is IRQ %u, /proc/interrupts has %u", i, row->irq,
                        proc[i].irq);
                /* The action names are what the line ends with (blank: ""). */
                if (lname > 0)
                        ck_assert_msg(
                                ln >= lname && streq(proc[i].line + ln - lname, row->name) &&
                                        strchr(" \t", proc[i].line[ln - lname - 1]),
                                "IRQ %u is named \"%s\", its line is \"%s\"", row->irq, row->name,
                                proc[i].line);
                /* The rule matches nothing. */
                ck_assert_msg(streq(row->rule, ""), "IRQ %u is won by rule \"%s\"", row->irq, row->rule);
                if (managed) {
                        ck_assert_msg(
                                streq(row->state, "managed"), "kernel-managed IRQ %u has state \"%s\"",
                                row->irq, row->state);
                        n_managed++;
                } else
                        ck_assert_msg(
                                streq(row->state, "unmanaged"), "IRQ %u has state \"%s\"", row->irq,
                                row->state);
                /* With no rule, requested is the IRQ's current smp_affinity_list. */
                snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity_list", row->irq);
                affinity = read_line(path);
                if (affinity)
                        ck_assert_msg(
                                streq(row->requested, affinity),
                                "IRQ %u: requested \"%s\", smp_affinity_list \"%s\"", row->irq,
                                row->requested, affinity);
                /* Effective, when known, is a cpu-list of online CPUs. */
                ck_assert_msg(
                        harness_cpus_subset(row->effective, harness_online_cpus()),
                        "IRQ %u: effective \"%s\", online %s", row->irq, row->effective,
                        harness_online_cpus());
        }
        /* A kernel-managed IRQ (e.g. a virtio or NVMe queue's): its state must be checked too. */
        ck_assert_msg(n_managed >= 1, "no kernel-managed IRQ found here: nothing checked their state");

        ck_assert_uint_eq(get_counter(h, "IrqsPlaced"), 0);
        ck_assert_uint_eq(get_counter(h, "IrqRefusals"), 0);

        irq_rows_free(rows, n_rows);
        proc_irqs_free(proc, n_proc);
}
END_TEST

/* ListNetQueues: the veth's rx queues under the rule, with what the kernel holds now. */
START_TEST(test_list_net_queues) {
        Harness *h = harness_new();
        QueueRow *rows = NULL;
        size_t n;

        start(h);
        n = wait_veth_applied(h, &rows);
        for (unsigned q = 0; q < RX_QUEUES; q++) {
                char queue[16], path[128], list[256];
                _cleanup_free_ char *mask = NULL, *flows = NULL;
                const QueueRow *row;

                snprintf(queue, sizeof queue, "rx-%u", q);
                row = find_queue(rows, n, veth_a, queue, "rps");
                ck_assert_str_eq(row->cpus, "1");
                ck_assert_str_eq(row->rule, NET_RULE);
                snprintf(path, sizeof path, "/sys/class/net/%s/queues/%s/rps_cpus", veth_a, queue);
                mask = read_line(path);
                ck_assert_msg(mask, "%s: %s", path, strerror(errno));
                mask_to_list(mask, list, sizeof list);
                ck_assert_msg(
                        streq(list, "1"), "%s is %s (CPUs \"%s\"), the rule asked for 1", path, mask, list);
                snprintf(path, sizeof path, "/sys/class/net/%s/queues/%s/rps_flow_cnt", veth_a, queue);
                flows = read_line(path);
                ck_assert_msg(flows, "%s: %s", path, strerror(errno));
                ck_assert_uint_eq(row->flow_cnt, strtoul(flows, NULL, 10));
        }
        /* The peer is not covered by the rule. */
        for (size_t i = 0; i < n; i++)
                if (streq(rows[i].device, veth_b))
                        ck_assert_msg(
                                streq(rows[i].rule, "") && !streq(rows[i].state, "applied"),
                                "%s %s is under rule \"%s\", state %s", veth_b, rows[i].queue, rows[i].rule,
                                rows[i].state);
        ck_assert_uint_ge(get_counter(h, "QueuesPlaced"), RX_QUEUES);
        ck_assert_uint_eq(get_counter(h, "QueueFailures"), 0);

        queue_rows_free(rows, n);
}
END_TEST

/* affinityctl irqs: the table and --json agree with the bus. */
START_TEST(test_ctl_irqs) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL;
        _cleanup_(json_freep) Json *doc = NULL;
        const Json *list;
        IrqRow *rows = NULL;
        size_t n;
        int r;

        start(h);
        n = list_irqs(h, &rows);

        r = harness_run_ctl(h, &out, &err, "--json", "irqs", NULL);
        ck_assert_msg(r == 0, "affinityctl --json irqs exited %d: %s", r, err);
        doc = json_parse_document(out);
        list = jarray(doc, "irqs");
        ck_assert_msg(list->n_items == n, "--json lists %zu IRQs, the bus %zu", list->n_items, n);
        for (size_t i = 0; i < n; i++) {
                const Json *e = list->items[i];

                ck_assert_uint_eq(jnum(e, "irq"), rows[i].irq);
                ck_assert_str_eq(jstr(e, "name"), rows[i].name);
                ck_assert_str_eq(jstr(e, "rule"), rows[i].rule);
                ck_assert_str_eq(jstr(e, "requested"), rows[i].requested);
                ck_assert_str_eq(jstr(e, "effective"), rows[i].effective);
                ck_assert_str_eq(jstr(e, "state"), rows[i].state);
                ck_assert_str_eq(jstr(e, "reason"), rows[i].reason);
        }
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "irqs", NULL);
        ck_assert_msg(r == 0, "affinityctl irqs exited %d: %s", r, err);
        ck_assert_msg(
                strncmp(out, "IRQ ", 4) == 0 && strstr(out, " NAME ") && strstr(out, " RULE ") &&
                        strstr(out, " REQUESTED ") && strstr(out, " EFFECTIVE ") && strstr(out, " STATE"),
                "no header line:\n%s", out);
        /* One row per IRQ, starting with its number, in order, with its state. */
        {
                const char *p = strchr(out, '\n');

                for (size_t i = 0; i < n; i++) {
                        char *end = NULL;
                        const char *eol;

                        ck_assert_msg(p && p[1], "the table ends before IRQ %u:\n%s", rows[i].irq, out);
                        p++;
                        eol = strchrnul(p, '\n');
                        ck_assert_msg(
                                strtoul(p, &end, 10) == rows[i].irq && end != p && *end == ' ',
                                "row %zu is not IRQ %u:\n%s", i, rows[i].irq, out);
                        ck_assert_msg(
                                memmem(p, (size_t)(eol - p), rows[i].state, strlen(rows[i].state)),
                                "the row of IRQ %u lacks its state %s:\n%s", rows[i].irq, rows[i].state,
                                out);
                        p = eol;
                }
        }
        ck_assert_msg(strstr(out, "IRQs listed"), "no summary line:\n%s", out);

        irq_rows_free(rows, n);
}
END_TEST

/* affinityctl net: the table and --json agree with the bus. */
START_TEST(test_ctl_net) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL;
        _cleanup_(json_freep) Json *doc = NULL;
        const Json *list;
        QueueRow *rows = NULL;
        size_t n;
        unsigned n_veth_rows = 0;
        int r;

        start(h);
        n = wait_veth_applied(h, &rows);

        r = harness_run_ctl(h, &out, &err, "--json", "net", NULL);
        ck_assert_msg(r == 0, "affinityctl --json net exited %d: %s", r, err);
        doc = json_parse_document(out);
        list = jarray(doc, "queues");
        ck_assert_msg(list->n_items == n, "--json lists %zu queues, the bus %zu", list->n_items, n);
        for (size_t i = 0; i < n; i++) {
                const Json *e = list->items[i];

                ck_assert_str_eq(jstr(e, "device"), rows[i].device);
                ck_assert_str_eq(jstr(e, "queue"), rows[i].queue);
                ck_assert_str_eq(jstr(e, "kind"), rows[i].kind);
                ck_assert_str_eq(jstr(e, "cpus"), rows[i].cpus);
                ck_assert_uint_eq(jnum(e, "flow_cnt"), rows[i].flow_cnt);
                ck_assert_str_eq(jstr(e, "rule"), rows[i].rule);
                ck_assert_str_eq(jstr(e, "state"), rows[i].state);
        }
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "net", NULL);
        ck_assert_msg(r == 0, "affinityctl net exited %d: %s", r, err);
        ck_assert_msg(
                strncmp(out, "DEVICE ", 7) == 0 && strstr(out, " QUEUE ") && strstr(out, " KIND ") &&
                        strstr(out, " CPUS ") && strstr(out, " FLOWS ") && strstr(out, " RULE ") &&
                        strstr(out, " STATE\n"),
                "no header line:\n%s", out);
        /* The veth's rx rows: "DEV rx-N rps 1 FLOWS RULE applied", words apart. */
        for (const char *p = out; (p = strstr(p, veth_a)); p++) {
                char dev[IF_NAMESIZE + 1], queue[16], kind[8], cpus[32], flows[16], rule[64], state[32];

                if (p != out && p[-1] != '\n')
                        continue;
                ck_assert_int_eq(
                        sscanf(p, "%16s %15s %7s %31s %15s %63s %31s", dev, queue, kind, cpus, flows, rule,
                               state),
                        7);
                if (!streq(dev, veth_a) || !streq(kind, "rps"))
                        continue;
                ck_assert_str_eq(cpus, "1");
                ck_assert_str_eq(rule, NET_RULE);
                ck_assert_str_eq(state, "applied");
                n_veth_rows++;
        }
        ck_assert_uint_eq(n_veth_rows, RX_QUEUES);

        queue_rows_free(rows, n);
}
END_TEST

/* No daemon on the bus: 3, whatever the command; an argument: 2. */
START_TEST(test_ctl_not_running) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL;
        int r;

        r = harness_run_ctl(h, &out, &err, "irqs", "extra", NULL);
        ck_assert_msg(r == 2, "affinityctl irqs extra exited %d (want 2): %s", r, err);
        out = mfree(out);
        err = mfree(err);

        harness_start_bus(h);
        for (size_t i = 0; i < 4; i++) {
                const char *verb = i % 2 == 0 ? "irqs" : "net";

                if (i < 2)
                        r = harness_run_ctl(h, &out, &err, verb, NULL);
                else
                        r = harness_run_ctl(h, &out, &err, "--json", verb, NULL);
                ck_assert_msg(r == 3, "affinityctl %s with no daemon exited %d (want 3): %s", verb, r, err);
                ck_assert_msg(
                        strstr(err, "not running"), "affinityctl %s with no daemon says:\n%s", verb, err);
                out = mfree(out);
                err = mfree(err);
        }
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-devctl");
        int r;

        snprintf(veth_a, sizeof veth_a, "afd%da", (int)getpid() % 10000000);
        snprintf(veth_b, sizeof veth_b, "afd%db", (int)getpid() % 10000000);
        harness_add_test(s, test_ctl_not_running);
        harness_add_test(s, test_list_irqs);
        harness_add_test(s, test_list_net_queues);
        harness_add_test(s, test_ctl_irqs);
        harness_add_test(s, test_ctl_net);
        r = harness_main(s);
        /* A failed test _exit()s without teardown: the veth pair goes here in any case. */
        delete_veth();
        if (if_nametoindex(veth_a) > 0 || if_nametoindex(veth_b) > 0) {
                printf("FAIL: the veth pair %s/%s is still there at the end of the run\n", veth_a, veth_b);
                r = EXIT_FAILURE;
        }
        return r;
}
