/* SPDX-License-Identifier: AGPL-3.0-only */
#include "serving.h"

#include <stdio.h>
#include <string.h>

#include "diff.h"

/* The default catalog's name: cli_parse's pick (--default-catalog, or the
 * first --catalog's), else the embedded catalog's. */
static const char *default_name(const struct server_config *cfg)
{
	return cfg->default_catalog != NULL ? cfg->default_catalog : CATALOG_DEFAULT_NAME;
}

/*
 * Puts catalog `name` in service: the revisions the state directory kept
 * of it (oldest first, so they are held as before the restart), then
 * `cat`, the file's (at `source`), which is current. With `cat` NULL (the
 * file is missing or invalid: `why`) the newest kept revision serves
 * instead, and *from_state says so. The attempt is journaled as
 * `trigger`. The default catalog makes the holder (`ho`); the others are
 * swapped into it (`ho` NULL). What serves is kept in the state
 * directory. The one way every catalog comes into service: the default,
 * each --catalog NAME=FILE and each --catalog-dir NAME.json (hold_dir).
 * Returns 0, or -1 with err set (cat freed).
 */
static int hold(struct serving *sv, const struct holder_options *ho, const char *name,
		const char *source, struct catalog *cat, const char *why, enum api_trigger trigger,
		bool *from_state, char *err, size_t cap)
{
	struct catalog *kept[HOLDER_MAX_REVISIONS + 1];
	size_t n = 0;
	int ret = 0;

	*from_state = false;
	if (sv->state.log != NULL) {
		n = state_load(&sv->state, name, kept, sv->state.max_revisions);
	}
	if (cat == NULL && n == 0) {
		snprintf(err, cap, "%s%s", why, sv->state.log != NULL ? " (and --state-dir keeps no "
			 "revision of this catalog to start on)" : "");
		return -1;
	}
	journal_add(&sv->journal, &(struct reload_attempt){
		.catalog = name, .trigger = trigger, .ok = cat != NULL,
		.changed = cat != NULL && (n == 0 || strcmp(kept[n - 1]->digest, cat->digest) != 0),
		.error = cat != NULL ? "" : why, .from = n > 0 ? kept[n - 1]->digest : "",
		.to = cat != NULL ? cat->digest : "",
		.changed_cells = cat != NULL && n > 0 ? diff_changed_cells(kept[n - 1], cat) : 0});
	if (cat != NULL) {
		kept[n++] = cat;
	} else {
		*from_state = true;
		log_event(sv->state.log, "state", "catalog %s: %s; serving its last revision kept, %s",
			  name, why, kept[n - 1]->digest);
	}
	for (size_t i = 0; i < n; i++) {
		int rc;

		if (ret != 0) {
			catalog_free(kept[i]);
			continue;
		}
		rc = ho != NULL && i == 0 ? holder_init_with(&sv->holder, kept[i], ho)
					  : holder_swap_named(&sv->holder, name, kept[i], source);
		if (rc != 0) {
			snprintf(err, cap, "catalog %s: %s", name, holder_swap_error(rc));
			ret = -1;
		}
	}
	/* held: the holder keeps it alive. One from the state directory is
	 * its newest there already: written again, its file would forget when
	 * it was loaded (the status says, kept_at) */
	if (ret == 0 && sv->state.log != NULL && cat != NULL) {
		state_save(&sv->state, kept[n - 1]);
	}
	return ret;
}

/* A --catalog-dir NAME.json's way into service (a catalogdir_hold_fn):
 * hold(), as every other catalog's. */
static void open_channels(struct serving *sv);

static int hold_dir(void *cls, const char *name, const char *path, struct catalog *cat,
		    const char *why, enum api_trigger trigger, bool *from_state, char *err, size_t cap)
{
	struct serving *sv = cls;
	int ret = hold(sv, NULL, name, path, cat, why, trigger, from_state, err, cap);

	if (ret == 0 && atomic_load(&sv->streams_on)) {
		open_channels(sv); /* a catalog added while running: its stream */
	}
	return ret;
}

/* A source whose catalog the state directory kept serves in place of its
 * file: its status says when that revision was loaded (before this run),
 * not the start. */
static void kept_at(struct serving *sv, struct reload_source *src, const char *name)
{
	struct holder_ref *ref;
	const struct catalog *cat = name == NULL ? holder_acquire(&sv->holder, &ref)
						 : holder_acquire_named(&sv->holder, name, &ref);
	int64_t ms = cat != NULL ? state_kept_at_ms(&sv->state, cat->name, cat->digest) : 0;

	if (ms != 0) {
		reload_source_loaded_at(src, ms);
	}
	if (ref != NULL) {
		holder_release(&sv->holder, ref);
	}
}

/* Makes `c` the source of catalog `name` (NULL: the default) at `path`
 * (NULL: the embedded catalog), whose catalog hold() put in service from
 * what `rd` found: followed, and said so when a kept revision serves for
 * its file. Returns 0, or -1 with err set. */
static int follow(struct serving *sv, struct catsource *c, const char *name, const char *path,
		  const struct reload_read *rd, bool from_state, char *err, size_t cap)
{
	if (catsource_add(c, &sv->reload, &sv->holder, name, path, path != NULL ? rd : NULL,
			  sv->cfg->catalog_check) != 0) {
		snprintf(err, cap, "catalog %s: more followed sources than RELOAD_MAX_SOURCES",
			 name != NULL ? name : holder_default_name(&sv->holder));
		return -1;
	}
	if (from_state) {
		reload_source_from_state(&c->src, rd);
		kept_at(sv, &c->src, name);
		metrics_reload(&sv->metrics, false);
	}
	return 0;
}

/* Every --catalog NAME=FILE besides the default: loaded (an invalid one
 * stops the start, as the default's does, unless --state-dir kept a
 * revision of it), held by name and followed on its own. Returns 0, or
 * -1 with err set. */
static int add_named(struct serving *sv, char *err, size_t cap)
{
	const struct server_config *cfg = sv->cfg;

	for (size_t i = 0; i < cfg->num_catalogs; i++) {
		const struct cli_catalog *c = &cfg->catalogs[i];
		struct catsource *source = &sv->named[sv->num_named];
		struct reload_read rd;
		struct catalog *cat;
		char why[640];
		bool from_state;

		if (strcmp(c->name, holder_default_name(&sv->holder)) == 0) {
			continue;
		}
		cat = catsource_load(c->path, &rd, why, sizeof(why));
		if (cat == NULL && sv->state.log == NULL) {
			snprintf(err, cap, "%s", why);
			return -1;
		}
		if (hold(sv, NULL, c->name, c->path, cat, why, API_TRIGGER_START, &from_state, err,
			 cap) != 0) {
			return -1;
		}
		if (follow(sv, source, c->name, c->path, &rd, from_state, err, cap) != 0) {
			return -1;
		}
		sv->num_named++;
	}
	return 0;
}

/* --state-dir: the stream of catalog `name` (NULL: the default's; "*":
 * every catalog's) kept where it stands, so that its ids survive a
 * restart. From one writer at a time (the reload's notice, the start). */
static void keep_numbering(struct serving *sv, const char *name)
{
	char boot[EVENTS_BOOT_LEN + 1], revision[CATALOG_DIGEST_LEN + 1];
	uint64_t seq;

	if (sv->state.log == NULL ||
	    !stream_hub_numbering(&sv->server.streams, name, boot, &seq, revision)) {
		return;
	}
	if (name == NULL) {
		state_streams_keep(&sv->state, boot, seq, revision);
	} else {
		state_streams_keep_named(&sv->state, name, boot, seq, revision);
	}
}

/* The held revision whose digest is `digest`, or NULL. */
static const struct catalog *held(const struct revision *revs, size_t n, const char *digest)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(revs[i].catalog->digest, digest) == 0) {
			return revs[i].catalog;
		}
	}
	return NULL;
}

/* The revisions the holder keeps of catalog `name` (NULL: the default). */
static const struct revision *held_of(const struct holder_ref *ref, const char *name, size_t *n)
{
	const struct revision_named *cats;
	size_t num;

	if (name == NULL) {
		return holder_revisions(ref, n);
	}
	cats = holder_catalogs(ref, &num);
	for (size_t i = 0; i < num; i++) {
		if (strcmp(cats[i].name, name) == 0) {
			*n = cats[i].num_revisions;
			return cats[i].revisions;
		}
	}
	*n = 0;
	return NULL;
}

/* What the state directory kept of catalog `name`'s stream (NULL: the
 * default's) into seqs[0..return) and its boot into `boot`. */
static size_t kept_seqs(struct serving *sv, const char *name, struct statefile_seq *seqs,
			char *boot)
{
	const struct state_numbering *kept;
	size_t n = 0;

	if (name == NULL && state_streams_load(&sv->state)) {
		n = sv->state.num_seqs;
		memcpy(seqs, sv->state.seqs, n * sizeof(*seqs));
		snprintf(boot, EVENTS_BOOT_LEN + 1, "%s", sv->state.boot);
	} else if (name != NULL && (kept = state_streams_load_named(&sv->state, name)) != NULL &&
		   strcmp(kept->boot, boot) == 0) {
		n = kept->num_seqs; /* another boot's seqs are another numbering's */
		memcpy(seqs, kept->seqs, n * sizeof(*seqs));
	}
	return n;
}

/*
 * --state-dir: catalog `name`'s change stream (NULL: the default's) goes
 * on numbering where the last run left it (the default's boot id and seqs
 * in streams.json, another's in streams.NAME.json), so a Last-Event-ID
 * from before the restart replays the changes it missed as far back as
 * their revisions are held, and is a reset only beyond. A catalog file
 * changed while splitkd was down is one more change. Before its streams
 * open; the default's first (its boot is every other's).
 */
static void resume_channel(struct serving *sv, const char *name)
{
	struct stream_hub *hub = &sv->server.streams;
	struct statefile_seq seqs[HOLDER_MAX_REVISIONS + 1];
	const struct catalog *cats[HOLDER_MAX_REVISIONS + 1];
	char boot[EVENTS_BOOT_LEN + 1];
	struct holder_ref *ref;
	const struct catalog *cur = name == NULL ? holder_acquire(&sv->holder, &ref)
						 : holder_acquire_named(&sv->holder, name, &ref);
	const struct revision *revs;
	size_t num_revs, n, k = 0;

	if (cur == NULL) {
		return;
	}
	snprintf(boot, sizeof(boot), "%s", hub->boot);
	n = kept_seqs(sv, name, seqs, boot);
	if (n == 0 || strcmp(seqs[n - 1].revision, cur->digest) != 0) {
		seqs[n].seq = n > 0 ? seqs[n - 1].seq + 1 : 1;
		snprintf(seqs[n].revision, sizeof(seqs[n].revision), "%s", cur->digest);
		n++;
	}
	revs = held_of(ref, name, &num_revs);
	/* the newest run of seqs whose revisions are held (each looked up
	 * once, newest first), then turned oldest first */
	while (k < n) {
		const struct catalog *c = held(revs, num_revs, seqs[n - 1 - k].revision);

		if (c == NULL) {
			break;
		}
		cats[k++] = c;
	}
	for (size_t i = 0; i < k / 2; i++) {
		const struct catalog *t = cats[i];

		cats[i] = cats[k - 1 - i];
		cats[k - 1 - i] = t;
	}
	if (name == NULL ? stream_hub_resume(hub, boot, seqs[n - k].seq, cats, k) == 0
			 : stream_hub_resume_named(hub, name, seqs[n - k].seq, cats, k) == 0) {
		keep_numbering(sv, name);
	}
	holder_release(&sv->holder, ref);
}

/* The stream of every catalog goes on past the seq it last numbered. */
static void resume_all(struct serving *sv)
{
	const struct state_numbering *kept = state_streams_load_named(&sv->state, EVENTS_ALL);

	if (kept != NULL && strcmp(kept->boot, sv->server.streams.boot) == 0 &&
	    stream_hub_resume_named(&sv->server.streams, EVENTS_ALL,
				    kept->seqs[kept->num_seqs - 1].seq, NULL, 0) == 0) {
		keep_numbering(sv, EVENTS_ALL);
	}
}

/* A channel for every catalog the holder serves that has none yet,
 * resumed from the state directory. */
static void open_channels(struct serving *sv)
{
	struct holder_ref *ref;
	const struct revision_named *cats;
	size_t n;

	holder_acquire(&sv->holder, &ref);
	cats = holder_catalogs(ref, &n);
	for (size_t i = 0; i < n; i++) {
		const struct catalog *cur = cats[i].revisions[0].catalog;

		if (!cats[i].is_default &&
		    stream_hub_add(&sv->server.streams, cats[i].name, cur) == 1 &&
		    sv->state.log != NULL) {
			resume_channel(sv, cats[i].name);
		}
	}
	holder_release(&sv->holder, ref);
}

/* A --catalog-dir catalog gone (a catalogdir_drop_fn): its streams end. */
static void dropped(void *cls, const char *name)
{
	struct serving *sv = cls;

	if (atomic_load(&sv->streams_on)) {
		stream_hub_remove(&sv->server.streams, name);
		keep_numbering(sv, name);
		keep_numbering(sv, EVENTS_ALL);
	}
}

/*
 * Every attempt's one notice (a reload_published_fn). What serves is in
 * every view already: the swap and the status's record were one step
 * (reload.c's publication). Then, in this order: the state directory
 * keeps what now serves, the history journals the attempt, the metrics
 * count it, and last the change streams tell their clients of the
 * catalog's change (its own stream and the stream of every catalog; the
 * state directory keeps the seqs they took), so that a client told of a
 * change finds it in every view it asks. The TLS files' attempts are for
 * their status and their own series alone.
 */
static void published(void *cls, const struct reload_attempt *a)
{
	struct serving *sv = cls;
	const char *name;

	if (a->catalog == NULL) {
		return;
	}
	if (a->changed) {
		metrics_catalog_loaded(&sv->metrics);
		if (sv->state.log != NULL && a->after != NULL) {
			state_catalog_swapped(&sv->state, a->after);
		}
	}
	journal_attempted(&sv->journal, a);
	metrics_reload(&sv->metrics, a->ok);
	if (a->changed && a->before != NULL && a->after != NULL && atomic_load(&sv->streams_on)) {
		name = a->source == &sv->catalog.src ? NULL : a->catalog;
		if (stream_changed(&sv->server.streams, name, a->before, a->after) != 0) {
			keep_numbering(sv, name);
			keep_numbering(sv, EVENTS_ALL);
		}
	}
}

/* GET /v1/status (an api_status_fn): every source's, and the state
 * directory's part with one. */
static void serving_status(void *cls, struct api_status *out)
{
	struct serving *sv = cls;

	reload_status(&sv->reload, out);
	if (sv->state.log != NULL) {
		state_report(&sv->state, out);
	}
}

/* --catalog-dir DIR: its other catalogs, each through hold(). Returns 0,
 * or -1 with err set. */
static int start_dir(struct serving *sv, char *err, size_t cap)
{
	const struct server_config *cfg = sv->cfg;

	sv->dir = catalogdir_new(cfg->catalog_dir, holder_default_name(&sv->holder), hold_dir, sv);
	if (sv->dir == NULL) {
		snprintf(err, cap, "out of memory");
		return -1;
	}
	catalogdir_on_drop(sv->dir, dropped, sv);
	if (catalogdir_start(sv->dir, &sv->reload, &sv->holder, &sv->metrics, sv->log,
			     cfg->catalog_check, err, cap) != 0) {
		return -1;
	}
	for (size_t i = 0; i < HOLDER_MAX_CATALOGS; i++) {
		struct catalogdir_slot *s = &sv->dir->slots[i];
		struct api_source_status st;

		if (s->serving) {
			reload_source_status(&s->rc.src, &st);
			if (st.started_from_state) {
				kept_at(sv, &s->rc.src, s->name);
			}
		}
	}
	return 0;
}

int serving_init(struct serving *sv, const struct server_config *cfg, struct catalog *cat,
		 const struct reload_read *rd, const struct log *log, char *err, size_t err_cap)
{
	struct holder_options ho = {.max_revisions = cfg->revisions, .source = cfg->catalog_path,
				    .name = default_name(cfg), .max_catalogs = cfg->max_catalogs};
	struct catalog *taken;
	bool from_state = false;
	int ret = -1;

	memset(sv, 0, sizeof(*sv));
	sv->cfg = cfg;
	sv->log = log;
	if (metrics_init(&sv->metrics) != 0) {
		snprintf(err, err_cap, "more routes than METRICS_MAX_ROUTES rows: raise it");
		goto done;
	}
	if (cfg->state_dir != NULL && state_open(&sv->state, cfg->state_dir, cfg->revisions, log,
						 &sv->metrics, err, err_cap) != 0) {
		goto done;
	}
	if (journal_init(&sv->journal, cfg->history, sv->state.log != NULL ? &sv->state : NULL,
			 log) != 0) {
		snprintf(err, err_cap, "out of memory");
		goto done;
	}
	taken = cat;
	cat = NULL; /* hold() takes it: held, or freed */
	if (hold(sv, &ho, ho.name, cfg->catalog_path, taken, rd->error, API_TRIGGER_START,
		 &from_state, err, err_cap) != 0) {
		goto done;
	}
	metrics_catalog_loaded(&sv->metrics);
	reload_init(&sv->reload, log, published, sv);
	/* the reload's first source, so that its row is the status's first */
	if (follow(sv, &sv->catalog, NULL, cfg->catalog_path, rd, from_state, err, err_cap) != 0) {
		goto done;
	}
	if (cfg->tls_cert != NULL) {
		if (tls_init(&sv->tls, &sv->reload, cfg->tls_cert, cfg->tls_key, cfg->tls_client_ca,
			     cfg->tls_priority, log, err, err_cap) != 0) {
			goto done;
		}
		sv->use_tls = &sv->tls;
	}
	if (add_named(sv, err, err_cap) != 0 ||
	    (cfg->catalog_dir != NULL && start_dir(sv, err, err_cap) != 0)) {
		goto done;
	}
	ret = 0;
done:
	catalog_free(cat);
	return ret;
}

void serving_describe(struct serving *sv, char *out, size_t cap)
{
	struct holder_ref *ref;
	const struct catalog *cat = holder_acquire(&sv->holder, &ref);
	unsigned conns = conntab_count(&sv->server.table);
	unsigned streams = atomic_load(&sv->server.streams.open);
	size_t n;

	holder_catalogs(ref, &n);
	snprintf(out, cap, "%s catalog %s at %s (%zu in all); %u connection%s, %u stream%s",
		 atomic_load(&sv->server.draining) ? "draining," : "serving",
		 holder_default_name(&sv->holder), cat->digest, n, conns, conns == 1 ? "" : "s",
		 streams, streams == 1 ? "" : "s");
	holder_release(&sv->holder, ref);
}

/* The serving loop's tick (a listener_tick_fn, on the listener's thread,
 * with a manager listening): the watchdog's ping, and the status when it
 * changed. */
static void serving_tick(void *cls, uint64_t now)
{
	struct serving *sv = cls;
	char status[SERVING_STATUS_MAX];

	notify_tick(sv->notify, now);
	if (sv->status_at_ns == 0) {
		sv->status_at_ns = now; /* READY=1 has just said it */
	}
	if (now - sv->status_at_ns < 2000000000u) {
		return;
	}
	sv->status_at_ns = now;
	serving_describe(sv, status, sizeof(status));
	if (strcmp(status, sv->status_sent) != 0 && notify_send(sv->notify, "STATUS=%s", status) == 0) {
		memcpy(sv->status_sent, status, sizeof(status));
	}
}

int serving_start(struct serving *sv, struct notify *notify, char *err, size_t err_cap)
{
	struct server_hooks hooks = {.report_status = serving_status, .report_status_cls = sv,
				     .list_history = journal_page, .list_history_cls = &sv->journal,
				     .tick = notify_on(notify) ? serving_tick : NULL, .tick_cls = sv};

	sv->notify = notify;
	/* the watch before the server, so a request's status never sees it
	 * half set; after the signal mask, which its thread inherits */
	if (reload_watch_start(&sv->reload, err, err_cap) != 0 ||
	    server_start(&sv->server, sv->cfg, &sv->holder, sv->log, &sv->metrics, &hooks,
			 sv->use_tls, err, err_cap) != 0) {
		return -1;
	}
	/* change streams hear of every swap from now on (a swap the watch
	 * made since server_start is in what they resume, or is no event: a
	 * stream can only have opened in that instant, and its hello names
	 * the catalog then current) */
	if (sv->state.log != NULL) {
		resume_channel(sv, NULL);
		resume_all(sv);
	}
	open_channels(sv);
	atomic_store(&sv->streams_on, true);
	open_channels(sv); /* one the directory added in between */
	return 0;
}

void serving_reload(struct serving *sv)
{
	if (sv->cfg->catalog_path == NULL) {
		log_event(sv->log, "reload", "skipped: serving the embedded catalog (no --catalog FILE)");
	}
	reload_now(&sv->reload);
}

void serving_cleanup(struct serving *sv)
{
	if (sv == NULL) {
		return;
	}
	/* the watch stops first: a notice it is hearing ends (its stream
	 * event and the seqs kept for it) before the server's hub goes, and
	 * no source is read after this */
	reload_cleanup(&sv->reload);
	server_stop(&sv->server);
	catalogdir_free(sv->dir);
	tls_cleanup(&sv->tls); /* after the server: no connection holds credentials now */
	holder_cleanup(&sv->holder);
	journal_cleanup(&sv->journal);
	state_close(&sv->state); /* the lock goes last: nothing writes after this */
	metrics_cleanup(&sv->metrics);
}
