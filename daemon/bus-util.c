/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Strings that need not be UTF-8 on the bus, and array replies. See bus-util.h. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-util.h"
#include "macro.h"
#include "util.h"

/*
 * The length of the UTF-8 sequence at s if it is one D-Bus accepts, else 0. sd-bus refuses a
 * whole message holding a string that is not valid UTF-8 by its rules: no overlong forms, no
 * surrogates, nothing above U+10FFFF, and none of the noncharacters U+FDD0..U+FDEF and
 * U+xFFFE/U+xFFFF.
 */
static size_t utf8_valid_length(const unsigned char *s) {
        uint32_t c;
        size_t n;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                n = 2, c = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                n = 3, c = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                n = 4, c = s[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
                        return 0;
                c = (c << 6) | (s[i] & 0x3f);
        }
        if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
            (c >= 0xd800 && c <= 0xdfff) || (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe)
                return 0;
        return n;
}

const char *bus_string(const char *s, char **buf) {
        const unsigned char *p;
        size_t n, len = 0;
        char *t;

        s = strempty(s);
        for (p = (const unsigned char *)s; *p; p += n)
                if ((n = utf8_valid_length(p)) == 0)
                        break;
        if (!*p)
                return s;

        t = *buf = malloc(4 * strlen(s) + 1);
        if (!t)
                return NULL;
        for (p = (const unsigned char *)s; *p;) {
                n = utf8_valid_length(p);
                if (n == 0) {
                        len += sprintf(t + len, "\\x%02x", *p);
                        p++;
                } else {
                        memcpy(t + len, p, n);
                        len += n;
                        p += n;
                }
        }
        t[len] = '\0';
        return t;
}

int bus_append_string(sd_bus_message *m, const char *s) {
        _cleanup_free_ char *buf = NULL;
        const char *v = bus_string(s, &buf);

        if (!v)
                return -ENOMEM;
        return sd_bus_message_append(m, "s", v);
}

int bus_reply_array(
        sd_bus_message *message, const char *contents, size_t n, bus_append_element_t append,
        const void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_message_new_method_return(message, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', contents);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = append(reply, i, userdata);
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
