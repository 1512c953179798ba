/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Exits at once: the integration suite execs it a thousand times in a burst, under a name that
 * a policy matches, to check that the daemon keeps up and its counters add up.
 */

int main(void) {
        return 0;
}
