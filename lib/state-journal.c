/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The originals journal. See state-journal.h. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "state-journal.h"
#include "util.h"

#define JOURNAL_MAGIC         "affinityd-originals 1"
#define JOURNAL_REWRITE_MIN   (1024 * 1024)
#define JOURNAL_REWRITE_RATIO 4

struct StateJournal {
        char *dir;
        char *path;
        int fd;
        uint64_t size;       /* bytes in the file */
        uint64_t save_bytes; /* bytes of "save" lines written since open or rewrite */
        uint64_t n_saves;    /* how many */
        char *pending;       /* queued "drop" lines */
        size_t n_pending;    /* bytes */
        size_t pending_allocated;
        bool torn; /* the last write failed midway: the file may end inside a line */
};

/* Writes all of buf to fd. Returns 0, or -errno with *ret_done the bytes written. */
static int write_all(int fd, const char *buf, size_t len, size_t *ret_done) {
        size_t done = 0;

        while (done < len) {
                ssize_t k = write(fd, buf + done, len - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        *ret_done = done;
                        return k < 0 ? -errno : -EIO;
                }
                done += (size_t)k;
        }
        *ret_done = done;
        return 0;
}

/* Opens path for appending (creating it with the header if it is empty); size into *ret_size,
 * and into *ret_torn whether the file ends inside a line (a write of a crashed daemon cut
 * short). */
static int open_append(const char *path, int *ret_fd, uint64_t *ret_size, bool *ret_torn) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        size_t done;
        char last;
        int r;

        /* O_RDWR: the last byte is read back */
        fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size == 0) {
                r = write_all(fd, JOURNAL_MAGIC "\n", strlen(JOURNAL_MAGIC "\n"), &done);
                if (r < 0)
                        return r;
                st.st_size = (off_t)done;
        }
        *ret_torn = pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
        *ret_fd = TAKE_FD(fd);
        *ret_size = (uint64_t)st.st_size;
        return 0;
}

int state_journal_open(const char *dir, StateJournal **ret) {
        _cleanup_free_ StateJournal *j = NULL;
        int r;

        j = calloc(1, sizeof(StateJournal));
        if (!j)
                return -ENOMEM;
        j->fd = -EBADF;
        j->dir = strdup(dir);
        if (!j->dir || asprintf(&j->path, "%s/" STATE_JOURNAL_NAME, dir) < 0) {
                free(j->dir);
                return -ENOMEM;
        }
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                r = -errno;
        else
                r = open_append(j->path, &j->fd, &j->size, &j->torn);
        if (r < 0) {
                free(j->path);
                free(j->dir);
                return r;
        }
        *ret = TAKE_PTR(j);
        return 0;
}

StateJournal *state_journal_free(StateJournal *j) {
        if (!j)
                return NULL;
        (void)state_journal_flush(j);
        if (j->fd >= 0)
                close(j->fd);
        free(j->pending);
        free(j->path);
        free(j->dir);
        free(j);
        return NULL;
}

/* Appends len bytes of s to the pending buffer. Returns 0 or -ENOMEM. */
static int pending_append(StateJournal *j, const char *s, size_t len) {
        if (j->n_pending + len > j->pending_allocated) {
                size_t n = MAX(j->pending_allocated * 2, j->n_pending + len);
                char *p = realloc(j->pending, n);

                if (!p)
                        return -ENOMEM;
                j->pending = p;
                j->pending_allocated = n;
        }
        memcpy(j->pending + j->n_pending, s, len);
        j->n_pending += len;
        return 0;
}

int state_journal_drop(StateJournal *j, pid_t pid, uint64_t starttime) {
        char line[64];
        int n;

        n = snprintf(line, sizeof line, "drop %d %" PRIu64 "\n", (int)pid, starttime);
        return pending_append(j, line, (size_t)n);
}

bool state_journal_pending(const StateJournal *j) {
        return j && j->n_pending > 0;
}

/*
 * Writes the pending drops and then len bytes of record (may be 0) in one writev(2) (on an
 * O_APPEND file as atomic as one write(2)), after a newline if the last write was cut short. On
 * success the pending buffer is empty. Returns 0 or -errno.
 */
static int write_out(StateJournal *j, const char *record, size_t len) {
        struct iovec iov[3];
        size_t total = 0, done = 0, n = 0;

        if (j->torn)
                iov[n++] = (struct iovec){.iov_base = (char *)"\n", .iov_len = 1};
        if (j->n_pending > 0)
                iov[n++] = (struct iovec){.iov_base = j->pending, .iov_len = j->n_pending};
        if (len > 0)
                iov[n++] = (struct iovec){.iov_base = (char *)record, .iov_len = len};
        for (size_t i = 0; i < n; i++)
                total += iov[i].iov_len;
        while (done < total) {
                ssize_t k;
                size_t skip = done, i = 0;
                struct iovec rest[3];
                size_t n_rest = 0;

                /* what is left after a short write */
                for (; i < n && skip >= iov[i].iov_len; i++)
                        skip -= iov[i].iov_len;
                for (; i < n; i++, skip = 0)
                        rest[n_rest++] = (struct iovec){
                                .iov_base = (char *)iov[i].iov_base + skip,
                                .iov_len = iov[i].iov_len - skip};
                k = writev(j->fd, rest, (int)n_rest);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        int r = k < 0 ? -errno : -EIO;

                        j->size += done;
                        /* Whatever reached the file ends inside a line unless all of it did. */
                        if (done > 0)
                                j->torn = true;
                        return r;
                }
                done += (size_t)k;
        }
        j->size += done;
        j->torn = false;
        j->n_pending = 0;
        return 0;
}

int state_journal_flush(StateJournal *j) {
        if (!j || j->n_pending == 0)
                return 0;
        return write_out(j, NULL, 0);
}

/*
 * The "save" line of s (with its newline): state_format()'s text turned into one line in place,
 * its first line's end overwritten by "save ". *ret_text gets the buffer to free, *ret_line and
 * *ret_len the line in it.
 */
static int format_save(const StateProcess *s, char **ret_text, const char **ret_line, size_t *ret_len) {
        _cleanup_free_ char *text = NULL;
        char *body, *line;
        size_t l;
        int r;

        r = state_format(s, &text);
        if (r < 0)
                return r;
        body = strchr(text, '\n'); /* after the file's first line */
        if (!body || (size_t)(body - text) + 1 < strlen("save "))
                return -EINVAL;
        body++;
        l = strlen(body);
        for (size_t i = 0; i + 1 < l; i++)
                if (body[i] == '\n')
                        body[i] = ';';
        line = body - strlen("save ");
        memcpy(line, "save ", strlen("save "));
        *ret_line = line;
        *ret_len = strlen("save ") + l;
        *ret_text = TAKE_PTR(text);
        return 0;
}

int state_journal_save(StateJournal *j, const StateProcess *s) {
        _cleanup_free_ char *text = NULL;
        const char *line;
        size_t len;
        int r;

        r = format_save(s, &text, &line, &len);
        if (r < 0)
                return r;
        r = write_out(j, line, len);
        if (r < 0)
                return r;
        j->save_bytes += len;
        j->n_saves++;
        return 0;
}

bool state_journal_wants_rewrite(const StateJournal *j, size_t n_live) {
        uint64_t record;

        if (!j || j->size < JOURNAL_REWRITE_MIN)
                return false;
        record = j->n_saves > 0 ? j->save_bytes / j->n_saves : 64;
        return j->size >= JOURNAL_REWRITE_RATIO * (strlen(JOURNAL_MAGIC) + 1 + (uint64_t)n_live * record);
}

int state_journal_rewrite(StateJournal *j, const StateProcess *s, size_t n) {
        _cleanup_free_ char *tmp = NULL, *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_(fclosep) FILE *f = NULL;
        uint64_t save_bytes = 0, size;
        size_t buf_size = 0, done;
        int new_fd, r = 0;
        bool torn;

        if (asprintf(&tmp, "%s/." STATE_JOURNAL_NAME ".tmp", j->dir) < 0)
                return -ENOMEM;
        f = open_memstream(&buf, &buf_size);
        if (!f)
                return -ENOMEM;
        fputs(JOURNAL_MAGIC "\n", f);
        for (size_t i = 0; i < n && r >= 0; i++) {
                _cleanup_free_ char *text = NULL;
                const char *line;
                size_t len;

                r = format_save(&s[i], &text, &line, &len);
                if (r >= 0) {
                        fwrite(line, 1, len, f);
                        save_bytes += len;
                }
        }
        if (fclose(TAKE_PTR(f)) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;

        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        r = write_all(fd, buf, buf_size, &done);
        if (r >= 0 && rename(tmp, j->path) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlink(tmp);
                return r;
        }
        close(TAKE_FD(fd));
        /* Appending goes on in the new file. Opening it can only fail for want of descriptors:
         * keep the old one then (its writes go to the unlinked old file, so report it). */
        r = open_append(j->path, &new_fd, &size, &torn);
        if (r < 0)
                return r;
        close(j->fd);
        j->fd = new_fd;
        j->size = size;
        j->save_bytes = save_bytes;
        j->n_saves = n;
        j->n_pending = 0;
        j->torn = torn;
        return 0;
}

uint64_t state_journal_size(const StateJournal *j) {
        return j->size;
}

/* ---- replay ---- */

static int state_id_compare(const void *a, const void *b) {
        const StateProcess *x = a, *y = b;

        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->starttime < y->starttime ? -1 : x->starttime > y->starttime;
}

static void process_free(void *p) {
        state_process_done(p);
        free(p);
}

void state_process_array_free(StateProcess *a, size_t n) {
        for (size_t i = 0; i < n; i++)
                state_process_done(&a[i]);
        free(a);
}

/* Parses "save BODY" into *ret. Returns 0, -EBADMSG with "reason" in *ret_error, -ENOMEM. */
static int parse_save(const char *body, StateProcess *ret, char **ret_error) {
        _cleanup_free_ char *text = NULL, *err = NULL;
        int r;

        if (asprintf(&text, STATE_MAGIC "\n%s\n", body) < 0)
                return -ENOMEM;
        for (char *c = text; *c; c++)
                if (*c == ';')
                        *c = '\n';
        r = state_parse(text, ret, &err);
        if (r == -EBADMSG) {
                /* "line N: reason": N counts the file's first line, which a record lacks */
                const char *reason = err ? strchr(err, ':') : NULL;

                *ret_error = strdup(reason ? reason + 2 : "malformed record");
                return *ret_error ? -EBADMSG : -ENOMEM;
        }
        return r;
}

/* Parses "drop PID STARTTIME". */
static bool parse_drop(const char *body, StateProcess *ret) {
        int pid, n = 0;
        uint64_t starttime;

        if (sscanf(body, "%d %" SCNu64 "%n", &pid, &starttime, &n) != 2 || body[n] || pid <= 0 ||
            body[0] < '0' || body[0] > '9')
                return false;
        *ret = (StateProcess){.pid = pid, .starttime = starttime};
        return true;
}

typedef struct Replay {
        void *root;
        size_t n;
} Replay;

/* Applies one line (NUL-terminated, no newline) to the replay. Returns 0, -EBADMSG with a
 * reason in *ret_error, -ENOMEM. */
static int replay_line(Replay *rp, const char *line, char **ret_error) {
        _cleanup_(state_process_done) StateProcess s = {};
        StateProcess *copy, **node;
        int r;

        if (startswith(line, "drop ")) {
                if (!parse_drop(line + strlen("drop "), &s)) {
                        *ret_error = strdup("expected \"drop PID STARTTIME\"");
                        return *ret_error ? -EBADMSG : -ENOMEM;
                }
                node = tfind(&s, &rp->root, state_id_compare);
                if (node) {
                        copy = *node;
                        tdelete(copy, &rp->root, state_id_compare);
                        process_free(copy);
                        rp->n--;
                }
                return 0;
        }
        if (!startswith(line, "save ")) {
                *ret_error = strdup("unknown record (expected \"save\" or \"drop\")");
                return *ret_error ? -EBADMSG : -ENOMEM;
        }
        r = parse_save(line + strlen("save "), &s, ret_error);
        if (r < 0)
                return r;
        node = tfind(&s, &rp->root, state_id_compare);
        if (node) {
                state_process_done(*node);
                **node = s;
                s = (StateProcess){};
                return 0;
        }
        copy = malloc(sizeof(StateProcess));
        if (!copy)
                return -ENOMEM;
        *copy = s;
        s = (StateProcess){};
        if (!tsearch(copy, &rp->root, state_id_compare)) {
                process_free(copy);
                return -ENOMEM;
        }
        rp->n++;
        return 0;
}

int state_journal_read(const char *dir, StateProcess **ret, size_t *ret_n, char ***ret_warnings) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_free_ void **nodes = NULL;
        _cleanup_strv_free_ char **warnings = NULL;
        StateProcess *out = NULL;
        Replay rp = {};
        size_t size = 0, n_nodes = 0;
        unsigned line = 0;
        char *cursor, *end, *nl;
        int r;

        if (ret_warnings)
                *ret_warnings = NULL;
        if (asprintf(&path, "%s/" STATE_JOURNAL_NAME, dir) < 0)
                return -ENOMEM;
        r = read_full_file(path, READ_FULL_NO_LIMIT, 0, &text, &size);
        if (r == -ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return r;

        /* Line by line, by length: a line may hold a NUL byte (blocks a crash of the machine
         * left zeroed, on a disk file system) and is then a bad line, not the end. */
        for (cursor = text, end = text + size; cursor < end; cursor = nl + 1) {
                _cleanup_free_ char *reason = NULL;

                nl = memchr(cursor, '\n', (size_t)(end - cursor));
                if (!nl)
                        break; /* no newline after it: a record cut short */
                *nl = '\0';
                line++;
                if (line == 1) {
                        if (streq(cursor, JOURNAL_MAGIC) && strlen(cursor) == (size_t)(nl - cursor))
                                continue;
                        r = -EBADMSG;
                        if (ret_warnings &&
                            strv_extendf(&warnings, "%s:1: not an affinityd originals journal", path) < 0)
                                r = -ENOMEM;
                        goto finish;
                }
                if (!*cursor && nl == cursor)
                        continue; /* the newline that ends a record cut short */
                if (strlen(cursor) != (size_t)(nl - cursor)) {
                        r = -EBADMSG;
                        reason = strdup("contains a NUL byte");
                        if (!reason)
                                r = -ENOMEM;
                } else
                        r = replay_line(&rp, cursor, &reason);
                if (r == -ENOMEM)
                        goto finish;
                if (r < 0 && ret_warnings &&
                    strv_extendf(&warnings, "%s:%u: %s", path, line, reason ?: "malformed") < 0) {
                        r = -ENOMEM;
                        goto finish;
                }
        }
        if (line == 0 && size > 0) {
                r = -EBADMSG; /* not even a whole first line */
                if (ret_warnings &&
                    strv_extendf(&warnings, "%s:1: not an affinityd originals journal", path) < 0)
                        r = -ENOMEM;
                goto finish;
        }

        r = tree_collect(rp.root, rp.n, &nodes, &n_nodes);
        if (r < 0)
                goto finish;
        if (n_nodes > 0) {
                out = calloc(n_nodes, sizeof(StateProcess));
                if (!out) {
                        r = -ENOMEM;
                        goto finish;
                }
                for (size_t i = 0; i < n_nodes; i++) {
                        StateProcess *node = nodes[i];

                        out[i] = *node;
                        *node = (StateProcess){.pid = node->pid, .starttime = node->starttime};
                }
        }
        *ret = out;
        *ret_n = n_nodes;
        r = 0;
finish:
        if (ret_warnings)
                *ret_warnings = TAKE_PTR(warnings);
        tdestroy(rp.root, process_free);
        return r;
}
