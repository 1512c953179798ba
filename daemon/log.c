/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging to the journal (native protocol, structured fields) or stderr. See log.h. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* We send CODE_FILE=, CODE_LINE=, CODE_FUNC= of the caller ourselves. */
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-journal.h>

#include "log.h"
#include "util.h"

static int max_level = LOG_INFO;
static LogTarget target = LOG_TARGET_CONSOLE;

static const char *const level_table[] = {
        [LOG_EMERG] = "emerg",     [LOG_ALERT] = "alert",   [LOG_CRIT] = "crit", [LOG_ERR] = "err",
        [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

static const char *const target_table[_LOG_TARGET_MAX] = {
        [LOG_TARGET_AUTO] = "auto",
        [LOG_TARGET_CONSOLE] = "console",
        [LOG_TARGET_JOURNAL] = "journal",
};

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

int log_level_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(level_table); i++)
                if (streq(s, level_table[i]))
                        return (int)i;
        if (streq(s, "error"))
                return LOG_ERR;
        if (streq(s, "warn"))
                return LOG_WARNING;
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        return -EINVAL;
}

LogTarget log_target_from_string(const char *s) {
        if (!s)
                return _LOG_TARGET_INVALID;
        for (size_t i = 0; i < ELEMENTSOF(target_table); i++)
                if (streq(s, target_table[i]))
                        return (LogTarget)i;
        if (streq(s, "stderr"))
                return LOG_TARGET_CONSOLE;
        return _LOG_TARGET_INVALID;
}

/* Like systemd's: JOURNAL_STREAM=DEV:INODE names the stream systemd connected our stderr to. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

/* journald's native socket. sd_journal_sendv() returns success when it is missing ("fail
 * silently if the journal is not available"), so without this check --log-target=journal on a
 * machine without journald would drop every message. */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

void log_set_target(LogTarget t) {
        if (t == LOG_TARGET_AUTO)
                t = stderr_is_journal() ? LOG_TARGET_JOURNAL : LOG_TARGET_CONSOLE;
        if (t == LOG_TARGET_JOURNAL && access(JOURNAL_SOCKET, W_OK) < 0) {
                target = LOG_TARGET_CONSOLE;
                log_warning_errno(-errno, "No journal (%s: %m), logging to stderr instead", JOURNAL_SOCKET);
                return;
        }
        target = t;
}

static void write_console(const char *message) {
        struct iovec iov[3] = {
                {.iov_base = (char *)"affinityd: ", .iov_len = strlen("affinityd: ")},
                {.iov_base = (char *)message, .iov_len = strlen(message)},
                {.iov_base = (char *)"\n", .iov_len = 1},
        };
        /* One writev(2) per message, so concurrent writers don't interleave lines. */
        (void)!writev(STDERR_FILENO, iov, ELEMENTSOF(iov));
}

static int write_journal(
        int level, int error, const char *file, int line, const char *func, const LogFields *fields,
        const char *message) {
        _cleanup_free_ char *device_field = NULL;
        char priority[sizeof("PRIORITY=") + 2], code_line[sizeof("CODE_LINE=") + 12],
                errno_field[sizeof("ERRNO=") + 12], pid_field[sizeof("PID=") + 12];
        _cleanup_free_ char *message_field = NULL, *file_field = NULL, *func_field = NULL,
                            *policy_field = NULL, *comm_field = NULL, *cpus_field = NULL, *cpu_field = NULL,
                            *irq_field = NULL, *interface_field = NULL;
        char message_id_field[sizeof("MESSAGE_ID=") + 32];
        struct iovec iov[18];
        size_t n = 0;

#define IOV_STR(s) (iov[n++] = (struct iovec){.iov_base = (char *)(s), .iov_len = strlen(s)})

        if (asprintf(&message_field, "MESSAGE=%s", message) < 0)
                return -ENOMEM;
        IOV_STR(message_field);
        snprintf(priority, sizeof(priority), "PRIORITY=%i", level);
        IOV_STR(priority);
        IOV_STR("SYSLOG_IDENTIFIER=affinityd");
        while (file && strncmp(file, "../", 3) == 0) /* __FILE__ relative to the build directory */
                file += 3;
        if (file && asprintf(&file_field, "CODE_FILE=%s", file) >= 0)
                IOV_STR(file_field);
        snprintf(code_line, sizeof(code_line), "CODE_LINE=%i", line);
        IOV_STR(code_line);
        if (func && asprintf(&func_field, "CODE_FUNC=%s", func) >= 0)
                IOV_STR(func_field);
        if (error != 0) {
                snprintf(errno_field, sizeof(errno_field), "ERRNO=%i", abs(error));
                IOV_STR(errno_field);
        }
        if (fields) {
                if (fields->message_id) {
                        snprintf(
                                message_id_field, sizeof(message_id_field), "MESSAGE_ID=%s",
                                fields->message_id);
                        IOV_STR(message_id_field);
                }
                if (fields->policy && asprintf(&policy_field, "POLICY=%s", fields->policy) >= 0)
                        IOV_STR(policy_field);
                if (fields->pid > 0) {
                        snprintf(pid_field, sizeof(pid_field), "PID=%i", (int)fields->pid);
                        IOV_STR(pid_field);
                }
                if (fields->comm && asprintf(&comm_field, "COMM=%s", fields->comm) >= 0)
                        IOV_STR(comm_field);
                if (fields->cpus && asprintf(&cpus_field, "CPUS=%s", fields->cpus) >= 0)
                        IOV_STR(cpus_field);
                if (fields->cpu && asprintf(&cpu_field, "CPU=%s", fields->cpu) >= 0)
                        IOV_STR(cpu_field);
                if (fields->irq && asprintf(&irq_field, "IRQ=%s", fields->irq) >= 0)
                        IOV_STR(irq_field);
                if (fields->interface && asprintf(&interface_field, "INTERFACE=%s", fields->interface) >= 0)
                        IOV_STR(interface_field);
                if (fields->device && asprintf(&device_field, "DEVICE=%s", fields->device) >= 0)
                        IOV_STR(device_field);
        }
#undef IOV_STR

        return sd_journal_sendv(iov, (int)n);
}

int log_internal(
        int level, int error, const char *file, int line, const char *func, const LogFields *fields,
        const char *format, ...) {
        int saved_errno = errno;
        char buffer[2048];
        _cleanup_free_ char *large = NULL;
        const char *message = buffer;
        va_list ap;
        int k;

        /* Make %m print the error we were given. */
        errno = abs(error);
        va_start(ap, format);
        k = vsnprintf(buffer, sizeof(buffer), format, ap);
        va_end(ap);
        if (k >= (int)sizeof(buffer)) {
                /* Long messages (reload diagnostics) are formatted again, whole. */
                errno = abs(error);
                va_start(ap, format);
                if (vasprintf(&large, format, ap) >= 0)
                        message = large;
                va_end(ap);
        }

        if (target == LOG_TARGET_JOURNAL) {
                if (write_journal(level, error, file, line, func, fields, message) < 0)
                        write_console(message);
        } else
                write_console(message);

        errno = saved_errno;
        return -abs(error);
}

bool ratelimit_below(RateLimit *rl, unsigned *ret_suppressed) {
        uint64_t now = now_monotonic_usec();

        if (rl->begin_usec == 0 || now - rl->begin_usec >= rl->interval_usec) {
                rl->begin_usec = now;
                rl->num = 0;
        }
        if (rl->num >= rl->burst) {
                rl->suppressed++;
                return false;
        }
        rl->num++;
        if (ret_suppressed)
                *ret_suppressed = rl->suppressed;
        rl->suppressed = 0;
        return true;
}
