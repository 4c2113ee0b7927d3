/* SPDX-License-Identifier: AGPL-3.0-only */
#include "durable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Fills *f and returns -1, the one way every step fails. */
static int failed(struct durable_failure *f, const char *what, const char *path, int err)
{
	f->what = what;
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->err = err;
	return -1;
}

/* dir/prefix+name into out; false when it does not fit. */
static bool join(char out[DURABLE_PATH_MAX], const char *dir, const char *prefix, const char *name)
{
	int n = snprintf(out, DURABLE_PATH_MAX, "%s/%s%s", dir, prefix, name);

	return n >= 0 && n < DURABLE_PATH_MAX;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			if (w == 0) {
				errno = ENOSPC;
			}
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int sync_dir(const char *dir, struct durable_failure *f)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = -1;

	if (fd < 0) {
		return failed(f, "fsync", dir, errno);
	}
	if (fsync(fd) != 0) {
		failed(f, "fsync", dir, errno);
	} else {
		ret = 0;
	}
	close(fd);
	return ret;
}

int durable_stage(const char *dir, const char *name, const void *data, size_t len,
		  struct durable_failure *f)
{
	char tmp[DURABLE_PATH_MAX];
	int fd, ret = -1;

	if (!join(tmp, dir, DURABLE_TMP_PREFIX, name)) {
		return failed(f, "create", tmp, ENAMETOOLONG);
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0) {
		return failed(f, "create", tmp, errno);
	}
	if (write_all(fd, data, len) != 0 || fsync(fd) != 0) {
		failed(f, "write", tmp, errno);
		close(fd);
		goto done;
	}
	if (close(fd) != 0) {
		failed(f, "write", tmp, errno);
		goto done;
	}
	ret = 0;
done:
	if (ret != 0) {
		unlink(tmp); /* never renamed: nothing of it may be taken */
	}
	return ret;
}

int durable_rename(const char *dir, const char *from, const char *to, struct durable_failure *f)
{
	char src[DURABLE_PATH_MAX], dst[DURABLE_PATH_MAX];

	if (!join(src, dir, "", from) || !join(dst, dir, "", to)) {
		return failed(f, "rename", src, ENAMETOOLONG);
	}
	if (rename(src, dst) != 0) {
		return failed(f, "rename", src, errno);
	}
	/* a rename is a change of the directory's own data: on disk once it is synced */
	return sync_dir(dir, f);
}

int durable_commit(const char *dir, const char *name, struct durable_failure *f)
{
	char tmp[DURABLE_PATH_MAX], path[DURABLE_PATH_MAX];

	if (!join(tmp, dir, DURABLE_TMP_PREFIX, name) || !join(path, dir, "", name)) {
		return failed(f, "rename", tmp, ENAMETOOLONG);
	}
	if (rename(tmp, path) != 0) {
		int err = errno;

		unlink(tmp);
		return failed(f, "rename", tmp, err);
	}
	return sync_dir(dir, f);
}

int durable_write(const char *dir, const char *name, const void *data, size_t len,
		  struct durable_failure *f)
{
	if (durable_stage(dir, name, data, len, f) != 0) {
		return -1;
	}
	return durable_commit(dir, name, f);
}

bool durable_is_temporary(const char *entry)
{
	return strncmp(entry, DURABLE_TMP_PREFIX, sizeof(DURABLE_TMP_PREFIX) - 1) == 0;
}
