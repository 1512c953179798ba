/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * IRQ affinity on this machine for real:
 *  - eth0's receive IRQ (found through /sys/class/net/eth0/device → its PCI function's msi_irqs/
 *    and its name in /proc/interrupts) is moved by an irqs: rule (device: + action:), shown by
 *    ListIrqs, and restored when a reload removes the rule, or at exit with restore-on-exit;
 *  - a kernel-managed IRQ (smp_affinity mode 0444) a rule matches is reported as managed, once,
 *    left untouched, and not retried after a device event (a veth created) causes a new pass;
 *  - drift: a hand write to the IRQ's smp_affinity_list or to a veth's rps_cpus is reported and
 *    undone under on-drift: enforce, only reported under on-drift: report.
 *  - drift under on-drift: enforce is logged at the first correction only (then at most once a
 *    minute); a drift names a running irqbalance, and an irqbalance started after the daemon is
 *    named at the next pass;
 *  - CPU 1 taken offline under an IRQ rule on CPU 1: the kernel moving the IRQ is not drift; the
 *    re-plan when it comes back puts the IRQ back;
 *  - originals recorded by a previous instance: restored by IRQ identity ("CHIP HWIRQ"), records
 *    with the old action-name identity dropped unwritten, a record whose restore fails kept;
 *  - a state dir that can't take the record: the IRQ is not written, and shows refused;
 *  - cpus: { avoid: [svc] }: the IRQ beside, not on, the core of a policy's CPU; without it,
 *    on it, with the sharing warning in the log.
 * main() saves the IRQ's mask before the run and puts it back after it, brings CPU 1 back online,
 * and deletes every interface named afd<PID>…, whatever happened in the tests (check's fork mode
 * skips a failed test's teardown).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpuset.h"
#include "harness.h"
#include "macro.h"

static pid_t runner;         /* main()'s PID: the prefix of every interface the tests make */
static unsigned rx_irq;      /* eth0's receive IRQ */
static char rx_name[64];     /* its name in /proc/interrupts */
static char rx_original[64]; /* its smp_affinity_list before the run */
static unsigned managed_irq; /* a kernel-managed IRQ, 0: none here */
static char managed_name[64];
static char rx_identity[128]; /* "CHIP HWIRQ" of the rx IRQ in /proc/interrupts, "" unknown */

#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"

static char *read_line(const char *path) {
        char buf[512];
        FILE *f = fopen(path, "re");
        char *r = NULL;

        if (!f)
                return NULL;
        if (fgets(buf, sizeof buf, f)) {
                buf[strcspn(buf, "\n")] = '\0';
                r = strdup(buf);
        }
        fclose(f);
        return r;
}

/* Writes text in one write(2); returns 0 or -errno (the kernel may refuse). */
static int write_text(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;
        ssize_t l = (ssize_t)strlen(text);

        if (fd < 0)
                return -errno;
        if (write(fd, text, (size_t)l) != l)
                r = -errno;
        close(fd);
        return r;
}

static char *irq_affinity(unsigned irq) {
        char path[64];
        snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity_list", irq);
        return read_line(path);
}

static void set_irq_affinity(unsigned irq, const char *cpus) {
        char path[64];
        int r;

        snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity_list", irq);
        r = write_text(path, cpus);
        ck_assert_msg(r == 0, "write %s to %s: %s", cpus, path, strerror(-r));
}

static void wait_irq_affinity(unsigned irq, const char *cpus) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        char *now;

        while (!streq_ptr(now = irq_affinity(irq), cpus)) {
                ck_assert_msg(
                        harness_now_usec() < deadline, "IRQ %u has CPUs %s, expected %s", irq, strna(now),
                        cpus);
                free(now);
                usleep(20 * 1000);
        }
        free(now);
}

/* The name /proc/interrupts gives IRQ irq (the rest of its line after the hwirq column), into buf. */
static bool interrupt_name(unsigned irq, char *buf, size_t size) {
        FILE *f = fopen("/proc/interrupts", "re");
        char line[4096];
        bool found = false;

        if (!f)
                return false;
        while (!found && fgets(line, sizeof line, f)) {
                char *p = line, *end, *name;

                while (*p == ' ')
                        p++;
                if (strtoul(p, &end, 10) != irq || end == p || *end != ':')
                        continue;
                line[strcspn(line, "\n")] = '\0';
                /* The name is the last blank-separated word (virtio and NIC vectors have one). */
                name = strrchr(line, ' ');
                if (!name || !name[1])
                        continue;
                snprintf(buf, size, "%s", name + 1);
                found = true;
        }
        fclose(f);
        return found;
}

/* The identity of IRQ irq as the daemon records it: "CHIP HWIRQ" (the two words after the count
 * columns of its /proc/interrupts line; one count column per CPU of the header), into buf. */
static bool interrupt_identity(unsigned irq, char *buf, size_t size) {
        FILE *f = fopen("/proc/interrupts", "re");
        char line[4096];
        unsigned n_cpus = 0;
        bool found = false;

        if (!f)
                return false;
        if (fgets(line, sizeof line, f))
                for (char *tok = strtok(line, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
                        n_cpus++;
        while (!found && fgets(line, sizeof line, f)) {
                char *p = line, *end, *save = NULL, *chip, *hwirq;

                while (*p == ' ')
                        p++;
                if (strtoul(p, &end, 10) != irq || end == p || *end != ':')
                        continue;
                strtok_r(end + 1, " \t\n", &save);
                for (unsigned i = 1; i < n_cpus; i++)
                        strtok_r(NULL, " \t\n", &save);
                chip = strtok_r(NULL, " \t\n", &save);
                hwirq = strtok_r(NULL, " \t\n", &save);
                if (!chip || !hwirq || !strchr(hwirq, '-'))
                        break;
                snprintf(buf, size, "%s %s", chip, hwirq);
                found = true;
        }
        fclose(f);
        return found;
}

/* eth0's PCI function (the nearest directory up its device path named like a PCI address). */
static bool eth0_pci_dir(char *buf, size_t size) {
        char path[PATH_MAX];

        if (!realpath("/sys/class/net/eth0/device", path))
                return false;
        for (;;) {
                char *slash = strrchr(path, '/');
                unsigned dom, bus, dev, fn;
                char tail;

                if (!slash || slash == path)
                        return false;
                if (sscanf(slash + 1, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4) {
                        snprintf(buf, size, "%s", path);
                        return true;
                }
                *slash = '\0';
        }
}

/* eth0's receive IRQ: the vector of its PCI function whose name says "input" (virtio-net's
 * receive queue). */
static bool find_rx_irq(void) {
        char pci[PATH_MAX], msi[PATH_MAX + 16];
        struct dirent *de;
        DIR *dir;

        if (!eth0_pci_dir(pci, sizeof pci))
                return false;
        snprintf(msi, sizeof msi, "%s/msi_irqs", pci);
        dir = opendir(msi);
        if (!dir)
                return false;
        while ((de = readdir(dir))) {
                char name[64];
                unsigned irq;
                char *end;

                irq = (unsigned)strtoul(de->d_name, &end, 10);
                if (end == de->d_name || *end)
                        continue;
                if (interrupt_name(irq, name, sizeof name) && strstr(name, "input") &&
                    (rx_irq == 0 || irq < rx_irq)) {
                        rx_irq = irq;
                        snprintf(rx_name, sizeof rx_name, "%s", name);
                }
        }
        closedir(dir);
        return rx_irq > 0;
}

/* A kernel-managed IRQ: smp_affinity without any write permission bit. */
static void find_managed_irq(void) {
        DIR *dir = opendir("/proc/irq");
        struct dirent *de;

        if (!dir)
                return;
        while ((de = readdir(dir))) {
                char path[PATH_MAX], name[64];
                struct stat st;
                unsigned irq;
                char *end;

                irq = (unsigned)strtoul(de->d_name, &end, 10);
                if (end == de->d_name || *end)
                        continue;
                snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity", irq);
                if (stat(path, &st) < 0 || (st.st_mode & 0222) != 0)
                        continue;
                if (!interrupt_name(irq, name, sizeof name))
                        continue;
                if (managed_irq == 0 || irq < managed_irq) {
                        managed_irq = irq;
                        snprintf(managed_name, sizeof managed_name, "%s", name);
                }
        }
        closedir(dir);
}

/* The CPU the rule moves the IRQ to: "1", or "0" if it is on CPU 1 only already. */
static const char *target_cpus(void) {
        return streq(rx_original, "1") ? "0" : "1";
}
/* Some other CPU, for a hand write. */
static const char *other_cpus(void) {
        return streq(target_cpus(), "1") ? "0" : "1";
}

static void write_settings(Harness *h, const char *text) {
        _cleanup_free_ char *path = NULL;
        int fd;

        ck_assert_int_ge(asprintf(&path, "%s/affinityd.yaml", harness_config_dir(h)), 0);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static sd_bus *connect_bus(Harness *h) {
        sd_bus *b = NULL;

        ck_assert_int_ge(sd_bus_new(&b), 0);
        ck_assert_int_ge(sd_bus_set_address(b, harness_bus_address(h)), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(b, 1), 0);
        ck_assert_int_ge(sd_bus_start(b), 0);
        return b;
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

static void wait_counter_at_least(Harness *h, const char *name, uint64_t min) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC, v;

        while ((v = get_counter(h, name)) < min) {
                ck_assert_msg(
                        harness_now_usec() < deadline, "%s stays %" PRIu64 ", expected >= %" PRIu64, name, v,
                        min);
                usleep(20 * 1000);
        }
}

/* One entry of ListIrqs() -> a(ussssss). */
typedef struct IrqEntry {
        uint32_t irq;
        char name[64], rule[64], requested[64], effective[64], state[16], reason[256];
} IrqEntry;

/* The ListIrqs() entry of irq; fails the test if there is none. */
static IrqEntry list_irq(Harness *h, unsigned irq) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        sd_bus *b = connect_bus(h);
        IrqEntry e = {};
        bool found = false;
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, "ListIrqs", &error,
                &reply, "");
        ck_assert_msg(r >= 0, "ListIrqs failed: %s: %s", strna(error.name), strna(error.message));
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(ussssss)"), 0);
        for (;;) {
                const char *name, *rule, *requested, *effective, *state, *reason;
                uint32_t n;

                r = sd_bus_message_read(
                        reply, "(ussssss)", &n, &name, &rule, &requested, &effective, &state, &reason);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        break;
                if (n != irq)
                        continue;
                e.irq = n;
                snprintf(e.name, sizeof e.name, "%s", name);
                snprintf(e.rule, sizeof e.rule, "%s", rule);
                snprintf(e.requested, sizeof e.requested, "%s", requested);
                snprintf(e.effective, sizeof e.effective, "%s", effective);
                snprintf(e.state, sizeof e.state, "%s", state);
                snprintf(e.reason, sizeof e.reason, "%s", reason);
                found = true;
        }
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(b);
        ck_assert_msg(found, "ListIrqs has no IRQ %u", irq);
        return e;
}

static void wait_irq_state(Harness *h, unsigned irq, const char *state) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        IrqEntry e;

        while (!streq((e = list_irq(h, irq)).state, state)) {
                ck_assert_msg(
                        harness_now_usec() < deadline,
                        "IRQ %u stays \"%s\" (%s) in ListIrqs, expected \"%s\"", irq, e.state, e.reason,
                        state);
                usleep(20 * 1000);
        }
}

/* How often needle occurs in the daemon's log. */
static unsigned log_count(Harness *h, const char *needle) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t size = 0;
        unsigned n = 0;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/affinityd.log", harness_dir(h)), 0);
        f = fopen(path, "re");
        ck_assert_msg(f, "open %s: %s", path, strerror(errno));
        ck_assert_int_ge(getdelim(&text, &size, '\0', f), 0);
        fclose(f);
        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* ---- veths ---- */

static void ifname(char *buf, size_t size, const char *tag) {
        snprintf(buf, size, "afd%d%s", (int)runner, tag);
        ck_assert_msg(strlen(buf) < 16, "interface name %s too long", buf);
}

/* A veth pair afd<runner><tag>0 / …1 with 2 rx and 2 tx queues; a: the first. */
static void veth_add(const char *tag, char a[static 16]) {
        char ta[8], tb[8], b[16];

        snprintf(ta, sizeof ta, "%s0", tag);
        snprintf(tb, sizeof tb, "%s1", tag);
        ifname(a, 16, ta);
        ifname(b, 16, tb);
        ck_assert_int_eq(
                harness_run_quiet(
                        ARGS("ip", "link", "add", a, "numtxqueues", "2", "numrxqueues", "2", "type", "veth",
                             "peer", "name", b, "numtxqueues", "2", "numrxqueues", "2")),
                0);
}

static void veth_cleanup(void) {
        char prefix[32];
        DIR *dir = opendir("/sys/class/net");
        struct dirent *de;

        snprintf(prefix, sizeof prefix, "afd%d", (int)runner);
        if (!dir)
                return;
        while ((de = readdir(dir)))
                if (strncmp(de->d_name, prefix, strlen(prefix)) == 0)
                        (void)harness_run_quiet(ARGS("ip", "link", "del", de->d_name));
        closedir(dir);
}

static char *rps_path(const char *dev) {
        char *p = NULL;
        ck_assert_int_ge(asprintf(&p, "/sys/class/net/%s/queues/rx-0/rps_cpus", dev), 0);
        return p;
}

/* rx-0/rps_cpus as a number (one 32-bit word is enough here). */
static unsigned long rps_mask(const char *dev) {
        _cleanup_free_ char *p = rps_path(dev), *v = read_line(p);
        const char *comma;

        ck_assert_msg(v, "cannot read %s", p);
        comma = strrchr(v, ',');
        return strtoul(comma ? comma + 1 : v, NULL, 16);
}

static void wait_rps_mask(const char *dev, unsigned long mask) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        unsigned long now;

        while ((now = rps_mask(dev)) != mask) {
                ck_assert_msg(
                        harness_now_usec() < deadline, "%s rx-0 rps_cpus is %lx, expected %lx", dev, now,
                        mask);
                usleep(20 * 1000);
        }
}

/* ---- tests ---- */

static void write_nic_rule(Harness *h, const char *extra) {
        harness_write_policy(
                h, "10-irq.yaml",
                "irqs:\n"
                "  - name: nic\n"
                "    match: {device: eth0, action: \"*input*\"}\n"
                "    cpus: \"%s\"\n"
                "%s",
                target_cpus(), extra);
}

START_TEST(test_irq_move_and_restore) {
        Harness *h = harness_new();
        _cleanup_free_ char *before = irq_affinity(rx_irq), *now = NULL;
        IrqEntry e;

        ck_assert_ptr_nonnull(before);
        write_nic_rule(h, "");
        harness_start_daemon(h);

        /* Placed before READY=1. */
        now = irq_affinity(rx_irq);
        ck_assert_msg(
                streq_ptr(now, target_cpus()), "IRQ %u (%s) has CPUs %s, expected %s", rx_irq, rx_name,
                strna(now), target_cpus());
        e = list_irq(h, rx_irq);
        ck_assert_str_eq(e.name, rx_name);
        ck_assert_str_eq(e.rule, "nic");
        ck_assert_str_eq(e.requested, target_cpus());
        ck_assert_str_eq(e.state, "applied");
        ck_assert_uint_ge(get_counter(h, "IrqsPlaced"), 1);
        ck_assert_uint_eq(get_counter(h, "IrqRefusals"), 0);

        /* The rule removed: the original back by the time Reload() replies. */
        harness_remove_policy(h, "10-irq.yaml");
        ck_assert_int_ge(harness_reload(h, NULL), 0);
        free(now);
        now = irq_affinity(rx_irq);
        ck_assert_msg(
                streq_ptr(now, before), "IRQ %u has CPUs %s after the rule went, expected %s again", rx_irq,
                strna(now), before);
        ck_assert_uint_ge(get_counter(h, "DeviceRestores"), 1);
        e = list_irq(h, rx_irq);
        ck_assert_str_eq(e.rule, "");
        ck_assert_str_eq(e.state, "unmanaged");
}
END_TEST

/* restore-on-exit: the original back at SIGTERM; without it, the placement stays. */
START_TEST(test_irq_restore_on_exit) {
        Harness *h = harness_new();
        _cleanup_free_ char *before = irq_affinity(rx_irq), *now = NULL;

        ck_assert_ptr_nonnull(before);
        write_settings(h, "restore-on-exit: true\n");
        write_nic_rule(h, "");
        harness_start_daemon(h);
        wait_irq_affinity(rx_irq, target_cpus());
        harness_stop_daemon(h);
        now = irq_affinity(rx_irq);
        ck_assert_msg(
                streq_ptr(now, before), "IRQ %u has CPUs %s after exit, expected %s", rx_irq, strna(now),
                before);
        ck_assert(harness_log_contains(
                h, "restore-on-exit: restored 1 IRQ and queue settings to their originals"));
}
END_TEST

START_TEST(test_irq_managed) {
        Harness *h = harness_new();
        _cleanup_free_ char *before = NULL, *now = NULL, *needle = NULL, *glob = NULL;
        char veth[16];
        IrqEntry e;

        ck_assert_uint_ne(managed_irq, 0); /* main() runs this only where there is one */
        before = irq_affinity(managed_irq);
        ck_assert_ptr_nonnull(before);
        ck_assert_int_ge(asprintf(&glob, "afd%dm*", (int)runner), 0);
        harness_write_policy(
                h, "10-irq.yaml",
                "irqs:\n"
                "  - name: blk\n"
                "    match: {action: \"%s\"}\n"
                "    cpus: \"%s\"\n"
                "net:\n"
                "  - device: \"%s\"\n"
                "    rps: \"0\"\n",
                managed_name, streq(before, "1") ? "0" : "1", glob);
        harness_start_daemon(h);

        e = list_irq(h, managed_irq);
        ck_assert_str_eq(e.state, "managed");
        ck_assert_str_eq(e.rule, "blk");
        ck_assert_msg(strstr(e.reason, "managed by the kernel"), "reason: %s", e.reason);
        now = irq_affinity(managed_irq);
        ck_assert_str_eq(now, before);
        ck_assert_uint_eq(get_counter(h, "IrqRefusals"), 1);
        ck_assert_int_ge(
                asprintf(
                        &needle, "IRQ %u (%s) matches irqs: rule blk but is managed by the kernel",
                        managed_irq, managed_name),
                0);
        ck_assert_uint_eq(log_count(h, needle), 1);

        /* A device event makes a new pass (the veth is placed by it): the managed IRQ is not tried
         * again nor reported again. */
        veth_add("m", veth);
        wait_rps_mask(veth, 0x1);
        ck_assert_uint_ge(get_counter(h, "DeviceEvents"), 1);
        ck_assert_uint_eq(log_count(h, needle), 1);
        ck_assert_uint_eq(get_counter(h, "IrqRefusals"), 1);
        free(now);
        now = irq_affinity(managed_irq);
        ck_assert_str_eq(now, before);
        ck_assert_str_eq(list_irq(h, managed_irq).state, "managed");
        (void)harness_run_quiet(ARGS("ip", "link", "del", veth));
}
END_TEST

/* drift-interval: 100ms; the IRQ rule and a net rule on a veth, both with on-drift: mode. */
static void start_drift(Harness *h, const char *mode, char veth[static 16]) {
        _cleanup_free_ char *extra = NULL, *glob = NULL;

        veth_add(streq(mode, "enforce") ? "e" : "r", veth);
        ck_assert_int_ge(asprintf(&glob, "afd%d%s*", (int)runner, streq(mode, "enforce") ? "e" : "r"), 0);
        ck_assert_int_ge(
                asprintf(
                        &extra,
                        "    on-drift: %s\n"
                        "net:\n"
                        "  - device: \"%s\"\n"
                        "    name: veth\n"
                        "    rps: \"1\"\n"
                        "    on-drift: %s\n",
                        mode, glob, mode),
                0);
        write_settings(h, "drift-interval: 100ms\n");
        write_nic_rule(h, extra);
        harness_start_daemon(h);
        wait_irq_affinity(rx_irq, target_cpus());
        wait_rps_mask(veth, 0x2);
}

START_TEST(test_irq_drift_enforce) {
        Harness *h = harness_new();
        _cleanup_free_ char *needle = NULL, *path = NULL;
        char veth[16];

        start_drift(h, "enforce", veth);
        ck_assert_uint_eq(get_counter(h, "DeviceDriftCorrections"), 0);

        /* By hand, as an operator's echo would. */
        set_irq_affinity(rx_irq, other_cpus());
        ck_assert_int_ge(
                asprintf(
                        &needle, "Drift: IRQ %u (%s) is %s where rule nic applied %s", rx_irq, rx_name,
                        other_cpus(), target_cpus()),
                0);
        harness_wait_log(h, needle);
        wait_irq_affinity(rx_irq, target_cpus());
        wait_counter_at_least(h, "DeviceDriftCorrections", 1);
        ck_assert_uint_ge(get_counter(h, "DeviceDriftDetected"), 1);
        ck_assert_str_eq(list_irq(h, rx_irq).state, "applied");

        /* A queue mask too. */
        path = rps_path(veth);
        ck_assert_int_eq(write_text(path, "1"), 0);
        wait_rps_mask(veth, 0x2);
        wait_counter_at_least(h, "DeviceDriftCorrections", 2);
        ck_assert(harness_log_contains(h, "rx-0 rps_cpus is 0 where rule veth applied 1"));
        harness_stop_daemon(h);
        set_irq_affinity(rx_irq, rx_original); /* for the next test */
        (void)harness_run_quiet(ARGS("ip", "link", "del", veth));
}
END_TEST

START_TEST(test_irq_drift_report) {
        Harness *h = harness_new();
        _cleanup_free_ char *needle = NULL, *path = NULL, *now = NULL;
        char veth[16];
        IrqEntry e;

        start_drift(h, "report", veth);
        set_irq_affinity(rx_irq, other_cpus());
        ck_assert_int_ge(
                asprintf(
                        &needle, "Drift: IRQ %u (%s) is %s where rule nic applied %s", rx_irq, rx_name,
                        other_cpus(), target_cpus()),
                0);
        harness_wait_log(h, needle);
        wait_counter_at_least(h, "DeviceDriftDetected", 1);
        wait_irq_state(h, rx_irq, "drifted");
        e = list_irq(h, rx_irq);
        ck_assert_str_eq(e.requested, target_cpus());

        /* A second drift, on the veth, is reported on its own: by then the IRQ has been re-checked
         * at least once, and neither put back nor reported again. */
        path = rps_path(veth);
        ck_assert_int_eq(write_text(path, "1"), 0);
        harness_wait_log(h, "rx-0 rps_cpus is 0 where rule veth applied 1");
        wait_counter_at_least(h, "DeviceDriftDetected", 2);
        now = irq_affinity(rx_irq);
        ck_assert_str_eq(now, other_cpus());
        ck_assert_uint_eq(rps_mask(veth), 0x1);
        ck_assert_uint_eq(log_count(h, needle), 1);
        ck_assert_uint_eq(get_counter(h, "DeviceDriftCorrections"), 0);
        harness_stop_daemon(h);
        set_irq_affinity(rx_irq, rx_original); /* for the next test */
        (void)harness_run_quiet(ARGS("ip", "link", "del", veth));
}
END_TEST

/* A running irqbalance (any process of that name) is named, with the IRQs it will fight over and
 * how to make it leave them alone. */
START_TEST(test_irq_irqbalance_warning) {
        Harness *h = harness_new();
        _cleanup_free_ char *needle = NULL;
        Child *c;

        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = "irqbalance",
                        .args = ARGS("-n", "0"),
                        .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        harness_wait_comm(h, c->pid, "irqbalance");
        write_nic_rule(h, "");
        harness_start_daemon(h);
        wait_irq_affinity(rx_irq, target_cpus());
        ck_assert_int_ge(
                asprintf(
                        &needle, "irqbalance (PID %d) is running and will move IRQs %u", (int)c->pid,
                        rx_irq),
                0);
        harness_wait_log(h, needle);
        free(needle);
        ck_assert_int_ge(asprintf(&needle, "--banirq=%u", rx_irq), 0);
        ck_assert(harness_log_contains(h, needle));
        ck_assert(harness_log_contains(h, "IRQBALANCE_BANNED_CPULIST="));
        harness_stop_daemon(h);
        set_irq_affinity(rx_irq, rx_original); /* for the next test */
        child_kill(c);
}
END_TEST

/* Under on-drift: enforce, a tug of war is logged at its first correction only (at most one line
 * a minute after that), while every correction is counted. */
START_TEST(test_irq_drift_enforce_quiet) {
        Harness *h = harness_new();
        _cleanup_free_ char *needle = NULL;

        write_settings(h, "drift-interval: 50ms\n");
        write_nic_rule(h, "    on-drift: enforce\n");
        harness_start_daemon(h);
        wait_irq_affinity(rx_irq, target_cpus());

        for (unsigned i = 1; i <= 4; i++) {
                set_irq_affinity(rx_irq, other_cpus());
                wait_counter_at_least(h, "DeviceDriftCorrections", i);
                wait_irq_affinity(rx_irq, target_cpus());
        }
        ck_assert_int_ge(
                asprintf(
                        &needle, "Drift: IRQ %u (%s) is %s where rule nic applied %s", rx_irq, rx_name,
                        other_cpus(), target_cpus()),
                0);
        ck_assert_msg(
                log_count(h, needle) == 1, "\"%s\" logged %u times for 4 corrections", needle,
                log_count(h, needle));
        ck_assert_uint_ge(get_counter(h, "DeviceDriftDetected"), 4);
        harness_stop_daemon(h);
        set_irq_affinity(rx_irq, rx_original);
}
END_TEST

/* An irqbalance started after the daemon: named at the next pass (a device event), and in the
 * drift message of an IRQ it could have moved. */
START_TEST(test_irq_irqbalance_later) {
        Harness *h = harness_new();
        _cleanup_free_ char *needle = NULL;
        char veth[16];
        Child *c;

        write_settings(h, "drift-interval: 100ms\n");
        write_nic_rule(h, "");
        harness_start_daemon(h);
        wait_irq_affinity(rx_irq, target_cpus());
        ck_assert(!harness_log_contains(h, "irqbalance (PID"));

        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = "irqbalance",
                        .args = ARGS("-n", "0"),
                        .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        harness_wait_comm(h, c->pid, "irqbalance");

        /* A device event: the pass looks for irqbalance again, none having been found before. */
        veth_add("b", veth);
        ck_assert_int_ge(
                asprintf(
                        &needle, "irqbalance (PID %d) is running and will move IRQs %u", (int)c->pid,
                        rx_irq),
                0);
        harness_wait_log(h, needle);

        /* A drift names it. */
        set_irq_affinity(rx_irq, other_cpus());
        free(needle);
        ck_assert_int_ge(
                asprintf(
                        &needle,
                        "where rule nic applied %s (on-drift: report); irqbalance (PID %d) is running",
                        target_cpus(), (int)c->pid),
                0);
        harness_wait_log(h, needle);
        harness_stop_daemon(h);
        set_irq_affinity(rx_irq, rx_original);
        child_kill(c);
        (void)harness_run_quiet(ARGS("ip", "link", "del", veth));
}
END_TEST

static int write_cpu1_online(const char *value) {
        return write_text(CPU1_ONLINE, value);
}

static char read_cpu1_online(void) {
        _cleanup_free_ char *v = read_line(CPU1_ONLINE);
        return v ? v[0] : '\0';
}

/* Brings CPU 1 back online if it is not (no check assertions: usable outside tests). */
static void restore_cpu1(void) {
        for (unsigned i = 0; i < 50 && read_cpu1_online() == '0'; i++) {
                if (write_cpu1_online("1") == 0)
                        break;
                usleep(100 * 1000);
        }
}

/* CPU 1 taken offline under an IRQ rule on CPU 1 with on-drift: enforce: the kernel moves the
 * IRQ off it, which is not drift (nothing reported, nothing written back); when CPU 1 comes back,
 * the re-plan puts the IRQ back on it. */
START_TEST(test_irq_hotplug_not_drift) {
        Harness *h = harness_new();
        _cleanup_free_ char *now = NULL, *without1 = harness_cpus_andnot(harness_online_cpus(), "1"),
                            *offline_line = harness_asprintf("CPUs changed (online now: %s)", without1),
                            *online_line =
                                    harness_asprintf("CPUs changed (online now: %s)", harness_online_cpus());
        int r;

        ck_assert_msg(read_cpu1_online() == '1', "CPU 1 is not online before the test");
        write_settings(h, "drift-interval: 10ms\n");
        harness_write_policy(
                h, "10-irq.yaml",
                "irqs:\n"
                "  - name: nic\n"
                "    match: {device: eth0, action: \"*input*\"}\n"
                "    cpus: \"1\"\n"
                "    on-drift: enforce\n");
        harness_start_daemon(h);
        wait_irq_affinity(rx_irq, "1");

        r = write_cpu1_online("0");
        ck_assert_msg(r == 0, "cannot take CPU 1 offline: %s", strerror(-r));
        /* The kernel moved the IRQ; the re-plan came (~100 ms after the uevent, ten drift checks
         * later at least). */
        harness_wait_log(h, offline_line);
        now = irq_affinity(rx_irq);
        ck_assert_msg(!streq_ptr(now, "1"), "IRQ %u still on the offline CPU 1", rx_irq);
        ck_assert_uint_eq(get_counter(h, "DeviceDriftDetected"), 0);
        ck_assert_uint_eq(get_counter(h, "DeviceDriftCorrections"), 0);
        ck_assert(!harness_log_contains(h, "Drift:"));

        r = write_cpu1_online("1");
        ck_assert_msg(r == 0, "cannot bring CPU 1 back online: %s", strerror(-r));
        harness_wait_log(h, online_line);
        wait_irq_affinity(rx_irq, "1");
        ck_assert_uint_eq(get_counter(h, "DeviceDriftDetected"), 0);
        ck_assert(!harness_log_contains(h, "Drift:"));
        harness_stop_daemon(h);
        set_irq_affinity(rx_irq, rx_original);
}
END_TEST

/* DIR/state/targets/irq@N, as lib/state.h writes it. */
static void write_irq_record(Harness *h, unsigned irq, const char *identity, const char *original) {
        _cleanup_free_ char *dir = NULL, *path = NULL, *text = NULL;
        int fd;

        ck_assert_int_ge(asprintf(&dir, "%s/state", harness_dir(h)), 0);
        (void)mkdir(dir, 0755);
        free(dir);
        ck_assert_int_ge(asprintf(&dir, "%s/state/targets", harness_dir(h)), 0);
        (void)mkdir(dir, 0755);
        ck_assert_int_ge(asprintf(&path, "%s/irq@%u", dir, irq), 0);
        ck_assert_int_ge(
                asprintf(
                        &text, "affinityd-target 1\nkind irq\nkey %u\nidentity %s\noriginal %s\n", irq,
                        identity, original),
                0);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static bool irq_record_exists(Harness *h, unsigned irq) {
        char path[PATH_MAX];

        snprintf(path, sizeof path, "%s/state/targets/irq@%u", harness_dir(h), irq);
        return access(path, F_OK) == 0;
}

/* A previous instance's record, identified by "CHIP HWIRQ": a daemon whose configuration no
 * longer covers the IRQ gives the original back (the IRQ's name plays no part). */
START_TEST(test_irq_record_identity) {
        Harness *h = harness_new();

        ck_assert(rx_identity[0]); /* main() runs this only where the IRQ has a hwirq column */
        set_irq_affinity(rx_irq, other_cpus());
        write_irq_record(h, rx_irq, rx_identity, target_cpus());
        harness_start_daemon(h);
        /* Reconciled by the first pass, before READY=1. */
        wait_irq_affinity(rx_irq, target_cpus());
        ck_assert(!irq_record_exists(h, rx_irq));
        ck_assert_uint_ge(get_counter(h, "DeviceRestores"), 1);
        harness_stop_daemon(h);
        set_irq_affinity(rx_irq, rx_original);
}
END_TEST

/* A record of an older version (its identity the IRQ's action names) is dropped, nothing written
 * back: it can't be told from an IRQ number that passed to another device. */
START_TEST(test_irq_record_old_identity) {
        Harness *h = harness_new();
        _cleanup_free_ char *now = NULL;

        set_irq_affinity(rx_irq, other_cpus());
        write_irq_record(h, rx_irq, rx_name, target_cpus());
        harness_start_daemon(h);
        ck_assert(!irq_record_exists(h, rx_irq));
        now = irq_affinity(rx_irq);
        ck_assert_str_eq(now, other_cpus());
        ck_assert_uint_eq(get_counter(h, "DeviceRestores"), 0);
        harness_stop_daemon(h);
        set_irq_affinity(rx_irq, rx_original);
}
END_TEST

/* A restore the kernel refuses (an original naming a CPU this machine doesn't have) keeps the
 * record, to be tried again, rather than losing the original. */
START_TEST(test_irq_restore_failure_kept) {
        Harness *h = harness_new();
        _cleanup_free_ char *before = irq_affinity(rx_irq), *now = NULL;

        ck_assert(rx_identity[0]); /* main() runs this only where the IRQ has a hwirq column */
        ck_assert_ptr_nonnull(before);
        write_irq_record(h, rx_irq, rx_identity, "4095");
        harness_start_daemon(h);
        harness_wait_log(h, "Failed to restore IRQ");
        ck_assert(irq_record_exists(h, rx_irq));
        now = irq_affinity(rx_irq);
        ck_assert_str_eq(now, before);
        harness_stop_daemon(h);
        ck_assert(irq_record_exists(h, rx_irq));
}
END_TEST

/* A state dir that can't take the record of the original: the IRQ is left as it is and shown
 * refused, saying why. */
START_TEST(test_irq_unrecordable_not_written) {
        Harness *h = harness_new();
        _cleanup_free_ char *before = irq_affinity(rx_irq), *now = NULL, *state = NULL, *arg = NULL,
                            *targets = NULL;
        IrqEntry e;
        int fd;

        ck_assert_ptr_nonnull(before);
        ck_assert_int_ge(asprintf(&state, "%s/badstate", harness_dir(h)), 0);
        ck_assert_int_eq(mkdir(state, 0755), 0);
        /* A regular file where the targets directory would go. */
        ck_assert_int_ge(asprintf(&targets, "%s/targets", state), 0);
        fd = open(targets, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_ge(asprintf(&arg, "--state-dir=%s", state), 0);
        write_nic_rule(h, "");
        harness_start_daemon_with(h, &(DaemonOptions){.args = ARGS(arg)});

        e = list_irq(h, rx_irq);
        ck_assert_str_eq(e.state, "refused");
        ck_assert_msg(strstr(e.reason, "cannot record its original in"), "reason: %s", e.reason);
        now = irq_affinity(rx_irq);
        ck_assert_str_eq(now, before);
        ck_assert_uint_eq(get_counter(h, "IrqsPlaced"), 0);
        harness_stop_daemon(h);
}
END_TEST

/* A cpu-list file of sysfs into *ret. */
static void read_cpu_list(const char *path, CpuSet *ret) {
        _cleanup_free_ char *text = read_line(path);

        ck_assert_msg(text, "cannot read %s", path);
        ck_assert_msg(cpuset_parse_list(text, ret, NULL) == 0, "%s: not a cpu-list: %s", path, text);
}

/* The policy svc on CPU svc, and the rule nic on eth0's rx IRQ with cpus: selector. */
static void write_svc_rule(Harness *h, int svc, const char *selector) {
        harness_write_policy(
                h, "10-svc.yaml",
                "policies:\n"
                "  - name: svc\n"
                "    match: {comm: afd-no-such-comm}\n"
                "    cpus: \"%d\"\n"
                "irqs:\n"
                "  - name: nic\n"
                "    match: {device: eth0, action: \"*input*\"}\n"
                "    cpus: %s\n",
                svc, selector);
}

/*
 * IRQs beside, not on, the service: a policy on the last online CPU, and eth0's rx IRQ under
 * cpus: { avoid: [svc] }, gets every other online CPU but the SMT siblings of svc's (sysfs
 * thread_siblings_list). Without avoid: the IRQ shares svc's core, and the log says how to fix
 * that.
 */
START_TEST(test_irq_avoid_policy) {
        Harness *h = harness_new();
        _cleanup_cpuset_ CpuSet online = CPUSET_NULL, core = CPUSET_NULL, want = CPUSET_NULL;
        _cleanup_free_ char *siblings = NULL, *want_list = NULL, *online_list = NULL, *now = NULL;
        IrqEntry e;
        int svc;

        read_cpu_list("/sys/devices/system/cpu/online", &online);
        svc = cpuset_last(&online);
        ck_assert_int_ge(svc, 0);
        ck_assert_int_ge(
                asprintf(&siblings, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", svc), 0);
        read_cpu_list(siblings, &core);
        ck_assert_int_eq(cpuset_copy(&want, &online), 0);
        cpuset_andnot(&want, &core);
        if (cpuset_is_empty(&want)) {
                printf("test_irq_avoid_policy: CPU %d's core is every online CPU: nothing to avoid onto\n",
                       svc);
                return;
        }
        want_list = cpuset_to_string(&want);
        online_list = cpuset_to_string(&online);
        ck_assert_ptr_nonnull(want_list);
        ck_assert_ptr_nonnull(online_list);

        /* Start from every online CPU, so that the rule's write shows. */
        set_irq_affinity(rx_irq, online_list);
        write_svc_rule(h, svc, "{avoid: [svc]}");
        harness_start_daemon(h);

        now = irq_affinity(rx_irq);
        ck_assert_msg(
                streq_ptr(now, want_list), "IRQ %u (%s) has CPUs %s, expected %s (not svc's CPU %d's core)",
                rx_irq, rx_name, strna(now), want_list, svc);
        e = list_irq(h, rx_irq);
        ck_assert_str_eq(e.rule, "nic");
        ck_assert_str_eq(e.requested, want_list);
        ck_assert_str_eq(e.state, "applied");
        ck_assert(!harness_log_contains(h, "share cores with policy \"svc\""));

        /* Without avoid: every online CPU, svc's core too, with the warning. */
        write_svc_rule(h, svc, "{}");
        ck_assert_int_ge(harness_reload(h, NULL), 0);
        wait_irq_affinity(rx_irq, online_list);
        harness_wait_log(h, "share cores with policy \"svc\": add avoid: [svc] to the selector");
}
END_TEST

/* Runs in the runner process (an unchecked fixture) after the hotplug test, whatever happened in
 * it (a failed test skips its teardown): CPU 1 online, the IRQ's mask as before the run. */
static void after_hotplug_setup(void) {
        char path[64];

        restore_cpu1();
        snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity_list", rx_irq);
        (void)write_text(path, rx_original);
}

START_TEST(test_cpu1_online) {
        ck_assert_msg(read_cpu1_online() == '1', "CPU 1 is not online after the hotplug test");
}
END_TEST

/*
 * Three modes, three meson tests, each exiting 77 (a skip) where what it needs is absent:
 * "basic" (the default) needs eth0 with an MSI rx IRQ whose affinity can be read; "managed" also
 * a kernel-managed IRQ; "identity" also a hwirq column for eth0's rx IRQ in /proc/interrupts.
 */
int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "basic";
        Suite *s = suite_create("integration-irq");
        TCase *tc;
        char *v;
        int r;

        runner = getpid();
        if (!streq(mode, "basic") && !streq(mode, "managed") && !streq(mode, "identity")) {
                fprintf(stderr, "usage: %s [basic|managed|identity]\n", argv[0]);
                return EXIT_FAILURE;
        }
        if (access("/sys/class/net/eth0/device", F_OK) < 0 || !find_rx_irq()) {
                printf("SKIP: no eth0 with MSI vectors here\n");
                return 77;
        }
        v = irq_affinity(rx_irq);
        if (!v) {
                printf("SKIP: cannot read IRQ %u's affinity\n", rx_irq);
                return 77;
        }
        snprintf(rx_original, sizeof rx_original, "%s", v);
        free(v);
        find_managed_irq();
        if (!interrupt_identity(rx_irq, rx_identity, sizeof rx_identity))
                rx_identity[0] = '\0';

        if (streq(mode, "managed")) {
                if (managed_irq == 0) {
                        printf("SKIP: no kernel-managed IRQ on this machine\n");
                        return 77;
                }
                harness_add_test(s, test_irq_managed);
        } else if (streq(mode, "identity")) {
                if (!rx_identity[0]) {
                        printf("SKIP: IRQ %u has no hwirq column in /proc/interrupts\n", rx_irq);
                        return 77;
                }
                harness_add_test(s, test_irq_record_identity);
                harness_add_test(s, test_irq_restore_failure_kept);
        } else {
                harness_add_test(s, test_irq_move_and_restore);
                harness_add_test(s, test_irq_avoid_policy);
                harness_add_test(s, test_irq_restore_on_exit);
                harness_add_test(s, test_irq_drift_enforce);
                harness_add_test(s, test_irq_drift_report);
                harness_add_test(s, test_irq_irqbalance_warning);
                harness_add_test(s, test_irq_drift_enforce_quiet);
                harness_add_test(s, test_irq_irqbalance_later);
                harness_add_test(s, test_irq_hotplug_not_drift);
                tc = tcase_create("cpu1-restored");
                tcase_add_unchecked_fixture(tc, after_hotplug_setup, NULL);
                tcase_add_test(tc, test_cpu1_online);
                suite_add_tcase(s, tc);
                harness_add_test(s, test_irq_record_old_identity);
                harness_add_test(s, test_irq_unrecordable_not_written);
        }
        r = harness_main(s);
        restore_cpu1();

        /* Whatever the tests did: the IRQ's mask as it was, no veth of ours left. */
        {
                char path[64];
                snprintf(path, sizeof path, "/proc/irq/%u/smp_affinity_list", rx_irq);
                (void)write_text(path, rx_original);
        }
        veth_cleanup();
        return r;
}
