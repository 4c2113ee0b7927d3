/* SPDX-License-Identifier: AGPL-3.0-only */
#include "holder.h"

#include <stdlib.h>

struct holder_ref {
	struct catalog *cat;
	unsigned long refs;
};

static struct holder_ref *ref_new(struct catalog *cat)
{
	struct holder_ref *r = malloc(sizeof(*r));

	if (r == NULL) {
		catalog_free(cat);
		return NULL;
	}
	r->cat = cat;
	r->refs = 1; /* the holder's own */
	return r;
}

/* Called with the lock held. */
static void ref_drop(struct holder_ref *r)
{
	if (--r->refs == 0) {
		catalog_free(r->cat);
		free(r);
	}
}

int holder_init(struct holder *h, struct catalog *cat)
{
	h->current = ref_new(cat);
	if (h->current == NULL) {
		return -1;
	}
	pthread_mutex_init(&h->lock, NULL);
	atomic_init(&h->generation, 0);
	return 0;
}

void holder_cleanup(struct holder *h)
{
	pthread_mutex_lock(&h->lock);
	ref_drop(h->current);
	h->current = NULL;
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_destroy(&h->lock);
}

const struct catalog *holder_acquire(struct holder *h, struct holder_ref **ref)
{
	pthread_mutex_lock(&h->lock);
	*ref = h->current;
	(*ref)->refs++;
	pthread_mutex_unlock(&h->lock);
	return (*ref)->cat;
}

void holder_release(struct holder *h, struct holder_ref *ref)
{
	pthread_mutex_lock(&h->lock);
	ref_drop(ref);
	pthread_mutex_unlock(&h->lock);
}

int holder_swap(struct holder *h, struct catalog *cat)
{
	struct holder_ref *fresh = ref_new(cat), *old;

	if (fresh == NULL) {
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	old = h->current;
	h->current = fresh;
	atomic_fetch_add_explicit(&h->generation, 1, memory_order_release);
	/* the free of the old catalog, if this was its last reference, happens
	 * under the lock: rare (one per reload) and short */
	ref_drop(old);
	pthread_mutex_unlock(&h->lock);
	return 0;
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
	return r->ref->cat;
}

void holder_reader_cleanup(struct holder *h, struct holder_reader *r)
{
	if (r->ref != NULL) {
		holder_release(h, r->ref);
		r->ref = NULL;
	}
}
