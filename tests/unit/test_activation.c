/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Socket activation's variables (server/activation.c) through its own
 * API: sd_listen_fds(3)'s reading of LISTEN_PID, LISTEN_FDS and
 * LISTEN_FDNAMES as a table (for this process or another, numbers and
 * not, the bounds, names that match the count and names that do not),
 * and activation_take unsetting all three whoever they were for. What
 * the descriptors are is the listener's to judge (test_listener.c); a
 * socket passed for real is tests/integration/test_activation.c's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "activation.h"

Test(activation, the_variables_read_as_sd_listen_fds_reads_them)
{
	char self[24], other[24];
	const struct {
		const char *pid, *fds, *names;
		int rc;
		size_t num_fds;
		const char *first_name;
	} cases[] = {
		{NULL, "1", NULL, 0, 0, ""},         /* no LISTEN_PID: none */
		{other, "1", NULL, 0, 0, ""},        /* another process's: none */
		{"12x", "1", NULL, -1, 0, ""},       {"", "1", NULL, -1, 0, ""},
		{"-1", "1", NULL, -1, 0, ""},        {self, NULL, NULL, -1, 0, ""},
		{self, "0", NULL, -1, 0, ""},        {self, "1x", NULL, -1, 0, ""},
		{self, "9", NULL, -1, 0, ""},        {self, " 1", NULL, -1, 0, ""},
		{self, "1", NULL, 0, 1, ""},         {self, "8", NULL, 0, 8, ""},
		{self, "1", "splitkd.socket", 0, 1, "splitkd.socket"},
		{self, "2", "web:admin", 0, 2, "web"},
		{self, "2", "one", 0, 2, ""},        /* a name short: none named */
		{self, "1", "a:b", 0, 1, ""},        /* a name too many: none named */
		{self, "2", ":b", 0, 2, ""},         /* named "" and "b" */
	};

	snprintf(self, sizeof(self), "%ld", (long)getpid());
	snprintf(other, sizeof(other), "%ld", (long)getpid() + 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct activation a;
		char err[256] = "";
		int rc = activation_parse(cases[i].pid, cases[i].fds, cases[i].names, getpid(), &a, err,
					  sizeof(err));

		cr_assert_eq(rc, cases[i].rc, "case %zu: %d (%s)", i, rc, err);
		cr_assert_eq(a.num_fds, cases[i].num_fds, "case %zu", i);
		cr_assert(rc == 0 || strlen(err) > 0, "case %zu: a failure with no message", i);
		for (size_t k = 0; k < a.num_fds; k++) {
			cr_assert_eq(a.fds[k], ACTIVATION_FIRST_FD + (int)k, "case %zu", i);
		}
		cr_assert_str_eq(a.num_fds > 0 ? a.names[0] : "", cases[i].first_name, "case %zu", i);
	}
}

Test(activation, the_second_name_and_a_long_one_cut_to_fit)
{
	char self[24], names[200];
	struct activation a;
	char err[256];

	snprintf(self, sizeof(self), "%ld", (long)getpid());
	cr_assert_eq(activation_parse(self, "2", ":b", getpid(), &a, err, sizeof(err)), 0);
	cr_assert_str_eq(a.names[0], "");
	cr_assert_str_eq(a.names[1], "b");
	memset(names, 'n', 100);
	names[100] = '\0';
	cr_assert_eq(activation_parse(self, "1", names, getpid(), &a, err, sizeof(err)), 0);
	cr_assert_eq(strlen(a.names[0]), ACTIVATION_NAME_MAX);
}

Test(activation, take_unsets_the_three_whoever_they_were_for)
{
	char other[24];
	struct activation a;
	char err[256] = "";

	snprintf(other, sizeof(other), "%ld", (long)getpid() + 1);
	setenv("LISTEN_PID", other, 1);
	setenv("LISTEN_FDS", "1", 1);
	setenv("LISTEN_FDNAMES", "splitkd.socket", 1);
	cr_assert_eq(activation_take(&a, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.num_fds, 0, "another process's sockets were taken");
	cr_assert_null(getenv("LISTEN_PID"));
	cr_assert_null(getenv("LISTEN_FDS"));
	cr_assert_null(getenv("LISTEN_FDNAMES"));

	/* for this process, but unreadable: an error, and unset all the same */
	snprintf(other, sizeof(other), "%ld", (long)getpid());
	setenv("LISTEN_PID", other, 1);
	setenv("LISTEN_FDS", "many", 1);
	cr_assert_eq(activation_take(&a, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "LISTEN_FDS=many"), "%s", err);
	cr_assert_null(getenv("LISTEN_PID"));
	cr_assert_null(getenv("LISTEN_FDS"));
}
