/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Hostile clients, over raw sockets where libcurl is too polite: malformed
 * request lines, header floods, bodies that lie, smuggling shapes,
 * percent-encoding games, bytes that are not UTF-8, hostile JSON, slow and
 * vanishing clients. Every case states the outcome it expects — a status,
 * or a closed connection — and after every case the daemon must still
 * answer a good request with the right bytes.
 */
#include <poll.h>


#include "harness.h"

static struct daemon d;

/* Cleanup only: exit status is asserted in each test (daemon_finish). */
static void stop(void)
{
	daemon_stop(&d);
}

#define CLOSED 0 /* the server closes without an HTTP answer (or after the idle timeout) */

/* Writes a request too long to spell out into b (capacity cap), `size`
 * long in the part the case is about; returns its length. */
typedef size_t builder_fn(char *b, size_t cap, size_t size);

/* Exactly one of bytes, json and build says what is sent. */
struct hostile {
	const char *name;
	const char *bytes; /* the whole request, or NULL */
	size_t len;        /* 0: strlen */
	int expect;        /* HTTP status, or CLOSED */
	const char *json;  /* or: a POST /v1/splits body, sent with its exact length */
	size_t json_len;   /* 0: strlen */
	builder_fn *build; /* or: the case's own builder */
	size_t size;       /* what the builder is given */
};

#define JSON(name, body, expect) {name, NULL, 0, expect, body, 0, NULL, 0}
#define BUILT(name, builder, size, expect) {name, NULL, 0, expect, NULL, 0, builder, size}

/* The builders, one per case that needs one. */
#define APPEND(...) (n += (size_t)snprintf(b + n, cap - n, __VA_ARGS__))

static size_t fill(char *b, size_t n, char c, size_t count)
{
	memset(b + n, c, count);
	return n + count;
}

static size_t long_method(char *b, size_t cap, size_t size)
{
	size_t n = fill(b, 0, 'A', size);

	return APPEND(" /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
}

static size_t long_path(char *b, size_t cap, size_t size)
{
	size_t n = 0;

	APPEND("GET /");
	n = fill(b, n, 'a', size);
	return APPEND(" HTTP/1.1\r\nHost: t\r\n\r\n");
}

static size_t many_headers(char *b, size_t cap, size_t size)
{
	size_t n = 0;

	APPEND("GET /healthz HTTP/1.1\r\nHost: t\r\n");
	for (size_t i = 0; i < size; i++) {
		APPEND("X-%zu: %zu\r\n", i, i);
	}
	return APPEND("\r\n");
}

static size_t big_header(char *b, size_t cap, size_t size)
{
	size_t n = 0;

	APPEND("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: ");
	n = fill(b, n, 'x', size);
	return APPEND("\r\n\r\n");
}

static size_t many_parameters(char *b, size_t cap, size_t size)
{
	size_t n = 0;

	APPEND("GET /v1/splits?");
	for (size_t i = 0; i < size; i++) {
		APPEND("p%zu=%zu&", i, i);
	}
	return APPEND(" HTTP/1.1\r\nHost: t\r\n\r\n");
}

static size_t long_override(char *b, size_t cap, size_t size)
{
	size_t n = 0;

	APPEND("GET /v1/splits?target=h100&model=qwen3-8b&override=");
	n = fill(b, n, '9', size);
	return APPEND(" HTTP/1.1\r\nHost: t\r\n\r\n");
}

/* A POST /v1/splits of the body already written at b + cap / 2 (m bytes),
 * framed by Content-Length or as one chunk. */
static size_t post_framed(char *b, size_t cap, size_t m, bool chunked)
{
	const char *body = b + cap / 2;
	size_t n = 0;

	APPEND("POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n");
	if (chunked) {
		APPEND("Transfer-Encoding: chunked\r\n\r\n%zx\r\n", m);
	} else {
		APPEND("Content-Length: %zu\r\n\r\n", m);
	}
	cr_assert_lt(n + m + 16, cap / 2, "the request outgrew its buffer");
	memmove(b + n, body, m);
	n += m;
	return chunked ? APPEND("\r\n0\r\n\r\n") : n;
}

static size_t json_queries(char *b, size_t cap, size_t size)
{
	char *body = b + cap / 2;
	size_t m = (size_t)snprintf(body, cap / 2, "{\"queries\":[");

	for (size_t i = 0; i < size; i++) {
		m += (size_t)snprintf(body + m, cap / 2 - m, "%s{\"sm_count\":1,\"num_q_heads\":1}",
				      i ? "," : "");
	}
	m += (size_t)snprintf(body + m, cap / 2 - m, "]}");
	return post_framed(b, cap, m, false);
}

static size_t json_spaces_chunked(char *b, size_t cap, size_t size)
{
	memset(b + cap / 2, ' ', size);
	return post_framed(b, cap, size, true);
}

static size_t json_long_string(char *b, size_t cap, size_t size)
{
	char *body = b + cap / 2;
	size_t m = (size_t)snprintf(body, cap / 2, "{\"sm_count\":1,\"num_q_heads\":1,\"override\":\"");

	memset(body + m, 'x', size);
	m += size;
	m += (size_t)snprintf(body + m, cap / 2 - m, "\"}");
	return post_framed(b, cap, m, false);
}

static size_t json_repeated_key(char *b, size_t cap, size_t size)
{
	char *body = b + cap / 2;
	size_t m = (size_t)snprintf(body, cap / 2, "{");

	for (size_t i = 0; i < size; i++) {
		m += (size_t)snprintf(body + m, cap / 2 - m, "%s\"target\":\"h100\"", i ? "," : "");
	}
	m += (size_t)snprintf(body + m, cap / 2 - m, "}");
	return post_framed(b, cap, m, false);
}
#undef APPEND

#define REQ(line, headers) line "\r\nHost: t\r\n" headers "\r\n"
#define POST_JSON(body) \
	"POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: " body

static const struct hostile cases[] = {
	/* request lines */
	{"garbage bytes", "\x01\x02\x03\x04\r\n\r\n", 0, CLOSED, NULL, 0, NULL, 0},
	{"only CRLFs", "\r\n\r\n\r\n\r\n", 0, CLOSED, NULL, 0, NULL, 0},
	{"no version", "GET /healthz\r\n\r\n", 0, 400, NULL, 0, NULL, 0},
	{"HTTP/0.9 style", "GET /healthz\r\n", 0, 400, NULL, 0, NULL, 0},
	{"HTTP/2.0 over HTTP/1 framing", "GET /healthz HTTP/2.0\r\nHost: t\r\n\r\n", 0, 505, NULL, 0, NULL, 0},
	{"HTTP/1.9 (a later 1.x is 1.1)", "GET /healthz HTTP/1.9\r\nHost: t\r\n\r\n", 0, 200, NULL, 0, NULL, 0},
	{"version garbage", "GET /healthz HTTX/1.1\r\nHost: t\r\n\r\n", 0, 400, NULL, 0, NULL, 0},
	{"lowercase method", REQ("get /healthz HTTP/1.1", ""), 0, 405, NULL, 0, NULL, 0},
	{"unknown method", REQ("BREW /healthz HTTP/1.1", ""), 0, 405, NULL, 0, NULL, 0},
	{"method with symbols", REQ("G@T /healthz HTTP/1.1", ""), 0, 405, NULL, 0, NULL, 0},
	{"path without slash", REQ("GET healthz HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"asterisk form", REQ("OPTIONS * HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"absolute form", REQ("GET http://t/healthz HTTP/1.1", ""), 0, 200, NULL, 0, NULL, 0},
	/* an empty path is "/" (RFC 9112 3.2.2): the JSON index since GET / exists */
	{"absolute form, no path", REQ("GET http://t HTTP/1.1", ""), 0, 200, NULL, 0, NULL, 0},
	{"bare LF line ends", "GET /healthz HTTP/1.1\nHost: t\n\n", 0, 200, NULL, 0, NULL, 0},
	{"HTTP/1.0 without Host", "GET /healthz HTTP/1.0\r\n\r\n", 0, 200, NULL, 0, NULL, 0},
	BUILT("very long method", long_method, 5000, 431),
	BUILT("very long path", long_path, 5000, 431),
	BUILT("path past what the server can hold", long_path, 100000, 414),
	/* headers */
	{"HTTP/1.1 without Host", "GET /healthz HTTP/1.1\r\n\r\n", 0, 400, NULL, 0, NULL, 0},
	{"two Host headers", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 0, 400, NULL, 0, NULL, 0},
	{"header without colon", REQ("GET /healthz HTTP/1.1", "Broken header\r\n"), 0, 400, NULL, 0, NULL, 0},
	BUILT("header flood", many_headers, 2000, 431),
	BUILT("one huge header", big_header, 5000, 431),
	BUILT("header far past the limit", big_header, 100000, 431),
	{"non-ASCII header value", REQ("GET /healthz HTTP/1.1", "X-Name: \xff\xfe\xc3\x28\r\n"), 0, 200, NULL, 0, NULL, 0},
	{"empty header value", REQ("GET /healthz HTTP/1.1", "X-Empty:\r\n"), 0, 200, NULL, 0, NULL, 0},
	{"If-None-Match garbage", REQ("GET /healthz HTTP/1.1", "If-None-Match: \"\r\n"), 0, 200, NULL, 0, NULL, 0},
	{"If-None-Match star", REQ("GET /healthz HTTP/1.1", "If-None-Match: *\r\n"), 0, 304, NULL, 0, NULL, 0},
	{"Expect bogus", POST_JSON("2\r\nExpect: 200-ok\r\n\r\n{}"), 0, 417, NULL, 0, NULL, 0},
	{"Expect 100-continue", POST_JSON("2\r\nExpect: 100-continue\r\n\r\n{}"), 0, 100, NULL, 0, NULL, 0},
	{"Content-Type missing on POST", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}", 0, 415, NULL, 0, NULL, 0},
	{"Content-Type text/json", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: text/json\r\nContent-Length: 2\r\n\r\n{}", 0, 415, NULL, 0, NULL, 0},
	/* body framing and smuggling shapes */
	{"two Content-Length, same", POST_JSON("2\r\nContent-Length: 2\r\n\r\n{}"), 0, 400, NULL, 0, NULL, 0},
	{"two Content-Length, different", POST_JSON("2\r\nContent-Length: 7\r\n\r\n{}"), 0, 400, NULL, 0, NULL, 0},
	{"Content-Length and chunked", POST_JSON("4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"), 0, 400, NULL, 0, NULL, 0},
	{"two Transfer-Encoding", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 0, 400, NULL, 0, NULL, 0},
	{"Transfer-Encoding gzip", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n{}", 0, 501, NULL, 0, NULL, 0},
	{"Transfer-Encoding chunked, chunked", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 0, 501, NULL, 0, NULL, 0},
	{"Transfer-Encoding identity", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: identity\r\n\r\n", 0, 501, NULL, 0, NULL, 0},
	{"chunked, upper case", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: CHUNKED\r\n\r\n21\r\n{\"sm_count\":132,\"num_q_heads\":24}\r\n0\r\n\r\n", 0, 200, NULL, 0, NULL, 0},
	{"chunked with extension", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n21;ext=1\r\n{\"sm_count\":132,\"num_q_heads\":24}\r\n0\r\n\r\n", 0, 200, NULL, 0, NULL, 0},
	{"chunk size not hex", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 0, 400, NULL, 0, NULL, 0},
	{"chunk size that lies (huge)", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n{}\r\n", 0, CLOSED, NULL, 0, NULL, 0},
	{"chunked without its last chunk", "POST /v1/splits HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n", 0, CLOSED, NULL, 0, NULL, 0},
	{"Content-Length negative", POST_JSON("-1\r\n\r\n{}"), 0, 400, NULL, 0, NULL, 0},
	{"Content-Length not a number", POST_JSON("abc\r\n\r\n{}"), 0, 400, NULL, 0, NULL, 0},
	{"Content-Length past 2^64", POST_JSON("99999999999999999999999\r\n\r\n{}"), 0, 413, NULL, 0, NULL, 0},
	{"Content-Length over the limit", POST_JSON("2000000\r\n\r\n{}"), 0, 413, NULL, 0, NULL, 0},
	{"Content-Length longer than the body", POST_JSON("100\r\n\r\n{}"), 0, CLOSED, NULL, 0, NULL, 0},
	{"Content-Length shorter than the body", POST_JSON("2\r\n\r\n{}GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"), 0, 400, NULL, 0, NULL, 0},
	JSON("Content-Length zero", "", 400),
	{"body on a GET", REQ("GET /healthz HTTP/1.1", "Content-Length: 5\r\n") "hello", 0, 200, NULL, 0, NULL, 0},
	{"NUL byte in the body", NULL, 0, 400, "{\0}}", 4, NULL, 0},
	/* query strings and percent games */
	{"NUL in a number", REQ("GET /v1/splits?target=h100&model=qwen3-8b&max_batch_size=1%006 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"NUL in override", REQ("GET /v1/splits?target=h100&model=qwen3-8b&override=4%00 HTTP/1.1", ""), 0, 200, NULL, 0, NULL, 0},
	{"NUL in target", REQ("GET /v1/splits?target=h100%00&model=qwen3-8b HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"bad escape", REQ("GET /v1/splits?target=%zz&model=qwen3-8b HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"truncated escape", REQ("GET /v1/splits?target=h100&model=qwen3-8b&override=% HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"half escape", REQ("GET /v1/splits?target=h100&model=qwen3-8b&override=%4 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"double encoding", REQ("GET /v1/splits?target=h%25310%25300&model=qwen3-8b HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"encoded name", REQ("GET /v1/splits?target=%68%31%30%30&model=qwen3-8b HTTP/1.1", ""), 0, 200, NULL, 0, NULL, 0},
	{"encoded ampersand in a value", REQ("GET /v1/splits?target=h100%26model%3Dqwen3-8b HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"encoded equals in a key", REQ("GET /v1/splits?target%3Dh100=1 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"plus in a number", REQ("GET /v1/splits?target=h100&model=qwen3-8b&max_batch_size=+16 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"encoded plus in a number", REQ("GET /v1/splits?target=h100&model=qwen3-8b&max_batch_size=%2B16 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"empty key", REQ("GET /v1/splits?=h100 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"only ampersands", REQ("GET /v1/splits?&&&& HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	BUILT("33 parameters", many_parameters, 33, 400),
	{"repeated parameter", REQ("GET /v1/splits?target=h100&target=h100&model=qwen3-8b HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"unicode key", REQ("GET /v1/splits?t%C3%A4rget=h100 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"non-UTF-8 key", REQ("GET /v1/splits?%FF=1 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"non-UTF-8 target", REQ("GET /v1/splits?target=%FF%FE&model=qwen3-8b HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"raw non-UTF-8 in the query", REQ("GET /v1/splits?target=\xff\xfe&model=qwen3-8b HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"non-UTF-8 override", REQ("GET /v1/splits?target=h100&model=qwen3-8b&override=%C3%28 HTTP/1.1", ""), 0, 200, NULL, 0, NULL, 0},
	{"overlong UTF-8 space in override", REQ("GET /v1/splits?target=h100&model=qwen3-8b&override=%C0%A04 HTTP/1.1", ""), 0, 200, NULL, 0, NULL, 0},
	BUILT("long override", long_override, 300, 400),
	{"number past 2^64", REQ("GET /v1/splits?target=h100&model=qwen3-8b&num_seqs=184467440737095516160 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"dot-dot path", REQ("GET /v1/targets/%2e%2e/models HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"encoded slash in a name", REQ("GET /v1/targets/h100%2Fx HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"encoded name in the path", REQ("GET /v1/targets/%68%31%30%30 HTTP/1.1", ""), 0, 200, NULL, 0, NULL, 0},
	{"NUL in the path name", REQ("GET /v1/targets/h100%00 HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"double slash", REQ("GET //v1/splits HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"trailing slash", REQ("GET /v1/splits/ HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"empty segment", REQ("GET /v1//targets HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"fragment in the target", REQ("GET /healthz#x HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	{"query on /healthz", REQ("GET /healthz?x=1 HTTP/1.1", ""), 0, 400, NULL, 0, NULL, 0},
	{"unknown problem type", REQ("GET /problems/%2e%2e HTTP/1.1", ""), 0, 404, NULL, 0, NULL, 0},
	/* JSON bodies */
	JSON("JSON nested 33 deep", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 400),
	JSON("JSON not UTF-8", "{\"target\":\"\xff\xfe\"}  ", 400),
	JSON("JSON \\u0000", "{\"target\":\"h100\\u0000x\",\"a\":1}", 400),
	JSON("JSON raw control", "{\"target\":\"h\x01" "100\"} ", 400),
	JSON("JSON duplicate key", "{\"target\":\"h100\",\"target\":\"gb10\"}", 400),
	JSON("JSON trailing garbage", "{}{}", 400),
	JSON("JSON NaN", "{\"num_q_heads\":NaN}", 400),
	JSON("JSON Infinity", "{\"num_q_heads\":Infinity}", 400),
	JSON("JSON 1e400", "{\"sm_count\":132,\"num_q_heads\":1e400}", 400),
	JSON("JSON negative zero", "{\"sm_count\":132,\"num_q_heads\":-0}", 400),
	JSON("JSON 24.0 is 24", "{\"sm_count\":132,\"num_q_heads\":24.0}", 200),
	JSON("JSON string for a number", "{\"sm_count\":132,\"num_q_heads\":\"24\"}", 400),
	JSON("JSON array on top", "[]", 400),
	JSON("JSON string on top", "\"h100\"", 400),
	JSON("JSON empty object", "{}", 400),
	JSON("JSON nested queries", "{\"queries\":[{\"queries\":[]}]}", 200),
	JSON("JSON queries not an array", "{\"queries\":1}", 400),
	JSON("JSON empty queries", "{\"queries\":[]}", 400),
	JSON("JSON with a BOM", "\xef\xbb\xbf{\"sm_count\":132,\"num_q_heads\":24}", 200),
	BUILT("JSON 1025 queries", json_queries, 1025, 413),
	BUILT("JSON body past the limit, chunked", json_spaces_chunked, 1100000, 413),
	BUILT("JSON very long string", json_long_string, 500000, 400),
	BUILT("JSON many keys", json_repeated_key, 50000, 400),
};

/* The request a case sends: its bytes, its JSON body framed, or what its
 * builder writes. A case must say exactly one of them. */
static char *request_of(const struct hostile *c, size_t *len)
{
	size_t cap = 3u << 20, n = 0;
	char *b = malloc(cap);

	cr_assert_not_null(b);
	cr_assert_eq((c->bytes != NULL) + (c->json != NULL) + (c->build != NULL), 1,
		     "case \"%s\" must give exactly one of bytes, json, build", c->name);
	if (c->bytes != NULL) {
		n = c->len ? c->len : strlen(c->bytes);
		memcpy(b, c->bytes, n);
	} else if (c->json != NULL) {
		size_t m = c->json_len ? c->json_len : strlen(c->json);

		memcpy(b + cap / 2, c->json, m);
		n = post_framed(b, cap, m, false);
	} else {
		n = c->build(b, cap, c->size);
	}
	*len = n;
	return b;
}

/* True once `got` holds one whole answer (headers, and a body as long as
 * its Content-Length; a 1xx has none). */
static bool whole_answer(const char *got)
{
	const char *end = strstr(got, "\r\n\r\n");
	const char *cl;

	if (end == NULL) {
		return false;
	}
	if (strncmp(got, "HTTP/1.1 1", 10) == 0) {
		return true;
	}
	cl = strstr(got, "\r\nContent-Length: "); /* as libmicrohttpd spells it */
	return cl == NULL || cl > end || strlen(end + 4) >= strtoul(cl + 18, NULL, 10);
}

/* Sends everything it can (the server may close early: that is fine),
 * then reads until one whole answer is in, the server closes, or `ms`
 * pass without a byte. Returns the status of the first answer, or CLOSED
 * when none came. */
static int exchange(const char *bytes, size_t len, int ms, char *head, size_t head_cap)
{
	int fd = connect_raw(d.port), status = CLOSED;
	size_t sent = 0, got = 0;
	struct pollfd p = {fd, POLLIN, 0};

	while (sent < len) {
		ssize_t w = send(fd, bytes + sent, len - sent, MSG_NOSIGNAL);

		if (w <= 0) {
			break;
		}
		sent += (size_t)w;
	}
	head[0] = '\0';
	while (!whole_answer(head) && poll(&p, 1, ms) == 1) {
		ssize_t r = read(fd, head + got, head_cap - 1 - got);

		if (r <= 0) {
			break;
		}
		got += (size_t)r;
		head[got] = '\0';
		if (got + 1 >= head_cap) {
			break;
		}
	}
	close(fd);
	if (strncmp(head, "HTTP/1.", 7) == 0) {
		status = (int)strtol(head + 9, NULL, 10);
	}
	return status;
}

/* The good request every case is followed by: the seed's answer, exactly. */
static void still_answers(const char *after)
{
	struct reply r = http(&d, "GET", "/v1/splits?target=h100&model=qwen3.8-27b&max_batch_size=16", NULL, NULL);

	cr_assert_eq(r.status, 200, "after \"%s\": %ld", after, r.status);
	cr_assert_eq(jnum(r.json, "num_splits"), 11, "after \"%s\"", after);
	cr_assert_eq(jnum(r.json, "workspace_slots"), 4224, "after \"%s\"", after);
	reply_free(&r);
}

Test(hostile, every_case_answers_as_expected_and_the_daemon_carries_on, .fini = stop, .timeout = 240)
{
	const char *args[] = {"--access-log", "off", "--idle-timeout", "1", NULL};
	char *head = malloc(1 << 16);
	size_t count = sizeof(cases) / sizeof(cases[0]);

	daemon_start(&d, args);
	for (size_t i = 0; i < count; i++) {
		const struct hostile *c = &cases[i];
		size_t len;
		char *request = request_of(c, &len);
		int got;

		got = exchange(request, len, 3000, head, 1 << 16);
		cr_expect_eq(got, c->expect, "case %zu \"%s\": got %d, want %d\n%.300s", i, c->name, got,
			     c->expect, head);
		/* Errors are problem+json, except the few libmicrohttpd answers
		 * itself before splitkd sees a request: a request line it cannot
		 * parse (400, 505) and one too big for its memory (414, 431). */
		if (got >= 400) {
			static const char *const mhd_answers[] = {
				"header flood", "header far past the limit",
				"path past what the server can hold", "Content-Length past 2^64"};
			bool mhd_own = got == 505 || (got == 400 && strstr(head, "Request malformed") != NULL);

			for (size_t k = 0; k < sizeof(mhd_answers) / sizeof(mhd_answers[0]); k++) {
				mhd_own = mhd_own || strcmp(c->name, mhd_answers[k]) == 0;
			}

			cr_expect(mhd_own || strstr(head, "application/problem+json") != NULL, "%s: %.300s",
				  c->name, head);
		}
		free(request);
		still_answers(c->name);
	}
	cr_assert_geq(count, 100, "only %zu hostile cases", count);
	free(head);
	daemon_finish(&d);
}

Test(hostile, slowloris_does_not_hold_up_others_and_is_closed_when_it_stalls, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", "--idle-timeout", "1", NULL};
	const char *req = "GET /healthz HTTP/1.1\r\nHost: t\r\n";
	int fd;

	daemon_start(&d, args);
	fd = connect_raw(d.port);
	for (size_t i = 0; req[i] != '\0'; i++) {
		cr_assert_eq(write(fd, req + i, 1), 1);
		if (i % 8 == 0) {
			still_answers("a slow client mid-request"); /* others are served meanwhile */
		}
		sleep_ms(50);
	}
	/* now it stops sending: the idle timeout closes it */
	{
		struct pollfd p = {fd, POLLIN, 0};
		char buf[64];

		cr_assert_eq(poll(&p, 1, 5000), 1, "a stalled client was never closed");
		cr_assert_leq(read(fd, buf, sizeof(buf)), 0);
	}
	close(fd);
	still_answers("slowloris");
	daemon_finish(&d);
}

Test(hostile, clients_that_vanish_mid_answer, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	static const char req[] = "GET /v1/matrix?max_batch_size=16 HTTP/1.1\r\nHost: t\r\n\r\n";

	daemon_start(&d, args);
	for (int i = 0; i < 200; i++) {
		int fd = connect_raw(d.port);
		struct linger hard = {1, 0};

		cr_assert_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
		if (i % 2 == 0) {
			/* RST instead of FIN: the answer hits a dead socket */
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
		}
		close(fd);
	}
	still_answers("200 vanished clients");
	daemon_finish(&d);
}

Test(hostile, half_closed_client_still_gets_its_answer, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	static const char req[] = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
	int fd;
	char buf[512] = "";
	ssize_t n;

	daemon_start(&d, args);
	fd = connect_raw(d.port);
	cr_assert_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
	shutdown(fd, SHUT_WR);
	n = read(fd, buf, sizeof(buf) - 1);
	cr_assert_gt(n, 12);
	cr_assert(strncmp(buf, "HTTP/1.1 200", 12) == 0, "%s", buf);
	close(fd);
	daemon_finish(&d);
}

Test(hostile, a_hundred_pipelined_requests_get_a_hundred_answers, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	static const char one[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
	char *all = malloc(100 * sizeof(one)), *got = calloc(1, 1 << 16);
	size_t n = 0, have = 0;
	int fd, answers = 0;
	struct pollfd p;

	daemon_start(&d, args);
	for (int i = 0; i < 100; i++) {
		memcpy(all + n, one, sizeof(one) - 1);
		n += sizeof(one) - 1;
	}
	fd = connect_raw(d.port);
	cr_assert_eq(write(fd, all, n), (ssize_t)n);
	p = (struct pollfd){fd, POLLIN, 0};
	while (answers < 100 && poll(&p, 1, 3000) == 1) {
		ssize_t r = read(fd, got + have, (1 << 16) - 1 - have);

		if (r <= 0) {
			break;
		}
		have += (size_t)r;
		got[have] = '\0';
		answers = 0;
		for (const char *s = got; (s = strstr(s, "HTTP/1.1 200")) != NULL; s++) {
			answers++;
		}
	}
	cr_assert_eq(answers, 100);
	close(fd);
	free(all);
	free(got);
	daemon_finish(&d);
}

Test(hostile, connect_and_close_without_a_word, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};

	daemon_start(&d, args);
	for (int i = 0; i < 500; i++) {
		close(connect_raw(d.port));
	}
	still_answers("500 silent connections");
	daemon_finish(&d);
}

Test(hostile, one_byte_at_a_time_is_still_a_request, .fini = stop, .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	static const char req[] = "GET /v1/policy?spelling=auto HTTP/1.1\r\nHost: t\r\n\r\n";
	int fd;
	char buf[1024] = "";

	daemon_start(&d, args);
	fd = connect_raw(d.port);
	for (size_t i = 0; i < sizeof(req) - 1; i++) {
		cr_assert_eq(write(fd, req + i, 1), 1);
	}
	cr_assert_gt(read(fd, buf, sizeof(buf) - 1), 12);
	cr_assert(strncmp(buf, "HTTP/1.1 200", 12) == 0, "%s", buf);
	close(fd);
	daemon_finish(&d);
}

/* The bytes the kernel holds in the send queue of splitkd's end of the
 * connection whose client end is bound to client_port (/proc/net/tcp's
 * tx_queue: sent but unacknowledged, and unsent), or -1 when not found. */
static long server_send_queue(unsigned server_port, unsigned client_port)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[512];
	long queued = -1;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned local, remote;
		unsigned long tx;

		/* any state: an answer fully handed to the kernel may already be
		 * closing (FIN_WAIT1) with its bytes still queued */
		if (sscanf(line, " %*u: %*x:%x %*x:%x %*x %lx:%*x", &local, &remote, &tx) == 3 &&
		    local == server_port && remote == client_port) {
			queued = (long)tx;
		}
	}
	fclose(f);
	return queued;
}

/* A client that asks for a large answer and does not read it holds a
 * bounded share of it in splitkd's kernel buffers (UNSENT_MAX in httpd.c),
 * not the whole answer: 256 such clients were a burst of 44 MiB of kernel
 * copies that honest requests waited behind (issue 33). It still gets
 * the whole answer once it reads. */
Test(hostile, a_client_that_does_not_read_holds_a_bounded_share_of_its_answer, .fini = stop,
     .timeout = 60)
{
	const char *args[] = {"--access-log", "off", NULL};
	static const char req[] = "GET /openapi.json HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
	struct reply doc;
	struct sockaddr_in a = {0}, me = {0};
	socklen_t me_len = sizeof(me);
	int fd = socket(AF_INET, SOCK_STREAM, 0), small = 1024;
	long queued = -1, last = -2;
	size_t got = 0;
	char buf[65536];
	ssize_t n;

	daemon_start(&d, args);
	doc = http(&d, "GET", "/openapi.json", NULL, NULL);
	cr_assert_eq(doc.status, 200);
	/* the bound means something only for an answer well past it */
	cr_assert_gt(doc.len, 128 * 1024, "openapi.json is %zu bytes", doc.len);
	/* a receive window of about 1 KiB, set before the handshake */
	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)d.port);
	a.sin_addr.s_addr = htonl(0x7f000001);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&me, &me_len), 0);
	cr_assert_eq(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
	/* wait until splitkd has queued what it will (two equal readings
	 * 100 ms apart), 3 s at most */
	for (int i = 0; i < 30 && (queued <= 0 || queued != last); i++) {
		sleep_ms(100);
		last = queued;
		queued = server_send_queue(d.port, ntohs(me.sin_port));
	}
	cr_assert_gt(queued, 0, "splitkd has not begun the answer");
	cr_assert_leq(queued, 64 * 1024, "%ld bytes of a %zu-byte answer queued for a client that does not read",
		      queued, doc.len);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		got += (size_t)n;
	}
	cr_assert_gt(got, doc.len, "the answer (%zu bytes with its headers) is whole", got);
	close(fd);
	reply_free(&doc);
	daemon_finish(&d);
}
