/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * The raw-socket answer: its header block for a known time, what arrives
 * at the other end of a socket pair, with and without the body, and
 * direct_send (the TLS path): the same bytes in one call of its sender.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "direct.h"

Test(direct, header_block)
{
	char buf[512];
	size_t n = direct_head(buf, sizeof(buf), 431, "Request Header Fields Too Large",
			       "application/problem+json", 42, (time_t)86400 * 365);
	const char *want = "HTTP/1.1 431 Request Header Fields Too Large\r\n"
			   "Date: Fri, 01 Jan 1971 00:00:00 GMT\r\n"
			   "Content-Type: application/problem+json\r\n"
			   "Cache-Control: no-cache\r\nConnection: close\r\nContent-Length: 42\r\n\r\n";

	cr_assert_eq(n, strlen(want));
	cr_assert(memcmp(buf, want, n) == 0, "got %.*s", (int)n, buf);
	/* one byte short of the block and its NUL: nothing, not a cut block */
	cr_assert_eq(direct_head(buf, n, 431, "Request Header Fields Too Large",
				 "application/problem+json", 42, 0),
		     0);
}

static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	ssize_t n;

	while (got < cap && (n = read(fd, buf + got, cap - got)) > 0) {
		got += (size_t)n;
	}
	return got;
}

Test(direct, writes_head_and_body_or_head_only)
{
	const char body[] = "{\"status\":414}";

	for (int head_only = 0; head_only < 2; head_only++) {
		int sv[2];
		char got[1024];
		size_t n;

		cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		cr_assert_eq(direct_write(sv[0], 414, "URI Too Long", "application/problem+json", body,
					  sizeof(body) - 1, head_only),
			     0);
		close(sv[0]);
		n = read_all(sv[1], got, sizeof(got) - 1);
		close(sv[1]);
		got[n] = '\0';
		cr_assert(strncmp(got, "HTTP/1.1 414 URI Too Long\r\n", 27) == 0, "%s", got);
		cr_assert_not_null(strstr(got, "Content-Length: 14\r\n"), "%s", got);
		cr_assert_eq(strstr(got, body) != NULL, !head_only, "%s", got);
		cr_assert_str_eq(strstr(got, "\r\n\r\n") + 4, head_only ? "" : body);
	}
}

Test(direct, a_closed_peer_is_a_failure_not_a_signal)
{
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	cr_assert_eq(direct_write(sv[0], 400, "Bad Request", "application/problem+json", "{}", 2,
				  false),
		     -1);
	close(sv[0]);
}

/* A sender that keeps what it is given, call by call. */
struct capture {
	int calls;
	int result;
	size_t len;
	char buf[1024];
};

static int capture_send(void *cls, const void *buf, size_t len)
{
	struct capture *c = cls;

	c->calls++;
	if (len < sizeof(c->buf)) {
		memcpy(c->buf, buf, len);
		c->len = len;
	}
	return c->result;
}

/* The answer with its Date line cut out: two writes a second apart
 * differ there alone. */
static void without_date(char *s)
{
	char *date = strstr(s, "Date: ");
	char *end = date != NULL ? strstr(date, "\r\n") : NULL;

	if (end != NULL) {
		memmove(date, end + 2, strlen(end + 2) + 1);
	}
}

Test(direct, send_is_the_same_answer_in_one_call)
{
	const char body[] = "{\"status\":431}";

	for (int head_only = 0; head_only < 2; head_only++) {
		struct capture c = {0, 0, 0, {0}};
		int sv[2];
		char want[1024];
		size_t n;

		cr_assert_eq(direct_send(capture_send, &c, 431, "Request Header Fields Too Large",
					 "application/problem+json", body, sizeof(body) - 1, head_only),
			     0);
		cr_assert_eq(c.calls, 1, "the header block and the body go as one record");
		cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		cr_assert_eq(direct_write(sv[0], 431, "Request Header Fields Too Large",
					  "application/problem+json", body, sizeof(body) - 1, head_only),
			     0);
		close(sv[0]);
		n = read_all(sv[1], want, sizeof(want) - 1);
		close(sv[1]);
		want[n] = '\0';
		without_date(want);
		without_date(c.buf);
		cr_assert_str_eq(c.buf, want);
		cr_assert_eq(strstr(c.buf, body) != NULL, !head_only, "%s", c.buf);
	}
}

Test(direct, send_says_what_its_sender_said)
{
	struct capture c = {0, -1, 0, {0}};

	cr_assert_eq(direct_send(capture_send, &c, 400, "Bad Request", "application/problem+json",
				 "{}", 2, false),
		     -1);
	cr_assert_eq(c.calls, 1);
}
