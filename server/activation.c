/* SPDX-License-Identifier: AGPL-3.0-only */
#include "activation.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A whole decimal number up to max, nothing else: sd_listen_fds(3) reads
 * LISTEN_PID and LISTEN_FDS as strictly as this. */
static int whole_number(const char *s, unsigned long max, unsigned long *out)
{
	char *end = NULL;

	if (s == NULL || *s < '0' || *s > '9') {
		return -1;
	}
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno == 0 && *end == '\0' && *out <= max ? 0 : -1;
}

/* LISTEN_FDNAMES: one name a socket, colon-separated; any other count
 * names none (a name is only ever said in the log). */
static void take_names(const char *names, struct activation *out)
{
	size_t n = 1;

	for (const char *p = names; *p != '\0'; p++) {
		n += *p == ':';
	}
	if (n != out->num_fds) {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strcspn(names, ":");

		snprintf(out->names[i], sizeof(out->names[i]), "%.*s", (int)len, names);
		names += len + (names[len] == ':');
	}
}

int activation_parse(const char *listen_pid, const char *listen_fds, const char *fd_names,
		     pid_t self, struct activation *out, char *err, size_t err_cap)
{
	unsigned long pid, n;

	memset(out, 0, sizeof(*out));
	if (listen_pid == NULL) {
		return 0;
	}
	if (whole_number(listen_pid, (unsigned long)-1, &pid) != 0) {
		snprintf(err, err_cap, "LISTEN_PID=%s is not a process id", listen_pid);
		return -1;
	}
	if (pid != (unsigned long)self) {
		return 0; /* for another process (a parent's, inherited) */
	}
	if (whole_number(listen_fds, ACTIVATION_MAX_FDS, &n) != 0 || n == 0) {
		snprintf(err, err_cap, "LISTEN_FDS=%s: splitkd takes 1 to %d sockets from its service "
			 "manager", listen_fds != NULL ? listen_fds : "(unset)", ACTIVATION_MAX_FDS);
		return -1;
	}
	out->num_fds = n;
	for (size_t i = 0; i < n; i++) {
		out->fds[i] = ACTIVATION_FIRST_FD + (int)i;
	}
	if (fd_names != NULL) {
		take_names(fd_names, out);
	}
	return 0;
}

int activation_take(struct activation *out, char *err, size_t err_cap)
{
	int ret = activation_parse(getenv("LISTEN_PID"), getenv("LISTEN_FDS"),
				   getenv("LISTEN_FDNAMES"), getpid(), out, err, err_cap);

	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	for (size_t i = 0; ret == 0 && i < out->num_fds; i++) {
		int flags = fcntl(out->fds[i], F_GETFD);

		if (flags < 0 || fcntl(out->fds[i], F_SETFD, flags | FD_CLOEXEC) != 0) {
			snprintf(err, err_cap, "LISTEN_FDS=%zu, but descriptor %d: %s", out->num_fds,
				 out->fds[i], strerror(errno));
			out->num_fds = 0;
			ret = -1;
		}
	}
	return ret;
}
