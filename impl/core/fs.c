#include "core/fs.h"
#include "core/log.h"
#include "core/status.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

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
