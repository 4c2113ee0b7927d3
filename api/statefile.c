/* SPDX-License-Identifier: AGPL-3.0-only */
#include "statefile.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonin.h"

#define NAME_PREFIX "fnv1a64-"
#define NAME_SUFFIX ".json"
#define HEX_DIGITS 16

/* The boot's hex digits (a digest's are catalog_digest_ok's). */
static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
			return false;
		}
	}
	return true;
}

int statefile_name(const char *digest, char *out, size_t cap)
{
	if (!catalog_digest_ok(digest, strlen(digest)) || cap < STATEFILE_NAME_LEN + 1) {
		return -1;
	}
	snprintf(out, cap, NAME_PREFIX "%s" NAME_SUFFIX,
		 digest + sizeof(CATALOG_DIGEST_PREFIX) - 1);
	return 0;
}

bool statefile_digest_of(const char *name, char digest[CATALOG_DIGEST_LEN + 1])
{
	size_t p = sizeof(NAME_PREFIX) - 1;
	char d[CATALOG_DIGEST_LEN + 1];

	if (strlen(name) != STATEFILE_NAME_LEN || strncmp(name, NAME_PREFIX, p) != 0 ||
	    strcmp(name + p + HEX_DIGITS, NAME_SUFFIX) != 0) {
		return false;
	}
	/* the name's hex digits are the digest's: the one check of them is the
	 * digest's own, and `digest` is written only when they pass it */
	snprintf(d, sizeof(d), CATALOG_DIGEST_PREFIX "%.*s", HEX_DIGITS, name + p);
	if (!catalog_digest_ok(d, strlen(d))) {
		return false;
	}
	memcpy(digest, d, sizeof(d));
	return true;
}

struct catalog *statefile_read(const char *name, const char *data, size_t len, char *err,
			       size_t err_cap)
{
	char digest[CATALOG_DIGEST_LEN + 1], why[448];
	struct catalog *cat;

	if (!statefile_digest_of(name, digest)) {
		snprintf(err, err_cap, "not a revision file's name (fnv1a64-<16 hex digits>.json)");
		return NULL;
	}
	cat = catalog_load(data, len, why, sizeof(why));
	if (cat == NULL) {
		snprintf(err, err_cap, "not a valid catalog (torn or edited?): %s", why);
		return NULL;
	}
	if (strcmp(cat->digest, digest) != 0) {
		snprintf(err, err_cap, "holds revision %s, not the %s its name says (edited?)",
			 cat->digest, digest);
		catalog_free(cat);
		return NULL;
	}
	return cat;
}

void statefile_write_streams(struct jsonw *w, const char *boot, const struct statefile_seq *seqs,
			     size_t n)
{
	jsonw_object_begin(w);
	jsonw_kv_str(w, "boot", boot);
	jsonw_key(w, "seqs");
	jsonw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		jsonw_array_begin(w);
		jsonw_u64(w, seqs[i].seq);
		jsonw_str(w, seqs[i].revision);
		jsonw_array_end(w);
	}
	jsonw_array_end(w);
	jsonw_object_end(w);
}

/* One [seq, "revision"] pair, its seq above `after`. */
static int read_seq(const cJSON *pair, uint64_t after, struct statefile_seq *out)
{
	const cJSON *seq = cJSON_GetArrayItem(pair, 0), *rev = cJSON_GetArrayItem(pair, 1);
	char name[STATEFILE_NAME_LEN + 1];
	uint64_t n;

	/* above `after` (0 at least): so 1 at least */
	if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || !jsonin_u53(seq, &n) ||
	    n <= after || !cJSON_IsString(rev) ||
	    statefile_name(rev->valuestring, name, sizeof(name)) != 0) {
		return -1;
	}
	out->seq = n;
	snprintf(out->revision, sizeof(out->revision), "%s", rev->valuestring);
	return 0;
}

int statefile_read_streams(const char *data, size_t len, char boot[EVENTS_BOOT_LEN + 1],
			   struct statefile_seq *out, size_t max, size_t *n, char *err, size_t cap)
{
	char why[128];
	cJSON *o = jsonin_parse(data, len, why, sizeof(why));
	const cJSON *b = o != NULL ? cJSON_GetObjectItemCaseSensitive(o, "boot") : NULL;
	const cJSON *seqs = o != NULL ? cJSON_GetObjectItemCaseSensitive(o, "seqs") : NULL;
	const cJSON *pair;
	size_t count = 0;
	uint64_t last = 0;
	int ret = -1;

	*n = 0;
	if (o == NULL) {
		snprintf(err, cap, "not JSON (torn?): %s", why);
		return -1;
	}
	if (!cJSON_IsString(b) || strlen(b->valuestring) != EVENTS_BOOT_LEN ||
	    !lower_hex(b->valuestring, EVENTS_BOOT_LEN) || !cJSON_IsArray(seqs)) {
		snprintf(err, cap, "not a streams file (\"boot\": 8 hex digits, \"seqs\": an array)");
		goto done;
	}
	cJSON_ArrayForEach(pair, seqs) {
		struct statefile_seq one;

		if (read_seq(pair, last, &one) != 0) {
			snprintf(err, cap, "seqs[%zu]: not [seq, revision] with seq above the one before", count);
			goto done;
		}
		last = one.seq;
		count++;
		if (max == 0) {
			continue;
		}
		if (*n == max) { /* keep the newest */
			memmove(out, out + 1, (max - 1) * sizeof(*out));
			(*n)--;
		}
		out[(*n)++] = one;
	}
	snprintf(boot, EVENTS_BOOT_LEN + 1, "%s", b->valuestring);
	ret = 0;
done:
	if (ret != 0) {
		*n = 0;
	}
	cJSON_Delete(o);
	return ret;
}
