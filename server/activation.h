/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * activation — the listening sockets a service manager passes (systemd's
 * socket activation, the protocol of sd_listen_fds(3)): LISTEN_PID names
 * the process they are for, LISTEN_FDS how many there are, from fd 3 on,
 * and LISTEN_FDNAMES their names, colon-separated (a socket unit's name,
 * or its FileDescriptorName=). Written here rather than linked from
 * libsystemd: the protocol is three variables, and splitkd links nothing
 * it does not need.
 *
 * What it never does: bind, listen or accept (the listener adopts what
 * this finds, listener_adopt), or judge what the descriptors are (the
 * listener does, before it serves on them). activation_take reads and
 * unsets the variables, whoever they were for, so that no child inherits
 * them: call it once, in main, before any thread starts (setenv and
 * unsetenv are not thread-safe). activation_parse is pure. The
 * descriptors found are handed on (the listener closes them); the struct
 * holds no allocation.
 */
#ifndef SPLITKD_ACTIVATION_H
#define SPLITKD_ACTIVATION_H

#include <stddef.h>
#include <sys/types.h>

#include "listener.h"

#define ACTIVATION_FIRST_FD 3 /* SD_LISTEN_FDS_START */
#define ACTIVATION_MAX_FDS LISTENER_MAX_SOCKETS
#define ACTIVATION_NAME_MAX 63 /* a longer name is cut for the log */

struct activation {
	int fds[ACTIVATION_MAX_FDS];
	char names[ACTIVATION_MAX_FDS][ACTIVATION_NAME_MAX + 1]; /* "" when not named */
	size_t num_fds; /* 0: none for this process */
};

/*
 * The three variables' values (NULL: unset) for process `self`. Sockets
 * for another process, or no LISTEN_PID, are none (num_fds 0, returns 0),
 * as sd_listen_fds(3) has it. Returns 0, or -1 with why in err: a value
 * that is not a number, LISTEN_FDS 0 or more than ACTIVATION_MAX_FDS.
 * Names are taken only when LISTEN_FDNAMES has one for each socket.
 */
int activation_parse(const char *listen_pid, const char *listen_fds, const char *fd_names,
		     pid_t self, struct activation *out, char *err, size_t err_cap);

/*
 * activation_parse on this process's environment, then unsets the three
 * variables; each socket found is marked close-on-exec. Returns 0
 * (out->num_fds 0: serve on --listen), or -1 with why in err (a start-up
 * error).
 */
int activation_take(struct activation *out, char *err, size_t err_cap);

#endif /* SPLITKD_ACTIVATION_H */
