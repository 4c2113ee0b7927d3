/* SPDX-License-Identifier: AGPL-3.0-only */
#include "holder.h"

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

struct holder_ref {
	unsigned long refs;
	size_t n;
	struct holder_rev *revs[HOLDER_MAX_REVISIONS];
	struct revision view[HOLDER_MAX_REVISIONS]; /* what the api reads */
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

static void ref_drop(struct holder_ref *s)
{
	if (--s->refs == 0) {
		for (size_t i = 0; i < s->n; i++) {
			rev_drop(s->revs[i]);
		}
		free(s);
	}
}

static void ref_add(struct holder_ref *s, struct holder_rev *r)
{
	s->revs[s->n] = r;
	s->view[s->n] = (struct revision){r->cat, r->loaded_at[0] ? r->loaded_at : NULL, r->source};
	s->n++;
}

/* The set after a swap: `fresh` first, then the newest of `old`'s that
 * fit the bounds, each with one more reference. Called with the lock
 * held; `old` may be NULL. NULL when out of memory. */
static struct holder_ref *set_after(const struct holder *h, struct holder_rev *fresh,
				    const struct holder_ref *old)
{
	struct holder_ref *s = calloc(1, sizeof(*s));
	size_t bytes = fresh->bytes;

	if (s == NULL) {
		return NULL;
	}
	s->refs = 1; /* the holder's own */
	fresh->refs++;
	ref_add(s, fresh);
	for (size_t i = 0; old != NULL && i < old->n && s->n < h->max_revisions; i++) {
		struct holder_rev *r = old->revs[i];

		if (strcmp(r->cat->digest, fresh->cat->digest) == 0) {
			continue; /* the same catalog again: held once, as the newest */
		}
		if (bytes + r->bytes > h->max_bytes) {
			break; /* the older ones go with it: the list stays newest first */
		}
		bytes += r->bytes;
		r->refs++;
		ref_add(s, r);
	}
	return s;
}

int holder_init_with(struct holder *h, struct catalog *cat, const struct holder_options *o)
{
	struct holder_rev *fresh;

	memset(h, 0, sizeof(*h));
	h->max_revisions = o != NULL && o->max_revisions > 0 ? o->max_revisions
							      : HOLDER_DEFAULT_REVISIONS;
	if (h->max_revisions > HOLDER_MAX_REVISIONS) {
		h->max_revisions = HOLDER_MAX_REVISIONS;
	}
	h->max_bytes = o != NULL && o->max_bytes > 0 ? o->max_bytes : HOLDER_DEFAULT_MAX_BYTES;
	h->source = copy_string(o != NULL && o->source != NULL ? o->source : "embedded");
	fresh = h->source != NULL ? rev_new(cat, h->source) : NULL;
	if (fresh == NULL) {
		if (h->source == NULL) {
			catalog_free(cat);
		}
		free(h->source);
		return -1;
	}
	h->current = set_after(h, fresh, NULL);
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
	return (*ref)->view[0].catalog;
}

void holder_release(struct holder *h, struct holder_ref *ref)
{
	pthread_mutex_lock(&h->lock);
	ref_drop(ref);
	pthread_mutex_unlock(&h->lock);
}

int holder_swap_from(struct holder *h, struct catalog *cat, const char *source)
{
	struct holder_rev *fresh;
	struct holder_ref *next, *old;

	/* outside the lock: it writes the catalog out to count its bytes */
	fresh = rev_new(cat, source != NULL ? source : h->source);
	if (fresh == NULL) {
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	old = h->current;
	next = set_after(h, fresh, old);
	if (next == NULL) {
		pthread_mutex_unlock(&h->lock);
		rev_free(fresh);
		return -1;
	}
	h->current = next;
	atomic_fetch_add_explicit(&h->generation, 1, memory_order_release);
	/* the free of what the old set alone held, if this was its last
	 * reference, happens under the lock: rare (one per reload) and short */
	ref_drop(old);
	pthread_mutex_unlock(&h->lock);
	return 0;
}

int holder_swap(struct holder *h, struct catalog *cat)
{
	return holder_swap_from(h, cat, NULL);
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
	return r->ref->view[0].catalog;
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
	*n = ref->n;
	return ref->view;
}

const struct revision *holder_reader_revisions(const struct holder_reader *r, size_t *n)
{
	return holder_revisions(r->ref, n);
}
