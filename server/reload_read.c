/* SPDX-License-Identifier: AGPL-3.0-only */
#include "reload_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fnv.h"

/* FNV-1a 64 over the bytes from a basis moved by `seed`, never 0 (0
 * means "nothing seen"). */
static uint64_t content_key(const char *p, size_t n, uint64_t seed)
{
	uint64_t h = fnv_add(FNV_OFFSET ^ seed, p, n);

	return h != 0 ? h : 1;
}

/* A failure's key: its kind and errno, so the same failure seen again is
 * not a new one, and a different one is. */
static uint64_t failure_key(enum api_disk_state state, int err)
{
	char tag[2] = {(char)state, (char)err};

	return content_key(tag, sizeof(tag), 0x5a5a5a5au);
}

static void read_failed(struct reload_read *rd, const char *path, int err)
{
	rd->state = err == ENOENT || err == ENOTDIR ? API_DISK_MISSING : API_DISK_UNREADABLE;
	rd->key = failure_key(rd->state, err);
	snprintf(rd->error, sizeof(rd->error), "%s: %s", path, strerror(err));
}

char *reload_read_bytes(const char *path, size_t max, size_t *len, struct reload_read *rd)
{
	/* O_NONBLOCK: a FIFO put in the file's place must not hang the open */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	char *buf = NULL;
	size_t n = 0;
	struct stat st;

	if (fd < 0) {
		read_failed(rd, path, errno);
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		read_failed(rd, path, errno);
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		/* a directory or a FIFO (which could block the reload forever) */
		read_failed(rd, path, S_ISDIR(st.st_mode) ? EISDIR : EINVAL);
		goto done;
	}
	buf = malloc(max + 1);
	if (buf == NULL) {
		read_failed(rd, path, ENOMEM);
		goto done;
	}
	while (n <= max) {
		ssize_t got = read(fd, buf + n, max + 1 - n);

		if (got < 0 && errno == EINTR) {
			continue;
		}
		if (got < 0) {
			read_failed(rd, path, errno);
			free(buf);
			buf = NULL;
			goto done;
		}
		if (got == 0) {
			break;
		}
		n += (size_t)got;
	}
	if (n > max) {
		rd->state = API_DISK_INVALID;
		rd->key = failure_key(API_DISK_INVALID, EFBIG);
		snprintf(rd->error, sizeof(rd->error), "%s: larger than %zu bytes", path, max);
		free(buf);
		buf = NULL;
		goto done;
	}
	*len = n;
done:
	close(fd);
	return buf;
}

uint64_t reload_read_stamp(const struct reload_read_file *files, size_t num)
{
	uint64_t key = 0;

	for (size_t i = 0; i < num && i < RELOAD_READ_MAX_FILES; i++) {
		struct stat st;
		int64_t v[7] = {0};

		if (stat(files[i].path, &st) != 0) {
			v[0] = errno;
		} else {
			v[0] = -1;
			v[1] = (int64_t)st.st_dev;
			v[2] = (int64_t)st.st_ino;
			v[3] = (int64_t)st.st_size;
			v[4] = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
			v[5] = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
			v[6] = (int64_t)st.st_mode;
		}
		key = content_key((const char *)v, sizeof(v), key ^ i);
	}
	return key != 0 ? key : 1;
}

void reload_read_texts_cleanup(struct reload_read_texts *t)
{
	for (size_t i = 0; i < RELOAD_READ_MAX_FILES; i++) {
		free(t->data[i]);
		t->data[i] = NULL;
	}
}

int reload_read_files(const struct reload_read_file *files, size_t num, size_t max,
		      struct reload_read_texts *t, struct reload_read *rd)
{
	uint64_t key = 0;

	memset(t, 0, sizeof(*t));
	memset(rd, 0, sizeof(*rd));
	for (size_t i = 0; i < num && i < RELOAD_READ_MAX_FILES; i++) {
		const char *flag = files[i].flag;
		size_t len = 0;

		t->data[i] = reload_read_bytes(files[i].path, max, &len, rd);
		if (t->data[i] != NULL && len == 0) {
			/* flagd loads "{}" for an empty file and empties its flags;
			 * an empty file is a write in progress or a mistake */
			rd->state = API_DISK_INVALID;
			rd->key = failure_key(API_DISK_INVALID, 0);
			snprintf(rd->error, sizeof(rd->error), "%s: empty file", files[i].path);
		}
		if (t->data[i] == NULL || len == 0) {
			char why[sizeof(rd->error)];

			if (flag != NULL) {
				memcpy(why, rd->error, sizeof(why));
				if (snprintf(rd->error, sizeof(rd->error), "%s %s", flag, why) < 0) {
					rd->error[0] = '\0';
				}
			}
			rd->key += i;
			reload_read_texts_cleanup(t);
			return -1;
		}
		t->files[i] = (struct reload_read_text){t->data[i], len};
		key = content_key(t->data[i], len, i == 0 ? 0 : key ^ len);
	}
	rd->state = API_DISK_SAME;
	rd->key = key;
	return 0;
}
