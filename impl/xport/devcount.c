/* A verbs port's hw_counters (devcount.h). */
#include "xport/devcount.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

/* the decimal a counter file holds; 0 when it holds one */
static int value_read(const char *path, uint64_t *v)
{
	char buf[64], *end;
	FILE *f = fopen(path, "r");
	size_t len;

	if (f == NULL)
		return -1;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	if (len == 0 || buf[0] < '0' || buf[0] > '9')
		return -1;
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno != 0 || (*end != '\0' && *end != '\n'))
		return -1;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

int ibc_devcount_open(struct ibc_devcount *d, const char *root, const char *device)
{
	const char *colon = strrchr(device, ':');
	char path[sizeof(d->dir) + IBC_DEVCOUNT_NAME + 2];
	struct dirent *e;
	DIR *dir;
	int w;

	memset(d, 0, sizeof(*d));
	if (colon == NULL || colon == device || colon[1] == '\0')
		return IBC_ERR_INVAL;
	w = snprintf(d->dir, sizeof(d->dir), "%s/%.*s/ports/%s/hw_counters", root, (int)(colon - device),
		     device, colon + 1);
	if (w < 0 || (size_t)w >= sizeof(d->dir))
		return IBC_ERR_INVAL;
	dir = opendir(d->dir);
	if (dir == NULL)
		return IBC_ERR_UNSUPPORTED;
	while ((e = readdir(dir)) != NULL && d->n < IBC_DEVCOUNT_MAX) {
		uint64_t v;

		if (e->d_name[0] == '.' || strcmp(e->d_name, "lifespan") == 0 ||
		    strlen(e->d_name) >= IBC_DEVCOUNT_NAME)
			continue;
		snprintf(path, sizeof(path), "%s/%s", d->dir, e->d_name);
		if (value_read(path, &v) == 0)
			snprintf(d->name[d->n++], IBC_DEVCOUNT_NAME, "%s", e->d_name);
	}
	closedir(dir);
	if (d->n == 0)
		return IBC_ERR_UNSUPPORTED;
	qsort(d->name, d->n, sizeof(d->name[0]), cmp_name);
	return IBC_OK;
}

int ibc_devcount_read(const struct ibc_devcount *d, uint64_t *vals)
{
	char path[sizeof(d->dir) + IBC_DEVCOUNT_NAME + 2];
	size_t i;

	for (i = 0; i < d->n; i++) {
		snprintf(path, sizeof(path), "%s/%s", d->dir, d->name[i]);
		if (value_read(path, &vals[i]) != 0)
			return IBC_ERR_IO;
	}
	return IBC_OK;
}

/* appends ";"-separated text to buf (used bytes so far); the new length */
static size_t put(char *buf, size_t cap, size_t used, const char *name, unsigned long long v)
{
	int w;

	if (used + 1 >= cap)
		return used;
	w = snprintf(buf + used, cap - used, "%s%s=%llu", used > 0 ? ";" : "", name, v);
	if (w < 0 || used + (size_t)w >= cap) {
		buf[used] = '\0'; /* a key cut in half is left out */
		return used;
	}
	return used + (size_t)w;
}

void ibc_devcount_format(const struct ibc_devcount *d, const uint64_t *before, const uint64_t *after,
			 char *buf, size_t cap)
{
	char key[IBC_DEVCOUNT_NAME + 8];
	size_t i, used = 0;

	if (cap == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < d->n; i++)
		if (after[i] != before[i]) {
			snprintf(key, sizeof(key), "dev_%s", d->name[i]);
			used = put(buf, cap, used, key, (unsigned long long)(after[i] - before[i]));
		}
}

void ibc_devcount_merge(const char *texts, size_t stride, int n, char *buf, size_t cap)
{
	char keys[2 * IBC_DEVCOUNT_MAX][IBC_DEVCOUNT_NAME + 32];
	unsigned long long sums[2 * IBC_DEVCOUNT_MAX];
	size_t nk = 0, i, used = 0;
	int r;

	for (r = 0; r < n; r++) {
		const char *t = texts + (size_t)r * stride;
		const char *end = memchr(t, '\0', stride);
		const char *p = t;

		if (end == NULL)
			continue; /* not a string: left out */
		while (p < end) {
			const char *semi = memchr(p, ';', (size_t)(end - p)), *eq;
			size_t len = semi != NULL ? (size_t)(semi - p) : (size_t)(end - p);
			char part[IBC_DEVCOUNT_NAME + 32], *num;
			unsigned long long v;

			if (len > 0 && len < sizeof(part)) {
				memcpy(part, p, len);
				part[len] = '\0';
				eq = strchr(part, '=');
				if (eq != NULL && eq != part && (size_t)(eq - part) < sizeof(keys[0]) &&
				    eq[1] >= '0' && eq[1] <= '9') {
					errno = 0;
					v = strtoull(eq + 1, &num, 10);
					if (errno == 0 && *num == '\0') {
						part[eq - part] = '\0';
						for (i = 0; i < nk && strcmp(keys[i], part) != 0; i++)
							;
						if (i == nk && nk < 2 * IBC_DEVCOUNT_MAX) {
							snprintf(keys[nk], sizeof(keys[0]), "%s", part);
							sums[nk++] = 0;
						}
						if (i < nk)
							sums[i] += v;
					}
				}
			}
			p += len + (semi != NULL);
		}
	}
	if (cap == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < nk; i++)
		used = put(buf, cap, used, keys[i], sums[i]);
}
