/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The org.affinityd1 API without a bus (affinityd --api-socket=PATH): a unix stream socket on
 * which every connection is a peer-to-peer D-Bus connection (sd-bus server mode, anonymous
 * authentication off: the kernel's SO_PEERCRED says who the peer is), carrying the same objects
 * as the bus does (manager_vtable, the policy objects). For a pod, where there is no system bus:
 * `kubectl exec ... affinityctl --socket=PATH status`.
 *
 * The socket is made with mode 0600 (only root connects). The callers' credentials are the
 * peer's (sd_bus_query_sender_creds() falls back to them on a direct connection), so what an
 * unprivileged caller may do is the same as on the bus. Subscribe() is refused there: the
 * signals go to the bus only. At most API_SOCKET_CONNECTIONS_MAX connections are served at
 * once; more are closed at accept().
 */

#include <systemd/sd-event.h>

#include "manager.h"

#define API_SOCKET_CONNECTIONS_MAX 16

typedef struct ApiSocket ApiSocket;

/*
 * Binds and listens on path (an existing socket there, one no process listens on any more, is
 * replaced; anything else there is -EEXIST), mode 0600, and serves it on m's event loop.
 * Returns 0 and *ret, -EINVAL (path too long for sockaddr_un), -EEXIST, -ENOMEM, or the -errno
 * of socket(2), bind(2), listen(2) or sd-event.
 */
int api_socket_new(Manager *m, const char *path, ApiSocket **ret);

/* Closes every connection and the socket, and removes its path. NULL accepted; returns NULL. */
ApiSocket *api_socket_free(ApiSocket *s);

/* Whether bus is one of s's peer-to-peer connections. */
bool api_socket_owns(const ApiSocket *s, const sd_bus *bus);
