/* SPDX-License-Identifier: AGPL-3.0-only */
#include "history.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fnv.h"
#include "jsonin.h"

#define CHECK_LEN 16

void history_write_entry(struct jsonw *w, const struct history_entry *e, bool with_ms)
{
	jsonw_object_begin(w);
	jsonw_kv_u64(w, "seq", e->seq);
	status_write_time(w, "at", e->at_ms);
	if (with_ms) {
		jsonw_kv_u64(w, "at_ms", (uint64_t)e->at_ms);
	}
	jsonw_kv_str(w, "trigger", status_trigger_name(e->trigger));
	jsonw_kv_str(w, "catalog", e->catalog);
	jsonw_kv_str(w, "result", e->ok ? "ok" : "error");
	jsonw_kv_bool(w, "changed", e->changed);
	jsonw_kv_str_or_null(w, "error", e->error[0] != '\0' ? e->error : NULL);
	jsonw_kv_str_or_null(w, "from", e->from[0] != '\0' ? e->from : NULL);
	jsonw_kv_str_or_null(w, "to", e->to[0] != '\0' ? e->to : NULL);
	jsonw_kv_u64(w, "changed_cells", e->changed_cells);
	jsonw_object_end(w);
}

size_t history_line(const struct history_entry *e, char *out, size_t cap)
{
	struct jsonw w;
	size_t n = 0;

	jsonw_init(&w, 1024);
	history_write_entry(&w, e, true);
	if (!w.failed && w.len + 1 + CHECK_LEN + 2 <= cap &&
	    w.len + 1 + CHECK_LEN + 1 <= HISTORY_LINE_MAX) {
		memcpy(out, w.buf, w.len);
		n = w.len + (size_t)snprintf(out + w.len, cap - w.len, " %016llx\n",
					       (unsigned long long)fnv_hash(w.buf, w.len));
	}
	jsonw_cleanup(&w);
	return n;
}

/* A string member into out (cap bytes); JSON null reads as "". */
static int text_of(const cJSON *o, const char *key, char *out, size_t cap)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsNull(v)) {
		out[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= cap) {
		return -1;
	}
	snprintf(out, cap, "%s", v->valuestring);
	return 0;
}

static int count_of(const cJSON *o, const char *key, uint64_t *out)
{
	return jsonin_u53(cJSON_GetObjectItemCaseSensitive(o, key), out) ? 0 : -1;
}

static int trigger_of(const cJSON *o, enum api_trigger *t)
{
	char word[16];

	if (text_of(o, "trigger", word, sizeof(word)) != 0) {
		return -1;
	}
	for (int i = API_TRIGGER_START; i <= API_TRIGGER_WATCH; i++) {
		if (strcmp(word, status_trigger_name((enum api_trigger)i)) == 0) {
			*t = (enum api_trigger)i;
			return 0;
		}
	}
	return -1;
}

int history_parse_line(const char *line, size_t len, struct history_entry *e, char *err, size_t cap)
{
	char hex[CHECK_LEN + 1], result[8], why[128];
	const cJSON *changed;
	cJSON *o = NULL;
	uint64_t at = 0;
	size_t json_len;
	int ret = -1;

	memset(e, 0, sizeof(*e));
	if (len < CHECK_LEN + 3 || line[len - CHECK_LEN - 1] != ' ') {
		snprintf(err, cap, "not a whole line (torn?)");
		return -1;
	}
	json_len = len - CHECK_LEN - 1;
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)fnv_hash(line, json_len));
	if (memcmp(hex, line + json_len + 1, CHECK_LEN) != 0) {
		snprintf(err, cap, "its check is not its text's (torn or edited?)");
		return -1;
	}
	o = jsonin_parse(line, json_len, why, sizeof(why));
	changed = o != NULL ? cJSON_GetObjectItemCaseSensitive(o, "changed") : NULL;
	if (o == NULL || !cJSON_IsObject(o) || count_of(o, "seq", &e->seq) != 0 || e->seq == 0 ||
	    count_of(o, "at_ms", &at) != 0 || trigger_of(o, &e->trigger) != 0 ||
	    text_of(o, "catalog", e->catalog, sizeof(e->catalog)) != 0 ||
	    !catalog_name_ok(e->catalog, strlen(e->catalog)) ||
	    text_of(o, "result", result, sizeof(result)) != 0 ||
	    (strcmp(result, "ok") != 0 && strcmp(result, "error") != 0) || !cJSON_IsBool(changed) ||
	    text_of(o, "error", e->error, sizeof(e->error)) != 0 ||
	    text_of(o, "from", e->from, sizeof(e->from)) != 0 ||
	    text_of(o, "to", e->to, sizeof(e->to)) != 0 ||
	    count_of(o, "changed_cells", &e->changed_cells) != 0) {
		snprintf(err, cap, "not a history entry");
		goto done;
	}
	e->at_ms = (int64_t)at;
	e->ok = strcmp(result, "ok") == 0;
	e->changed = cJSON_IsTrue(changed);
	ret = 0;
done:
	cJSON_Delete(o);
	return ret;
}
