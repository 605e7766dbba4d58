/* Transport conformance suite, one for every backend: IBC_TEST_XPORT=shm|verbs|auto
 * (default shm).  Ranks come from the fork bootstrap (IBC_TEST_RANKS, default 8 on shm
 * and 4 elsewhere, at least 2); IBC_TEST_ORDER_ITERS sets the ordering rounds (default
 * 1000 on shm, 300 elsewhere).  Every check is evaluated on every rank; the verdicts are gathered to
 * rank 0, which alone prints TAP (with the failing ranks as diagnostics).
 *
 * Covered: caps, registration and descriptors, RDMA write with gather lists of
 * 1..16 sges and 1 B..4 MiB (inline and not, patterns that expose segment
 * boundaries, guard bytes around the target range), writes into plain user memory,
 * RDMA read with scatter lists, write-with-immediate, send/recv (gather, scatter,
 * immediate, receive posted late, shared receive queue), post list vs single post,
 * send queue slots (full at max_send_wr, freed by a polled completion),
 * ordering (payload then flag, the reader checks the payload after the flag),
 * atomics under contention (fetch-add: final value and uniqueness of the fetched
 * values; compare-swap loops), multicast to 2..N members (exact delivery on shm,
 * integrity everywhere; injected drops on shm), error completions (bad rkey,
 * out of range, deregistered memory, unsignaled errors, local protection, receive
 * too small, the target untouched), the wait primitive, XRC (skipped where
 * unsupported), clean teardown and no /dev/shm leftovers.
 * Each error case runs on a fresh instance: on verbs an error breaks the QP. */
#include "conformance.h"
#include "conformance_ops.h"
#include "conformance_mcast.h"
#include "conformance_errors.h"

/* ---------------------------------------------------------- main ------- */

static void run_job(int n, int full)
{
	struct world w;
	int rc = ibc_boot_fork_open(n, &B);

	if (rc != IBC_OK) {
		tap_ok(0, "fork bootstrap with %d ranks: %s", n, ibc_status_str(rc));
		return;
	}
	R = B->rank;
	N = B->size;
	if (R != 0) {
		char tag[32];
		snprintf(tag, sizeof(tag), "rank %d", R);
		ibc_log_tag_set(tag);
	}
	if (R == 0)
		tap_diag("--- %d ranks on %s%s", N, backend, full ? "" : " (smoke)");
	world_open(&w);
	test_caps(&w);
	test_no_names_while_running(&w);
	if (full) {
		test_write(&w);
		test_key_turns(&w);
		test_user_mem(&w);
		test_read(&w);
		test_write_imm(&w);
		test_send_recv(&w);
		test_post_list(&w);
		test_sq_slots(&w);
		test_ordering(&w);
		test_atomics(&w);
		test_mcast(&w);
		test_wait(&w);
		ibc_log_level_set(IBC_LOG_NONE); /* the refusals below are logged as errors */
		test_args(&w);
		ibc_log_init("conformance");
	} else {
		/* a quick write both ways and a repeated open/close */
		struct ibc_xport_sge s = sge_of(&w, w.Bl, 4096);
		int ok;
		fill(w.Bl, 4096, seed_of(R, 99, 0), 0);
		barrier();
		ok = ibc_xport_write(w.x, right(), &s, 1, raddr_of(&w, right(), 0),
				     w.rd[right()].rkey, IBC_XPORT_WR_SIGNALED, 1) == IBC_OK &&
		     wait_ok(w.x, IBC_XPORT_CQ_SEND, 1, NULL);
		barrier();
		check(ok && verify(w.A, 4096, seed_of(left(), 99, 0), 0), "smoke write with %d ranks", N);
	}
	world_close(&w);
	if (full) {
		test_drops();
		test_overrun();
		test_mcast_resident();
		for (int c = 0; c < E_COUNT; c++)
			error_case((enum ecase)c, 0);
		/* again after a good write with the same key, which fills the
		 * transport's caches (shm's write fast path), and (warm 2)
		 * after one to another region too, so that the key's entry is
		 * not the latest: they must not let a bad access through */
		for (int warm = 1; warm <= 2; warm++)
			for (int c = 0; c < E_COUNT; c++)
				if (c != E_RECV_SMALL && c != E_ATOMIC_RANGE)
					error_case((enum ecase)c, warm);
		test_xrc();
	} else {
		for (int k = 0; k < 2; k++) {
			world_open(&w);
			world_close(&w);
		}
	}
	rc = ibc_boot_close(B);
	if (R != 0)
		exit(0); /* verdicts went to rank 0; tap state here is rank 0's copy */
	tap_ok(rc == IBC_OK, "%d-rank job ends cleanly (%s)", n, ibc_status_str(rc));
	tap_ok(count_shm_leftovers() == 0, "no /dev/shm/ibcx-%d-* leftovers after close",
	       (int)root_pid);
}

/* A rank dies by SIGKILL while the transport is open with registered memory:
 * nothing of the job may remain in /dev/shm (names go at open / allocation). */
static void crash_job(void)
{
	struct ibc_xport_params p;
	struct ibc_xport *x = NULL;
	struct ibc_xport_mr *mr = NULL;
	int rc = ibc_boot_fork_open(2, &B), left_now, left_after, err;

	if (rc != IBC_OK) {
		tap_ok(0, "fork bootstrap for the crash case: %s", ibc_status_str(rc));
		return;
	}
	R = B->rank;
	N = B->size;
	params_default(&p);
	rc = ibc_xport_open(B, &p, &x);
	if (rc == IBC_OK)
		rc = ibc_xport_connect(x, NULL);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(x, 1 * MIB, IBC_XPORT_ACCESS_ALL, &mr);
	err = ibc_boot_barrier(B);
	if (R == 1) {
		if (rc == IBC_OK && err == IBC_OK)
			raise(SIGKILL);
		exit(1);
	}
	/* the peer is gone: must not hang; the bootstrap's and close's complaints
	 * about it are expected, so they are muted */
	ibc_log_level_set(IBC_LOG_NONE);
	err = ibc_boot_barrier(B);
	left_now = count_shm_leftovers();
	if (x != NULL)
		ibc_xport_close(x);
	ibc_boot_close(B);
	ibc_log_init("conformance");
	left_after = count_shm_leftovers();
	tap_ok(rc == IBC_OK && err != IBC_OK, "crash case: open + mr_alloc ran (%s), the dead peer is "
	       "noticed (%s)", ibc_status_str(rc), ibc_status_str(err));
	tap_ok(left_now == 0 && left_after == 0, "crash case: no /dev/shm names while the dead "
	       "peer's job is still open (%d) nor after (%d)", left_now, left_after);
}

int main(void)
{
	const char *e = getenv("IBC_TEST_XPORT");
	int ranks = 8;

	ibc_log_init("conformance");
	backend = e != NULL && *e ? e : "shm";
	is_shm = strcmp(backend, "shm") == 0 ||
		 (strcmp(backend, "auto") == 0 && strcmp(ibc_xport_auto_backend(), "shm") == 0);
	if (!is_shm)
		ranks = 4; /* a Soft-RoCE guest is slow: fewer ranks by default */
	e = getenv("IBC_TEST_RANKS");
	if (e != NULL && atoi(e) >= 2)
		ranks = atoi(e) > MAXR ? MAXR : atoi(e);
	if (strcmp(backend, "verbs") == 0 && strcmp(ibc_xport_auto_backend(), "verbs") != 0)
		tap_skip_all("no RDMA device with an active port for IBC_TEST_XPORT=verbs");
	root_pid = getpid();
	tap_plan_none();
	run_job(ranks, 1);
	run_job(2, 0);
	if (is_shm)
		crash_job();
	else
		tap_skip(2, "crash case checks /dev/shm names: shm only");
	return tap_done();
}
