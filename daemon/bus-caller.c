/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Callers on the bus: who asks, what /proc lets them see, and their share of the loop. See
 * bus-caller.h. */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bus-caller.h"
#include "bus-names.h"
#include "fileio.h"
#include "procfs.h"
#include "util.h"

void bus_callers_free(Manager *m) {
        if (!m->bus_callers)
                return;
        for (size_t i = 0; i < CALLER_CACHE_MAX; i++)
                free(m->bus_callers->entries[i].name);
        m->bus_callers = mfree(m->bus_callers);
}

int bus_caller_get(Manager *m, sd_bus_message *message, Caller *ret) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *sender = sd_bus_message_get_sender(message);
        CallerEntry *slot = NULL;
        const gid_t *gids = NULL;
        Caller c = {};
        int r, n;

        if (!m->bus_callers && !(m->bus_callers = calloc(1, sizeof(struct BusCallers))))
                return -ENOMEM;
        if (sender)
                for (size_t i = 0; i < CALLER_CACHE_MAX; i++) {
                        CallerEntry *e = &m->bus_callers->entries[i];

                        if (e->name && streq(e->name, sender)) {
                                e->used = ++m->bus_callers->clock;
                                *ret = e->caller;
                                return 0;
                        }
                        if (!slot || !e->name || (slot->name && e->used < slot->used))
                                slot = e;
                }

        r = sd_bus_query_sender_creds(
                message,
                SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID | SD_BUS_CREDS_SUPPLEMENTARY_GIDS |
                        SD_BUS_CREDS_AUGMENT,
                &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &c.uid);
        if (r < 0)
                return r;
        if (sd_bus_creds_get_egid(creds, &c.gid) < 0)
                c.gid = (gid_t)-1;
        n = sd_bus_creds_get_supplementary_gids(creds, &gids);
        c.n_gids = n < 0 ? 0 : MIN(n, CALLER_GIDS_MAX);
        if (c.n_gids > 0)
                memcpy(c.gids, gids, c.n_gids * sizeof(gid_t));
        if (slot) {
                char *name = strdup(sender);

                if (name) {
                        free(slot->name);
                        *slot = (CallerEntry){.name = name, .caller = c, .used = ++m->bus_callers->clock};
                }
        }
        *ret = c;
        return 0;
}

bool bus_caller_may_ptrace(const Caller *c, pid_t pid) {
        uid_t uids[4];
        gid_t gids[4];

        if (c->uid == 0)
                return true;
        if (procfs_read_ids(NULL, pid, uids, gids) < 0)
                return false;
        for (int i = 0; i < 4; i++)
                if (uids[i] != c->uid || gids[i] != c->gid)
                        return false;
        return true;
}

static bool caller_in_group(const Caller *c, gid_t gid) {
        if (c->gid == gid)
                return true;
        for (int i = 0; i < c->n_gids; i++)
                if (c->gids[i] == gid)
                        return true;
        return false;
}

int bus_caller_visibility(const Caller *c, pid_t pid, int hidepid, gid_t gid, bool has_gid) {
        if (c->uid == 0 || hidepid == 0)
                return 0;
        if (has_gid && caller_in_group(c, gid))
                return 0;
        if (bus_caller_may_ptrace(c, pid))
                return 0;
        return hidepid == 1 ? -EACCES : -ESRCH;
}

int bus_caller_reply_busy(sd_bus_error *error, uid_t uid, uint64_t wait_usec) {
        return sd_bus_error_setf(
                error, AFFINITYD_ERROR_BUSY,
                "Calls of uid %u have used their share of affinityd's time; try again in %" PRIu64 " ms",
                (unsigned)uid, (wait_usec + 999) / 1000);
}

int bus_caller_require_root(sd_bus_message *message, sd_bus_error *error, const char *what) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t euid;
        int r;

        r = sd_bus_query_sender_creds(message, SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &euid);
        if (r < 0 || euid != 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED, "Only root may %s.", what);
        return 0;
}
