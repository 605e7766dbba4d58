#include "core/fs.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ibc_fs_mkdir_p(const char *dir)
{
	char path[4096];
	size_t i, len = strlen(dir);

	if (len == 0 || len >= sizeof(path)) {
		ibc_error("bad directory name '%s'", dir);
		return IBC_ERR_INVAL;
	}
	memcpy(path, dir, len + 1);
	for (i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0777) != 0 && errno != EEXIST) {
			ibc_error("mkdir %s: %s", path, strerror(errno));
			return IBC_ERR_IO;
		}
		path[i] = dir[i];
	}
	return IBC_OK;
}

int ibc_fs_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return IBC_ERR_IO;
		c += w;
		n -= (size_t)w;
	}
	return IBC_OK;
}

int ibc_fs_read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		ssize_t r = read(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return IBC_ERR_CLOSED;
		if (r < 0)
			return IBC_ERR_IO;
		c += r;
		n -= (size_t)r;
	}
	return IBC_OK;
}
