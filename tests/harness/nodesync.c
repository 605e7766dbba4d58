/* ibc_boot_shm_map() and the node sync on 1..9 fork ranks: the mapping is
 * shared by the ranks that asked for it and leaves no name in /dev/shm; the
 * node sync releases nobody before everybody arrived (a shared counter, random
 * delays, back-to-back syncs); a rank that never arrives is a timeout, not a
 * hang.  Each rank's verdict is gathered to rank 0, which alone prints TAP. */
#include "boot/boot.h"
#include "core/status.h"
#include "core/wait.h"
#include "harness/harness.h"
#include "tap.h"

#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SYNCS 3000
#define MAP_LEN (3 * 4096 + 100)

/* names of this test's segments still in /dev/shm */
static int leftovers(const char *tag)
{
	char prefix[64];
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	int n = 0;

	if (d == NULL)
		return 0;
	snprintf(prefix, sizeof(prefix), "ibchar-%s-", tag);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

/* every rank's bad mask -> rank 0 (OR) */
static unsigned gather_bad(struct ibc_boot *b, unsigned bad)
{
	unsigned *all = calloc((size_t)b->size, sizeof(*all)), any = 0;
	int r;

	if (all == NULL || ibc_boot_gather(b, &bad, all, sizeof(bad), 0) != IBC_OK)
		any = ~0u;
	else if (b->rank == 0)
		for (r = 0; r < b->size; r++)
			any |= all[r];
	free(all);
	return any;
}

static unsigned map_checks(struct ibc_boot *b)
{
	int owner = b->size - 1, want = b->rank % 2 == 0 || b->rank == owner;
	unsigned char *m;
	unsigned bad = 0;
	void *map;
	size_t i;

	if (ibc_boot_shm_map(b, owner, "nstest", MAP_LEN, want, &map) != IBC_OK)
		return 1u << 0;
	if ((map != NULL) != want)
		bad |= 1u << 1;
	m = map;
	if (m != NULL)
		for (i = 0; i < MAP_LEN; i += 511)
			if (m[i] != 0)
				bad |= 1u << 3; /* a new segment is zero-filled */
	if (ibc_boot_barrier(b) != IBC_OK)
		bad |= 1u << 4;
	/* the owner unlinked the name before its return from the mapping */
	if (leftovers("nstest") != 0)
		bad |= 1u << 2;
	if (b->rank == owner)
		for (i = 0; i < MAP_LEN; i++)
			m[i] = (unsigned char)(i * 13 + 5);
	if (ibc_boot_barrier(b) != IBC_OK)
		bad |= 1u << 4;
	if (m != NULL) {
		for (i = 0; i < MAP_LEN; i++)
			if (m[i] != (unsigned char)(i * 13 + 5)) {
				bad |= 1u << 5;
				break;
			}
		munmap(m, MAP_LEN);
	}
	return bad;
}

static void delay_random(unsigned *seed)
{
	unsigned r = (unsigned)rand_r(seed) % 100;
	struct timespec ts = { 0, 20000L };

	if (r < 2)
		nanosleep(&ts, NULL);      /* now and then a long one */
	else if (r < 30)
		for (volatile int k = (int)(r * 40); k > 0; k--)
			;                  /* a short spin */
}

static unsigned sync_checks(struct ibc_boot *b, enum ibc_wait w)
{
	_Atomic uint64_t *entered;
	struct ibc_node_sync *s;
	unsigned bad = 0, seed = 7u + (unsigned)b->rank * 977u;
	uint64_t k;
	void *map;

	if (ibc_boot_shm_map(b, 0, "nstest", sizeof(*entered), 1, &map) != IBC_OK)
		return 1u << 8;
	entered = map;
	if (ibc_node_sync_open(b, w, 60, &s) != IBC_OK) {
		munmap(map, sizeof(*entered));
		return 1u << 9;
	}
	for (k = 0; k < SYNCS; k++) {
		delay_random(&seed);
		atomic_fetch_add(entered, 1);
		if (ibc_node_sync(s, NULL, NULL) != IBC_OK) {
			bad |= 1u << 10;
			break;
		}
		if (atomic_load(entered) < (k + 1) * (uint64_t)b->size)
			bad |= 1u << 11; /* left sync k before everybody entered it */
	}
	ibc_node_sync_close(s);
	munmap(map, sizeof(*entered));
	return bad;
}

static void one_job(int n, enum ibc_wait w)
{
	struct ibc_boot *b;
	unsigned bad_map, bad_sync;
	int rc = ibc_boot_fork_open(n, &b), rank;

	if (rc != IBC_OK) {
		tap_ok(0, "fork open %d ranks: %s", n, ibc_status_str(rc));
		tap_skip(2, "no job");
		return;
	}
	rank = b->rank;
	bad_map = gather_bad(b, map_checks(b));
	bad_sync = gather_bad(b, sync_checks(b, w));
	rc = ibc_boot_close(b);
	if (rank != 0)
		exit(0);
	tap_is_int(bad_map, 0, "%d ranks: shm map shared by the ranks that asked, zero-filled, no name left", n);
	tap_is_int(bad_sync, 0, "%d ranks, %s: %d node syncs, nobody released early", n,
		   ibc_wait_name(w), SYNCS);
	tap_is_int(rc, IBC_OK, "%d ranks: job closes cleanly", n);
}

/* rank 1 never arrives: rank 0 gets IBC_ERR_TIMEOUT */
static void timeout_job(void)
{
	struct ibc_node_sync *s;
	struct ibc_boot *b;
	int rc = ibc_boot_fork_open(2, &b), rank, got = IBC_OK;

	if (rc != IBC_OK) {
		tap_skip(1, "no job");
		return;
	}
	rank = b->rank;
	rc = ibc_node_sync_open(b, IBC_WAIT_SPIN_YIELD, 0.3, &s);
	if (rc == IBC_OK && rank == 0)
		got = ibc_node_sync(s, NULL, NULL);
	ibc_node_sync_close(s);
	(void)ibc_boot_close(b);
	if (rank != 0)
		exit(0);
	tap_is_int(got, IBC_ERR_TIMEOUT, "a rank that never arrives: timeout after 0.3 s (%s)",
		   ibc_status_str(got));
}

int main(void)
{
	static const int sizes[] = { 1, 2, 3, 5, 8, 9 };
	size_t i;

	tap_plan(3 * 7 + 2);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		one_job(sizes[i], IBC_WAIT_SPIN_YIELD);
	one_job(2, IBC_WAIT_SPIN);
	timeout_job();
	tap_is_int(leftovers("nstest") + leftovers("sync"), 0, "nothing left in /dev/shm");
	return tap_done();
}
