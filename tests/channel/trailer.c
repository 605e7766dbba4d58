/* A half-written record is never delivered (channel_packet.c): for every
 * packet design, two ranks (fork bootstrap), rank 0 leaves in rank 1's ring
 * what a write of its next record leaves while it lands lowest address
 * first and has not reached its trailer -- header, sequence word and
 * payload in, and in the trailer's place a stale word equal to the
 * sequence number (ibc_channel_test_torn_record) -- and rank 1's gets must
 * deliver nothing; then rank 0 puts the record whole, and rank 1 gets it,
 * and the next one, byte-exact.  With the plain sequence number as the
 * trailer (as before) the torn record was delivered.
 *
 * Environment: IBC_TEST_XPORT (default shm; verbs in the guest). */
#include "boot/boot.h"
#include "channel/channel.h"
#include "core/status.h"
#include "xport/xport.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POLLS 2000
#define TMO_NS 20000000000LL

static const char *backend = "shm";

struct report {
	int32_t rc;
	int32_t torn_got;   /* rank 1: bytes the gets delivered of the torn record */
	int32_t whole_ok;   /* rank 1: the record put whole, then the next, arrived intact */
	int32_t pad;
};

static int rank_body(struct ibc_boot *boot, const char *design, size_t len, struct report *rep)
{
	struct ibc_xport_params xp;
	struct ibc_xport *x = NULL;
	struct ibc_channel_params cp;
	struct ibc_channel *ch = NULL;
	unsigned char msg[2][64], got[64];
	int rc, rc2, i, agreed;

	for (i = 0; i < (int)len; i++) {
		msg[0][i] = (unsigned char)(0xa0 + i);
		msg[1][i] = (unsigned char)(0x30 + i);
	}
	ibc_xport_params_init(&xp);
	xp.backend = backend;
	xp.wait = IBC_WAIT_SPIN_YIELD;
	rc = ibc_xport_open(boot, &xp, &x);
	if (rc)
		return rc;
	ibc_channel_params_init(&cp);
	cp.ring_bytes = 65536;
	cp.deadline_s = 20;
	rc = ibc_channel_create(x, design, 1 - boot->rank, &cp, &ch);
	if (rc == IBC_OK)
		rc = ibc_channel_setup(ch);
	/* rank 0: the torn record, in rank 1's ring when this returns */
	if (rc == IBC_OK && boot->rank == 0)
		rc = ibc_channel_test_torn_record(ch, msg[0], len);
	if (rc == IBC_OK)
		rc = ibc_boot_barrier(boot);
	if (rc == IBC_OK && boot->rank == 1) {
		for (i = 0; rc == IBC_OK && i < POLLS; i++) {
			struct iovec v = { got, len };
			size_t n = 0;

			rc = ibc_channel_get(ch, &v, 1, &n);
			rep->torn_got += (int32_t)n;
		}
	}
	if (rc == IBC_OK)
		rc = ibc_boot_barrier(boot);
	/* the record whole, then the next */
	for (i = 0; rc == IBC_OK && i < 2; i++) {
		if (boot->rank == 0) {
			rc = ibc_channel_send_all(ch, msg[i], len, TMO_NS);
		} else {
			memset(got, 0, sizeof(got));
			rc = ibc_channel_recv_all(ch, got, len, TMO_NS);
			if (rc == IBC_OK && memcmp(got, msg[i], len) == 0)
				rep->whole_ok++;
		}
	}
	if (ibc_boot_agree(boot, rc, &agreed) != IBC_OK && rc == IBC_OK)
		rc = IBC_ERR_IO;
	rc2 = ibc_channel_destroy(ch);
	if (rc == IBC_OK)
		rc = rc2;
	rc2 = ibc_xport_close(x);
	return rc ? rc : rc2;
}

static void run_case(const char *design, size_t len, struct report all[2])
{
	struct ibc_boot *boot = NULL;
	struct report mine;
	int rc;

	memset(all, 0, 2 * sizeof(*all));
	memset(&mine, 0, sizeof(mine));
	fflush(stdout);
	rc = ibc_boot_fork_open(2, &boot);
	if (rc) {
		all[0].rc = rc;
		return;
	}
	mine.rc = rank_body(boot, design, len, &mine);
	if (ibc_boot_allgather(boot, &mine, all, sizeof(mine)) != IBC_OK)
		all[0].rc = IBC_ERR_IO;
	if (boot->rank != 0) {
		(void)ibc_boot_close(boot);
		_exit(mine.rc ? 1 : 0);
	}
	(void)ibc_boot_close(boot);
}

int main(void)
{
	static const size_t lens[] = { 8, 13, 64 };
	const char *e = getenv("IBC_TEST_XPORT");
	size_t d, k;

	if (e && *e)
		backend = e;
	tap_plan_none();
	for (d = 0; d < ibc_channel_design_count(); d++) {
		const struct ibc_channel_design *cd = ibc_channel_design_get(d);

		if (!cd->packets)
			continue;
		for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			struct report r[2];

			run_case(cd->name, lens[k], r);
			if (r[0].rc != IBC_OK || r[1].rc != IBC_OK)
				tap_diag("%s: rc %s / %s", cd->name, ibc_status_str(r[0].rc),
					 ibc_status_str(r[1].rc));
			tap_ok(r[0].rc == IBC_OK && r[1].rc == IBC_OK && r[1].torn_got == 0,
			       "%s, %zu bytes: a record whose trailer's place holds its sequence number "
			       "is not delivered (%d bytes in %d gets)", cd->name, lens[k],
			       r[1].torn_got, POLLS);
			tap_ok(r[1].whole_ok == 2, "%s, %zu bytes: ... put whole, it and the next arrive "
			       "byte-exact (%d of 2)", cd->name, lens[k], r[1].whole_ok);
		}
	}
	return tap_done();
}
