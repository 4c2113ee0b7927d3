/* SPDX-License-Identifier: AGPL-3.0-only */
#include "holder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonw.h"

/* One held catalog, counted by the sets that hold it. */
struct holder_rev {
	struct catalog *cat;
	unsigned long refs;
	size_t bytes;       /* its canonical JSON */
	char loaded_at[32]; /* RFC 3339, UTC */
	char *source;
};

/* One catalog's revisions, newest first, the first its current catalog:
 * shared, counted, by every reference that holds that catalog. */
struct holder_set {
	unsigned long refs;
	size_t n;
	size_t bytes; /* its revisions' canonical JSON together */
	struct holder_rev *revs[HOLDER_MAX_REVISIONS];
	struct revision view[HOLDER_MAX_REVISIONS]; /* what the api reads */
};

/* Every catalog served, the default's flat in front (what every request
 * reads first). */
struct holder_ref {
	unsigned long refs;
	const struct catalog *catalog; /* the default's current */
	const struct revision *revisions;
	size_t num_revisions;
	size_t n;
	struct holder_set *sets[HOLDER_MAX_CATALOGS];
	struct revision_named view[HOLDER_MAX_CATALOGS];
};

static char *copy_string(const char *s)
{
	size_t n = strlen(s) + 1;
	char *out = malloc(n);

	if (out != NULL) {
		memcpy(out, s, n);
	}
	return out;
}

static void rev_free(struct holder_rev *r)
{
	if (r != NULL) {
		catalog_free(r->cat);
		free(r->source);
		free(r);
	}
}

/* A revision for a catalog just loaded: stamped now. Frees cat on failure. */
static struct holder_rev *rev_new(struct catalog *cat, const char *source)
{
	struct holder_rev *r = calloc(1, sizeof(*r));
	struct jsonw w;
	struct tm tm;
	time_t now = time(NULL);

	if (r == NULL) {
		catalog_free(cat);
		return NULL;
	}
	r->cat = cat;
	r->source = copy_string(source != NULL ? source : "embedded");
	if (r->source == NULL) {
		rev_free(r);
		return NULL;
	}
	jsonw_init(&w, 8192);
	catalog_write(&w, cat, false);
	r->bytes = w.len;
	jsonw_cleanup(&w);
	if (gmtime_r(&now, &tm) == NULL || strftime(r->loaded_at, sizeof(r->loaded_at),
						     "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		r->loaded_at[0] = '\0';
	}
	return r;
}

/* Called with the lock held (or before any reader exists). */
static void rev_drop(struct holder_rev *r)
{
	if (--r->refs == 0) {
		rev_free(r);
	}
}

static void set_drop(struct holder_set *s)
{
	if (--s->refs == 0) {
		for (size_t i = 0; i < s->n; i++) {
			rev_drop(s->revs[i]);
		}
		free(s);
	}
}

static void ref_drop(struct holder_ref *s)
{
	if (--s->refs == 0) {
		for (size_t i = 0; i < s->n; i++) {
			set_drop(s->sets[i]);
		}
		free(s);
	}
}

static void set_add(struct holder_set *s, struct holder_rev *r)
{
	s->revs[s->n] = r;
	s->view[s->n] = (struct revision){r->cat, r->loaded_at[0] ? r->loaded_at : NULL, r->source};
	s->n++;
	s->bytes += r->bytes;
}

/* One catalog's set after a swap: `fresh` first, then the newest of
 * `old`'s that fit the bounds (`room` bytes: max_bytes less what every
 * other catalog holds), each with one more reference. Called with the
 * lock held; `old` may be NULL. NULL when out of memory. */
static struct holder_set *set_after(const struct holder *h, struct holder_rev *fresh,
				    const struct holder_set *old, size_t room)
{
	struct holder_set *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		return NULL;
	}
	s->refs = 1; /* the reference it is made for */
	fresh->refs++;
	set_add(s, fresh);
	for (size_t i = 0; old != NULL && i < old->n && s->n < h->max_revisions; i++) {
		struct holder_rev *r = old->revs[i];

		if (strcmp(r->cat->digest, fresh->cat->digest) == 0) {
			continue; /* the same catalog again: held once, as the newest */
		}
		if (s->bytes + r->bytes > room) {
			break; /* the older ones go with it: the list stays newest first */
		}
		r->refs++;
		set_add(s, r);
	}
	return s;
}

/* The index in `ref` of the catalog `name`, or -1. */
static long index_of(const struct holder_ref *ref, const char *name)
{
	for (size_t i = 0; ref != NULL && i < ref->n; i++) {
		if (strcmp(ref->view[i].name, name) == 0) {
			return (long)i;
		}
	}
	return -1;
}

/* `old`'s catalogs with the one at `at` (index_of its name) replaced by
 * `set` (appended when `at` is -1, `old` having none of that name;
 * dropped when `set` is NULL), every
 * other set shared (one more reference each). Called with the lock held
 * (or before any reader); `set`'s reference passes to the result. NULL
 * when out of memory. */
static struct holder_ref *ref_with(const struct holder_ref *old, long at, struct holder_set *set)
{
	struct holder_ref *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		return NULL;
	}
	s->refs = 1; /* the holder's own */
	for (size_t i = 0; old != NULL && i < old->n; i++) {
		struct holder_set *keep = (long)i == at ? set : old->sets[i];

		if (keep == NULL) {
			continue;
		}
		if ((long)i != at) {
			keep->refs++;
		}
		s->sets[s->n++] = keep;
	}
	if (at < 0 && set != NULL) {
		s->sets[s->n++] = set;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct revision_named *v = &s->view[i];

		/* the name and the flag live in the catalog of the set's first
		 * revision (catalog_set_name sets both, at holder_init_with and
		 * holder_swap_named, the only ways in): the same in every
		 * revision of it */
		v->name = s->sets[i]->view[0].catalog->name;
		v->revisions = s->sets[i]->view;
		v->num_revisions = s->sets[i]->n;
		v->is_default = v->revisions[0].catalog->is_default;
		if (v->is_default) {
			s->catalog = v->revisions[0].catalog;
			s->revisions = v->revisions;
			s->num_revisions = v->num_revisions;
		}
	}
	return s;
}

/* What every catalog but the one at `at` (-1: none) holds, in bytes. */
static size_t bytes_besides(const struct holder_ref *ref, long at)
{
	size_t bytes = 0;

	for (size_t i = 0; ref != NULL && i < ref->n; i++) {
		if ((long)i != at) {
			bytes += ref->sets[i]->bytes;
		}
	}
	return bytes;
}

/* The reference after `fresh` becomes the current of the catalog at `at`
 * in `old` (index_of its name; -1: a new catalog): called with the lock
 * held (or before any reader). NULL when out of memory. */
static struct holder_ref *ref_after(const struct holder *h, const struct holder_ref *old, long at,
				    struct holder_rev *fresh)
{
	size_t besides = bytes_besides(old, at);
	size_t room = besides < h->max_bytes ? h->max_bytes - besides : 0;
	struct holder_set *set = set_after(h, fresh, at >= 0 ? old->sets[at] : NULL, room);
	struct holder_ref *next = set != NULL ? ref_with(old, at, set) : NULL;

	if (next == NULL && set != NULL) {
		fresh->refs++; /* kept through the drop: the caller frees it, as if never added */
		set_drop(set);
		fresh->refs = 0;
	}
	return next;
}

int holder_init_with(struct holder *h, struct catalog *cat, const struct holder_options *o)
{
	struct holder_rev *fresh;
	const char *name = o != NULL && o->name != NULL ? o->name : CATALOG_DEFAULT_NAME;

	memset(h, 0, sizeof(*h));
	h->max_revisions = o != NULL && o->max_revisions > 0 ? o->max_revisions
							      : HOLDER_DEFAULT_REVISIONS;
	if (h->max_revisions > HOLDER_MAX_REVISIONS) {
		h->max_revisions = HOLDER_MAX_REVISIONS;
	}
	h->max_catalogs = o != NULL && o->max_catalogs > 0 ? o->max_catalogs : HOLDER_DEFAULT_CATALOGS;
	if (h->max_catalogs > HOLDER_MAX_CATALOGS) {
		h->max_catalogs = HOLDER_MAX_CATALOGS;
	}
	h->max_bytes = o != NULL && o->max_bytes > 0 ? o->max_bytes : HOLDER_DEFAULT_MAX_BYTES;
	snprintf(h->default_name, sizeof(h->default_name), "%s", name);
	catalog_set_name(cat, h->default_name, strlen(h->default_name), true);
	h->source = copy_string(o != NULL && o->source != NULL ? o->source : "embedded");
	fresh = h->source != NULL ? rev_new(cat, h->source) : NULL;
	if (fresh == NULL) {
		if (h->source == NULL) {
			catalog_free(cat);
		}
		free(h->source);
		return -1;
	}
	h->current = ref_after(h, NULL, -1, fresh);
	if (h->current == NULL) {
		rev_free(fresh);
		free(h->source);
		return -1;
	}
	pthread_mutex_init(&h->lock, NULL);
	atomic_init(&h->generation, 0);
	return 0;
}

int holder_init(struct holder *h, struct catalog *cat)
{
	return holder_init_with(h, cat, NULL);
}

void holder_cleanup(struct holder *h)
{
	if (h->current == NULL) {
		return; /* zeroed, or its init failed: nothing was made */
	}
	pthread_mutex_lock(&h->lock);
	ref_drop(h->current);
	h->current = NULL;
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_destroy(&h->lock);
	free(h->source);
	h->source = NULL;
}

const struct catalog *holder_acquire(struct holder *h, struct holder_ref **ref)
{
	pthread_mutex_lock(&h->lock);
	*ref = h->current;
	(*ref)->refs++;
	pthread_mutex_unlock(&h->lock);
	return (*ref)->catalog;
}

const struct catalog *holder_acquire_named(struct holder *h, const char *name,
					   struct holder_ref **ref)
{
	long at;

	holder_acquire(h, ref);
	at = index_of(*ref, name);
	if (at < 0) {
		holder_release(h, *ref);
		*ref = NULL;
		return NULL;
	}
	return (*ref)->view[at].revisions[0].catalog;
}

void holder_release(struct holder *h, struct holder_ref *ref)
{
	pthread_mutex_lock(&h->lock);
	ref_drop(ref);
	pthread_mutex_unlock(&h->lock);
}

/* Makes `next` current and lets the old reference go; lock held. */
static void install(struct holder *h, struct holder_ref *next)
{
	struct holder_ref *old = h->current;

	h->current = next;
	atomic_fetch_add_explicit(&h->generation, 1, memory_order_release);
	/* the free of what the old reference alone held, if this was its
	 * last, happens under the lock: rare (one per reload) and short */
	ref_drop(old);
}

int holder_swap_named(struct holder *h, const char *name, struct catalog *cat, const char *source)
{
	struct holder_rev *fresh;
	struct holder_ref *next;
	long at;
	int ret = -1;

	catalog_set_name(cat, name, strlen(name), strcmp(name, h->default_name) == 0);
	/* outside the lock: it writes the catalog out to count its bytes */
	fresh = rev_new(cat, source != NULL ? source : h->source);
	if (fresh == NULL) {
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	at = index_of(h->current, name); /* the one scan for the name */
	if (at < 0 && h->current->n >= h->max_catalogs) {
		ret = -2;
		next = NULL;
	} else {
		next = ref_after(h, h->current, at, fresh);
	}
	if (next != NULL) {
		install(h, next);
		ret = 0;
	}
	pthread_mutex_unlock(&h->lock);
	if (ret != 0) {
		rev_free(fresh);
	}
	return ret;
}

const char *holder_swap_error(int rc)
{
	return rc == -2 ? "--max-catalogs catalogs already serve" : "out of memory";
}

int holder_swap_from(struct holder *h, struct catalog *cat, const char *source)
{
	return holder_swap_named(h, h->default_name, cat, source);
}

int holder_swap(struct holder *h, struct catalog *cat)
{
	return holder_swap_from(h, cat, NULL);
}

int holder_remove(struct holder *h, const char *name)
{
	struct holder_ref *next;
	long at;
	int ret = -1;

	if (strcmp(name, h->default_name) == 0) {
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	at = index_of(h->current, name);
	if (at >= 0) {
		next = ref_with(h->current, at, NULL);
		if (next != NULL) {
			install(h, next);
			ret = 0;
		} else {
			ret = -2;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

const char *holder_default_name(const struct holder *h)
{
	return h->default_name;
}

const struct catalog *holder_read(struct holder *h, struct holder_reader *r)
{
	unsigned now = atomic_load_explicit(&h->generation, memory_order_acquire);

	if (r->ref == NULL || r->generation != now) {
		pthread_mutex_lock(&h->lock);
		if (r->ref != NULL) {
			ref_drop(r->ref);
		}
		r->ref = h->current;
		r->ref->refs++;
		r->generation = atomic_load_explicit(&h->generation, memory_order_relaxed);
		pthread_mutex_unlock(&h->lock);
	}
	return r->ref->catalog;
}

void holder_reader_cleanup(struct holder *h, struct holder_reader *r)
{
	if (r->ref != NULL) {
		holder_release(h, r->ref);
		r->ref = NULL;
	}
}

const struct revision *holder_revisions(const struct holder_ref *ref, size_t *n)
{
	*n = ref->num_revisions;
	return ref->revisions;
}

void holder_view(const struct holder_ref *ref, const struct revision **revs, size_t *num_revs,
		 const struct revision_named **cats, size_t *num_cats)
{
	*revs = ref->revisions;
	*num_revs = ref->num_revisions;
	*cats = ref->view;
	*num_cats = ref->n;
}

const struct revision_named *holder_catalogs(const struct holder_ref *ref, size_t *n)
{
	*n = ref->n;
	return ref->view;
}


const struct revision *holder_reader_revisions(const struct holder_reader *r, size_t *n)
{
	return holder_revisions(r->ref, n);
}
