/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Starts a program the way systemd starts a unit's: installed under the name "systemd", it
 * forks a child that names itself "(NAME)" (what systemd's child calls itself before its exec),
 * changes its user to nobody (User=), waits a moment, and execs PATH as NAME. The parent prints
 * "child PID" and waits for it.
 *
 * Usage: systemd PATH NAME
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
        char comm[16];
        pid_t pid;
        int status;

        if (argc != 3)
                return 2;
        pid = fork();
        if (pid < 0)
                return 1;
        if (pid == 0) {
                snprintf(comm, sizeof comm, "(%s)", argv[2]);
                if (prctl(PR_SET_NAME, comm) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(126);
                usleep(300 * 1000);
                execl(argv[1], argv[2], "infinity", (char *)NULL);
                _exit(127);
        }
        printf("child %d\n", (int)pid);
        fflush(stdout);
        return waitpid(pid, &status, 0) == pid ? 0 : 1;
}
