/* SPDX-License-Identifier: AGPL-3.0-only */
#include "status.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "jsonw.h"

static const char *const disk_names[] = {
	[API_DISK_NONE] = "none",
	[API_DISK_SAME] = "same",
	[API_DISK_INVALID] = "invalid",
	[API_DISK_MISSING] = "missing",
	[API_DISK_UNREADABLE] = "unreadable",
};

static const char *const trigger_names[] = {
	[API_TRIGGER_START] = "start",
	[API_TRIGGER_SIGNAL] = "signal",
	[API_TRIGGER_WATCH] = "watch",
};

static const char *const watch_names[] = {
	[API_WATCH_OFF] = "off",
	[API_WATCH_INOTIFY] = "inotify",
	[API_WATCH_PERIODIC] = "periodic",
};

const char *status_disk_name(enum api_disk_state s)
{
	return (unsigned)s < sizeof(disk_names) / sizeof(disk_names[0]) ? disk_names[s] : "none";
}

const char *status_trigger_name(enum api_trigger t)
{
	return (unsigned)t < sizeof(trigger_names) / sizeof(trigger_names[0]) ? trigger_names[t]
									       : "start";
}

/* Unix milliseconds as RFC 3339 UTC ("2026-12-01T09:53:11.123Z"), or null
 * for 0 (never). */
void status_write_time(struct jsonw *w, const char *key, int64_t ms)
{
	char text[64];
	struct tm tm;
	time_t secs = (time_t)(ms / 1000);

	jsonw_key(w, key);
	if (ms <= 0 || gmtime_r(&secs, &tm) == NULL) {
		jsonw_null(w);
		return;
	}
	snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
	jsonw_str(w, text);
}

static void write_text_or_null(struct jsonw *w, const char *key, const char *s)
{
	jsonw_kv_str_or_null(w, key, s[0] != '\0' ? s : NULL);
}

/* A source's members: when it was loaded, from where, how it is followed,
 * what the last look found, the last attempt and the counts. */
static void write_source(struct jsonw *w, const struct api_source_status *st)
{
	bool file = st->source[0] != '\0';

	status_write_time(w, "loaded_at", st->loaded_at_ms);
	write_text_or_null(w, "source", st->source);
	if (st->started_from_state) {
		jsonw_kv_str(w, "started_from", "state"); /* only then: other answers as before */
	}
	jsonw_key(w, "watch");
	jsonw_object_begin(w);
	jsonw_kv_str(w, "mode", watch_names[st->watch <= API_WATCH_PERIODIC ? st->watch : 0]);
	jsonw_kv_u64(w, "check_seconds", st->check_seconds);
	jsonw_object_end(w);
	jsonw_key(w, "disk");
	if (!file) {
		jsonw_null(w);
	} else {
		jsonw_object_begin(w);
		jsonw_kv_str(w, "state", status_disk_name(st->disk));
		write_text_or_null(w, "error", st->disk == API_DISK_SAME ? "" : st->disk_error);
		status_write_time(w, "checked_at", st->checked_at_ms);
		jsonw_object_end(w);
	}
	jsonw_key(w, "last_attempt");
	jsonw_object_begin(w);
	status_write_time(w, "at", st->last.at_ms);
	jsonw_kv_str(w, "trigger", status_trigger_name(st->last.trigger));
	jsonw_kv_str(w, "result", st->last.ok ? "ok" : "error");
	jsonw_kv_bool(w, "changed", st->last.changed);
	write_text_or_null(w, "error", st->last.ok ? "" : st->last.error);
	jsonw_object_end(w);
	jsonw_key(w, "reloads");
	jsonw_object_begin(w);
	jsonw_kv_u64(w, "ok", st->reloads_ok);
	jsonw_kv_u64(w, "error", st->reloads_error);
	jsonw_object_end(w);
}

void status_write(struct jsonw *w, const struct api_status *st, const char *name)
{
	const struct api_named_source *own = NULL;

	for (size_t i = 0; i < st->num_named; i++) {
		if (strcmp(st->named[i].name, name) == 0) {
			own = &st->named[i];
		}
	}
	jsonw_object_begin(w);
	jsonw_kv_str(w, "revision", own != NULL ? own->revision : st->revision);
	write_source(w, own != NULL ? &own->st : &st->catalog);
	if (st->num_named > 1) {
		jsonw_key(w, "catalogs");
		jsonw_array_begin(w);
		for (size_t i = 0; i < st->num_named; i++) {
			jsonw_object_begin(w);
			jsonw_kv_str(w, "name", st->named[i].name);
			jsonw_kv_str(w, "revision", st->named[i].revision);
			write_source(w, &st->named[i].st);
			jsonw_object_end(w);
		}
		jsonw_array_end(w);
	}
	if (st->tls_on) {
		jsonw_key(w, "tls");
		jsonw_object_begin(w);
		write_source(w, &st->tls);
		jsonw_key(w, "certificate");
		jsonw_object_begin(w);
		status_write_time(w, "not_before", st->tls_not_before * 1000);
		status_write_time(w, "not_after", st->tls_not_after * 1000);
		jsonw_object_end(w);
		jsonw_object_end(w);
	}
	if (st->state_on) {
		jsonw_key(w, "state");
		jsonw_object_begin(w);
		jsonw_kv_str(w, "dir", st->state_dir);
		jsonw_kv_u64(w, "write_errors", st->state_write_errors);
		write_text_or_null(w, "last_write_error", st->state_error);
		jsonw_kv_u64(w, "history_lines_skipped", st->state_history_lines_skipped);
		jsonw_object_end(w);
	}
	jsonw_object_end(w);
}
