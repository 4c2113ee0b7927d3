/* SPDX-License-Identifier: AGPL-3.0-only */
/*
 * Soak: the real daemon for SOAK_SECONDS (default 60) under a mix of good
 * queries, bad ones and batches from four threads, while the catalog is
 * swapped by SIGHUP every two seconds. Every answer is checked: a decision
 * against the policy core, computed here from the catalog the answer names
 * by digest; an error for its status and problem+json shape. Resident
 * memory is read after warm-up and at the end. Prints
 * "soak: N passed, N failed" and exits 0 only with nothing wrong, the
 * daemon alive throughout, memory flat (within 2 MiB) and a clean exit.
 * Loopback only; bounded in time; stops by itself.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "catalog.h"
#include "splitk.h"

static const char *cat_a =
	"{\"targets\":[{\"name\":\"hopper\",\"aliases\":[\"h100\"],\"sm_count\":132,\"attn_decode_splitk\":\"auto\"},"
	"{\"name\":\"gb10\",\"sm_count\":48,\"attn_decode_splitk\":\"legacy\"},"
	"{\"name\":\"b200\",\"sm_count\":148,\"attn_decode_splitk\":\"legacy\"}],"
	"\"models\":[{\"name\":\"qwen3.8-27b\",\"num_q_heads\":24},"
	"{\"name\":\"llama-3.1-70b\",\"num_q_heads\":64,\"num_kv_heads\":8,\"head_dim\":128},"
	"{\"name\":\"gemma-2-9b\",\"num_q_heads\":16,\"num_kv_heads\":8,\"head_dim\":256}]}";
/* the same names, other numbers and declarations: answers must follow */
static const char *cat_b =
	"{\"targets\":[{\"name\":\"hopper\",\"aliases\":[\"h100\"],\"sm_count\":114,\"attn_decode_splitk\":\"8\"},"
	"{\"name\":\"gb10\",\"sm_count\":48,\"attn_decode_splitk\":\"auto\"},"
	"{\"name\":\"b200\",\"sm_count\":148,\"attn_decode_splitk\":\"auto\"}],"
	"\"models\":[{\"name\":\"qwen3.8-27b\",\"num_q_heads\":24,\"head_dim\":128},"
	"{\"name\":\"llama-3.1-70b\",\"num_q_heads\":64,\"num_kv_heads\":8,\"head_dim\":128},"
	"{\"name\":\"gemma-2-9b\",\"num_q_heads\":32,\"num_kv_heads\":8,\"head_dim\":256}]}";

static struct catalog *cats[2];
static char base[64];
static atomic_bool stop;
static atomic_long passed, failed;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static void wrong(const char *what, const char *url, const char *body)
{
	atomic_fetch_add(&failed, 1);
	pthread_mutex_lock(&report_lock);
	if (atomic_load(&failed) <= 10) {
		fprintf(stderr, "WRONG: %s\n  %s\n  %.300s\n", what, url, body ? body : "");
	}
	pthread_mutex_unlock(&report_lock);
}

struct reply_buf {
	char *p;
	size_t n;
};

static size_t collect(char *d, size_t s, size_t n, void *u)
{
	struct reply_buf *b = u;
	char *g = realloc(b->p, b->n + s * n + 1);

	if (g == NULL) {
		return 0;
	}
	b->p = g;
	memcpy(b->p + b->n, d, s * n);
	b->n += s * n;
	b->p[b->n] = '\0';
	return s * n;
}

static const struct catalog *by_digest(const char *digest)
{
	for (int i = 0; i < 2; i++) {
		if (strcmp(cats[i]->digest, digest) == 0) {
			return cats[i];
		}
	}
	return NULL;
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* A decision is right for the catalog it names: recomputed from scratch. */
static bool decision_ok(const cJSON *d, const char *target, const char *model, uint32_t mb,
			const char *override)
{
	const cJSON *digest = cJSON_GetObjectItemCaseSensitive(d, "catalog");
	const struct catalog *cat = cJSON_IsString(digest) ? by_digest(digest->valuestring) : NULL;
	const struct catalog_target *t;
	const struct catalog_model *m;
	struct splitk_resolved r;
	char label[SPLITK_LABEL_MAX];
	uint32_t ref, splits, slots;

	if (cat == NULL) {
		return false;
	}
	t = catalog_find_target(cat, target, strlen(target));
	m = catalog_find_model(cat, model, strlen(model));
	splitk_label(t->declared_policy, label);
	r = splitk_resolve(label, strlen(label), override, override ? strlen(override) : 0);
	ref = splitk_split_ref_seqs(1, mb);
	splits = splitk_num_splits(r.policy, t->sm_count, m->num_q_heads, ref);
	slots = splitk_workspace_slots(r.policy, t->sm_count, m->num_q_heads, mb, ref);
	return num(d, "num_splits") == splits && num(d, "workspace_slots") == slots &&
	       num(d, "sm_count") == t->sm_count && num(d, "num_q_heads") == m->num_q_heads &&
	       (m->head_dim == 0 ? cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(d, "workspace_bytes"))
				 : num(d, "workspace_bytes") == (double)slots * (m->head_dim + 2) * 4.0);
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *worker(void *arg)
{
	static const char *const targets[] = {"hopper", "h100", "gb10", "b200"};
	static const char *const models[] = {"qwen3.8-27b", "llama-3.1-70b", "gemma-2-9b"};
	static const char *const overrides[] = {NULL, "auto", "legacy", "4", "99", "off", "atuo", " 8 "};
	static const char *const overrides_enc[] = {NULL, "auto", "legacy", "4", "99", "off", "atuo", "%208%20"};
	static const struct {
		const char *path;
		long status;
	} bad[] = {
		{"/v1/splits?target=nope&model=gemma-2-9b", 404},
		{"/v1/splits?target=h100&model=gemma-2-9b&max_batch_size=0", 400},
		{"/v1/splits?target=h100&model=gemma-2-9b&colour=red", 400},
		{"/v1/splits?target=%zz", 400},
		{"/v1/nowhere", 404},
		{"/v1/models/nope", 404},
	};
	uint64_t seed = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15u + 1;
	CURL *curl = curl_easy_init();
	struct curl_slist *json = curl_slist_append(NULL, "Content-Type: application/json");

	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	while (!atomic_load(&stop)) {
		uint64_t r = rng_next(&seed);
		int kind = (int)(r % 10);
		struct reply_buf b = {0};
		char url[512], body[8192];
		long status = 0;
		CURLcode rc;
		cJSON *j;

		curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
		if (kind < 6) { /* a good GET */
			const char *t = targets[(r >> 8) % 4], *m = models[(r >> 12) % 3];
			size_t o = (r >> 16) % 8;
			uint32_t mb = 1 + (uint32_t)((r >> 20) % 64);

			snprintf(url, sizeof(url), "%s/v1/splits?target=%s&model=%s&max_batch_size=%u%s%s", base, t,
				 m, mb, overrides_enc[o] ? "&override=" : "", overrides_enc[o] ? overrides_enc[o] : "");
			curl_easy_setopt(curl, CURLOPT_URL, url);
			curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
			rc = curl_easy_perform(curl);
			curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
			j = b.p ? cJSON_Parse(b.p) : NULL;
			if (rc != CURLE_OK || status != 200 || j == NULL || !decision_ok(j, t, m, mb, overrides[o])) {
				wrong("decision", url, b.p);
			} else {
				atomic_fetch_add(&passed, 1);
			}
		} else if (kind < 8) { /* a bad GET */
			size_t i = (r >> 8) % (sizeof(bad) / sizeof(bad[0]));
			const cJSON *st;

			snprintf(url, sizeof(url), "%s%s", base, bad[i].path);
			curl_easy_setopt(curl, CURLOPT_URL, url);
			curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
			rc = curl_easy_perform(curl);
			curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
			j = b.p ? cJSON_Parse(b.p) : NULL;
			st = j ? cJSON_GetObjectItemCaseSensitive(j, "status") : NULL;
			if (rc != CURLE_OK || status != bad[i].status || !cJSON_IsNumber(st) ||
			    st->valuedouble != bad[i].status) {
				wrong("error", url, b.p);
			} else {
				atomic_fetch_add(&passed, 1);
			}
		} else { /* a batch, checked query by query */
			int count = 1 + (int)((r >> 8) % 40);
			int n = snprintf(body, sizeof(body), "{\"queries\":[");
			const char *ts[40], *ms[40];
			uint32_t mbs[40];
			bool ok = true;

			for (int q = 0; q < count; q++) {
				uint64_t x = rng_next(&seed);

				ts[q] = targets[x % 4];
				ms[q] = models[(x >> 4) % 3];
				mbs[q] = 1 + (uint32_t)((x >> 8) % 32);
				n += snprintf(body + n, sizeof(body) - (size_t)n,
					      "%s{\"target\":\"%s\",\"model\":\"%s\",\"max_batch_size\":%u}", q ? "," : "",
					      ts[q], ms[q], mbs[q]);
			}
			snprintf(body + n, sizeof(body) - (size_t)n, "]}");
			snprintf(url, sizeof(url), "%s/v1/splits", base);
			curl_easy_setopt(curl, CURLOPT_URL, url);
			curl_easy_setopt(curl, CURLOPT_HTTPHEADER, json);
			curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
			rc = curl_easy_perform(curl);
			curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
			curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
			j = b.p ? cJSON_Parse(b.p) : NULL;
			if (rc != CURLE_OK || status != 200 || j == NULL) {
				ok = false;
			} else {
				const cJSON *results = cJSON_GetObjectItemCaseSensitive(j, "results");

				ok = cJSON_GetArraySize(results) == count;
				for (int q = 0; ok && q < count; q++) {
					ok = decision_ok(cJSON_GetArrayItem(results, q), ts[q], ms[q], mbs[q], NULL);
				}
			}
			if (!ok) {
				wrong("batch", url, b.p);
			} else {
				atomic_fetch_add(&passed, 1);
			}
		}
		cJSON_Delete(j);
		free(b.p);
	}
	curl_slist_free_all(json);
	curl_easy_cleanup(curl);
	return NULL;
}

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kib = strtol(line + 6, NULL, 10);
		}
	}
	if (f != NULL) {
		fclose(f);
	}
	return kib;
}

static void write_file(const char *path, const char *text)
{
	char tmp[96];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	fputs(text, f);
	fclose(f);
	rename(tmp, path);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int main(void)
{
	const char *bin = getenv("SPLITKD_BIN") ? getenv("SPLITKD_BIN") : "build/splitkd";
	long seconds = getenv("SOAK_SECONDS") ? strtol(getenv("SOAK_SECONDS"), NULL, 10) : 60;
	char path[] = "/tmp/splitkd-soak-XXXXXX", logpath[] = "/tmp/splitkd-soak-log-XXXXXX", err[256];
	int fd = mkstemp(path), logfd = mkstemp(logpath), status = 0, reloads = 0;
	pthread_t th[4];
	pid_t pid;
	long rss_start, rss_end;
	bool alive = true;
	unsigned port = 0;

	close(fd);
	cats[0] = catalog_load(cat_a, strlen(cat_a), err, sizeof(err));
	cats[1] = catalog_load(cat_b, strlen(cat_b), err, sizeof(err));
	if (cats[0] == NULL || cats[1] == NULL || seconds < 1) {
		fprintf(stderr, "soak: bad set-up: %s\n", err);
		return 2;
	}
	write_file(path, cat_a);
	pid = fork();
	if (pid == 0) {
		dup2(logfd, STDERR_FILENO);
		execl(bin, bin, "--listen", "127.0.0.1:0", "--catalog", path, "--access-log", "off", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && port == 0; i++) {
		char text[4096] = "";
		FILE *f = fopen(logpath, "r");
		size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
		const char *p;

		text[n] = '\0';
		if (f) {
			fclose(f);
		}
		p = strstr(text, "listening on http://127.0.0.1:");
		if (p != NULL) {
			port = (unsigned)strtoul(p + strlen("listening on http://127.0.0.1:"), NULL, 10);
		} else {
			sleep_ms(10);
		}
	}
	if (port == 0) {
		fprintf(stderr, "soak: splitkd did not start\n");
		kill(pid, SIGKILL);
		return 1;
	}
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", port);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (long i = 0; i < 4; i++) {
		pthread_create(&th[i], NULL, worker, (void *)(i + 1));
	}
	sleep_ms(3000); /* warm-up: caches, the first of everything */
	rss_start = rss_kib(pid);
	for (long t = 3; t < seconds; t += 2) {
		sleep_ms(2000);
		write_file(path, ++reloads % 2 ? cat_b : cat_a);
		kill(pid, SIGHUP);
		if (waitpid(pid, &status, WNOHANG) != 0) {
			alive = false;
			break;
		}
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
	}
	rss_end = rss_kib(pid);
	if (alive) {
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
	}
	printf("soak: %ld s, %d reloads, resident memory %ld KiB after warm-up, %ld KiB at the end\n",
	       seconds, reloads, rss_start, rss_end);
	if (!alive) {
		printf("soak: splitkd died during the run\n");
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("soak: splitkd exit status %d\n", status);
	}
	if (rss_end > rss_start + 2048) {
		printf("soak: resident memory grew by %ld KiB\n", rss_end - rss_start);
	}
	printf("soak: %ld passed, %ld failed\n", atomic_load(&passed), atomic_load(&failed));
	unlink(path);
	unlink(logpath);
	catalog_free(cats[0]);
	catalog_free(cats[1]);
	return (alive && WIFEXITED(status) && WEXITSTATUS(status) == 0 && atomic_load(&failed) == 0 &&
		atomic_load(&passed) > 0 && rss_end <= rss_start + 2048)
		       ? 0
		       : 1;
}
