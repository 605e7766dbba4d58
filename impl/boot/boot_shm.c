/* ibc_boot_shm_map(): one shared mapping for ranks of one node, set up
 * through the bootstrap (see boot.h). */
#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int ibc_boot_shm_sweep(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	char tag[64], name[300];
	int pid, n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		/* /ibchar-TAG-PID-SEQ, TAG without a '-' */
		if (sscanf(e->d_name, "ibchar-%63[^-]-%d-", tag, &pid) != 2 || pid <= 0)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(name, sizeof(name), "/%s", e->d_name);
		if (shm_unlink(name) == 0) {
			ibc_info("boot shm: removed %s, left by a rank that was ended", name);
			n++;
		}
	}
	closedir(d);
	return n;
}

int ibc_boot_shm_map(struct ibc_boot *b, int owner, const char *tag, size_t len, int map,
		     void **out)
{
	static _Atomic unsigned seq;
	char name[96] = "";
	void *m = MAP_FAILED;
	int fd = -1, rc = IBC_OK;

	*out = NULL;
	if (owner < 0 || owner >= b->size || len == 0) {
		ibc_error("boot shm: owner %d of %d ranks, %zu bytes: invalid", owner, b->size, len);
		return IBC_ERR_INVAL;
	}
	if (b->rank == owner) {
		snprintf(name, sizeof(name), "/ibchar-%s-%d-%u", tag, (int)getpid(),
			 atomic_fetch_add(&seq, 1));
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
			ibc_error("boot shm: %s: %s", name, strerror(errno));
			if (fd >= 0)
				shm_unlink(name);
			name[0] = '\0'; /* tells the others */
		}
	}
	if (ibc_boot_bcast(b, name, sizeof(name), owner) != IBC_OK)
		rc = IBC_ERR_CLOSED;
	else if (name[0] == '\0')
		rc = IBC_ERR_SYS;
	if (rc == IBC_OK && map) {
		if (fd < 0)
			fd = shm_open(name, O_RDWR, 0600);
		if (fd < 0) {
			ibc_error("boot shm: opening %s (rank %d): %s", name, b->rank, strerror(errno));
			rc = IBC_ERR_SYS;
		} else {
			m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m == MAP_FAILED) {
				ibc_error("boot shm: mapping %s (rank %d): %s", name, b->rank,
					  strerror(errno));
				rc = IBC_ERR_SYS;
			}
		}
	}
	if (fd >= 0)
		close(fd);
	if (rc != IBC_ERR_CLOSED && ibc_boot_agree(b, rc, &rc) != IBC_OK)
		rc = IBC_ERR_CLOSED; /* a lost bootstrap has no agreement to reach */
	/* everyone has it mapped (or failed): the name can go */
	if (b->rank == owner && name[0] != '\0')
		shm_unlink(name);
	if (rc != IBC_OK) {
		if (m != MAP_FAILED)
			munmap(m, len);
		return rc;
	}
	*out = map ? m : NULL;
	return IBC_OK;
}
