/* HRWG (Sur et al. §5.3): combining over RDMA write with a gather list.
 *
 * The persistent collective buffer, allocated, registered and exchanged
 * once at setup (mr_alloc: on shm a shared segment, so writes are stores):
 *
 *   half 0 | half 1            (call c uses half c mod 2: a partner that
 *                               already runs call c + 1 never writes where
 *                               this rank still reads call c)
 *   each half: one region per step (per hypercube neighbour), laid out the
 *   same on every rank: the blocks that move in that step, packed at j*m,
 *   then the tail flag (its own cache line).
 *
 * A call copies the send buffer once into a registered staging buffer in
 * slot order (copy 1).  Step s writes the slots that move to the partner's
 * region s: one RDMA write with a gather list whose entries point where
 * each block now is (the staging buffer or the region of an earlier step:
 * the paper's "middle pointers", kept here as a table of block locations),
 * runs of adjacent blocks merged into one entry, split into several writes
 * only beyond caps.max_sge; hrwg-multi posts one write per block instead
 * (Fig. 12's pair).  Then the tail flag (the call's number) is written last,
 * in the same post list, ordered behind the data on the same connection.
 * The receiver waits for its region's flag and records where the blocks
 * landed; at the end every block is copied out to the receive buffer (copy 2).
 *
 * Schedules come from impl/pattern: the hypercube for powers of two, the
 * Bruck schedule otherwise (the paper is silent on other p). */
#include "alltoall/alltoall_impl.h"

#include "core/log.h"
#include "core/status.h"
#include "pattern/pattern.h"

#include <stdlib.h>
#include <string.h>

#define FLAG_SPACE 64

struct hrwg_priv {
	struct a2a_sched sc;              /* the schedule, laid out at set-up */
	int nsteps, multi;
	size_t max_m;
	struct ibc_xport_mr *mr;          /* the collective buffer: two halves */
	size_t half;                      /* bytes per half */
	size_t *reg_off;                  /* [nsteps]: region offset in a half */
	size_t *flag_off;                 /* [nsteps]: its flag's offset in a half */
	struct ibc_xport_rdesc *rdesc;    /* [size] */
	struct ibc_xport_mr *stage;       /* n * max_m staging + flag sources */
	uint64_t *flagsrc;                /* [2 * nsteps] */
	unsigned char **loc;              /* [n] where slot k's block is now */
	uint32_t *lkey;                   /* [n] */
	struct ibc_xport_sge *sge;        /* [n] */
	struct ibc_xport_wr *wr;          /* [n + 1] */
};

static void hrwg_teardown(struct ibc_alltoall *a);

static int hrwg_setup(struct ibc_alltoall *a)
{
	struct hrwg_priv *h = calloc(1, sizeof(*h));
	int n = a->size, s, rc;
	uint8_t *want;
	size_t off = 0;

	if (h == NULL)
		return IBC_ERR_NOMEM;
	a->priv = h;
	h->multi = a->alg->arg != NULL;
	rc = a2a_sched_build(&h->sc, (n & (n - 1)) == 0 ? IBC_PATTERN_COMB_HCUBE
						      : IBC_PATTERN_COMB_BRUCK, n, a->rank);
	if (rc)
		return rc;
	h->nsteps = h->sc.nsteps;
	h->max_m = a->params.max_bytes;
	h->reg_off = calloc((size_t)h->nsteps + 1, sizeof(size_t));
	h->flag_off = calloc((size_t)h->nsteps + 1, sizeof(size_t));
	h->rdesc = calloc((size_t)n, sizeof(*h->rdesc));
	h->loc = calloc((size_t)n, sizeof(*h->loc));
	h->lkey = calloc((size_t)n, sizeof(*h->lkey));
	h->sge = calloc((size_t)n, sizeof(*h->sge));
	h->wr = calloc((size_t)n + 1, sizeof(*h->wr));
	want = calloc((size_t)n, 1);
	if (!h->reg_off || !h->flag_off || !h->rdesc || !h->loc || !h->lkey || !h->sge || !h->wr ||
	    !want) {
		free(want);
		return IBC_ERR_NOMEM;
	}
	for (s = 0; s < h->nsteps; s++) {
		h->reg_off[s] = off;
		off += (size_t)h->sc.nmoving[s] * h->max_m;
		off = (off + FLAG_SPACE - 1) & ~(size_t)(FLAG_SPACE - 1);
		h->flag_off[s] = off;
		off += FLAG_SPACE;
		want[h->sc.step[s].send_to] = want[h->sc.step[s].recv_from] = 1;
	}
	h->half = off > 0 ? off : FLAG_SPACE;
	rc = ibc_xport_mr_alloc(a->x, 2 * h->half, IBC_XPORT_ACCESS_LOCAL_WRITE |
				IBC_XPORT_ACCESS_REMOTE_WRITE, &h->mr);
	if (rc == IBC_OK)
		rc = ibc_xport_mr_alloc(a->x, (size_t)n * h->max_m + 2 * (size_t)h->nsteps * 8 + 8,
					IBC_XPORT_ACCESS_LOCAL_WRITE, &h->stage);
	if (rc == IBC_OK) {
		h->flagsrc = (uint64_t *)((unsigned char *)h->stage->addr + (size_t)n * h->max_m);
		rc = ibc_xport_rdesc_allgather(a->x, &h->mr->rdesc, h->rdesc);
	}
	if (rc == IBC_OK)
		rc = ibc_xport_connect(a->x, want);
	free(want);
	if (rc)
		ibc_error("alltoall hrwg rank %d: setting up the collective buffer (%zu bytes): %s",
			  a->rank, 2 * h->half, ibc_status_str(rc));
	return rc;
}

/* Step s: the moving slots' blocks to the partner's region, then the flag. */
static int hrwg_send(struct ibc_alltoall *a, struct hrwg_priv *h, int s, int to, size_t hoff,
		     size_t m)
{
	int n = a->size, k, j, nsge = 0, nwr = 0, i, posted, rc;
	uint64_t raddr = h->rdesc[to].addr + hoff + h->reg_off[s];
	uint32_t max_sge = a->x->caps.max_sge;
	uint64_t *flag = &h->flagsrc[(hoff ? h->nsteps : 0) + s];
	struct ibc_xport_sge *fsge = &h->sge[n - 1];

	const int *mv = h->sc.moving + (size_t)s * (size_t)n;

	for (j = 0; j < h->sc.nmoving[s]; j++) {
		struct ibc_xport_sge *prev = nsge > 0 ? &h->sge[nsge - 1] : NULL;

		k = mv[j];
		if (!h->multi && prev && prev->lkey == h->lkey[k] &&
		    prev->addr + prev->len == (uintptr_t)h->loc[k] && prev->len + m <= UINT32_MAX) {
			prev->len += (uint32_t)m;
			continue;
		}
		h->sge[nsge].addr = (uintptr_t)h->loc[k];
		h->sge[nsge].len = (uint32_t)m;
		h->sge[nsge].lkey = h->lkey[k];
		nsge++;
	}
	/* one write per max_sge entries (gather), or per entry (multi) */
	for (i = 0; i < nsge;) {
		int take = h->multi ? 1 : (nsge - i < (int)max_sge ? nsge - i : (int)max_sge), t;
		uint64_t len = 0;

		for (t = 0; t < take; t++)
			len += h->sge[i + t].len;
		memset(&h->wr[nwr], 0, sizeof(h->wr[nwr]));
		h->wr[nwr].wr_id = a2a_wrid(a, A2A_WR_SIGNALED, 0);
		h->wr[nwr].opcode = IBC_XPORT_OP_WRITE;
		h->wr[nwr].peer = to;
		h->wr[nwr].num_sge = take;
		h->wr[nwr].sge = &h->sge[i];
		h->wr[nwr].remote_addr = raddr;
		h->wr[nwr].rkey = h->rdesc[to].rkey;
		raddr += len;
		i += take;
		nwr++;
	}
	a->cnt.writes += (uint64_t)nwr;
	/* the tail flag, last; the sge array's last entry is free (nsge < n) */
	*flag = a->seq;
	fsge->addr = (uintptr_t)flag;
	fsge->len = 8;
	fsge->lkey = h->stage->lkey;
	memset(&h->wr[nwr], 0, sizeof(h->wr[nwr]));
	h->wr[nwr].wr_id = a2a_wrid(a, A2A_WR_SIGNALED, 0);
	h->wr[nwr].opcode = IBC_XPORT_OP_WRITE;
	h->wr[nwr].flags = IBC_XPORT_WR_SIGNALED |
			   (a->x->caps.max_inline >= 8 ? IBC_XPORT_WR_INLINE : 0);
	h->wr[nwr].peer = to;
	h->wr[nwr].num_sge = 1;
	h->wr[nwr].sge = fsge;
	h->wr[nwr].remote_addr = h->rdesc[to].addr + hoff + h->flag_off[s];
	h->wr[nwr].rkey = h->rdesc[to].rkey;
	nwr++;
	rc = ibc_xport_post(a->x, h->wr, nwr, &posted);
	if (rc) {
		ibc_error("alltoall hrwg rank %d: step %d: posting %d writes to rank %d: %s", a->rank,
			  s, nwr, to, ibc_status_str(rc));
		return rc;
	}
	a->outstanding++;
	return IBC_OK;
}

static int hrwg_run(struct ibc_alltoall *a, const void *sbuf, void *rbuf, size_t m)
{
	struct hrwg_priv *h = a->priv;
	int n = a->size, s, k, j, rc = IBC_OK;
	size_t hoff = (a->params.mutant == IBC_ALLTOALL_MUTANT_ONE_HALF ? 0 : (a->seq & 1)) * h->half;
	unsigned char *base = (unsigned char *)h->mr->addr + hoff, *stage = h->stage->addr;
	const unsigned char *in = sbuf;
	unsigned char *out = rbuf;

	if (m > h->max_m) {
		ibc_error("alltoall hrwg: %zu bytes per block, the buffer was sized for %zu "
			  "(params.max_bytes)", m, h->max_m);
		return IBC_ERR_INVAL;
	}
	for (k = 0; k < n; k++) {
		a2a_copy(a, stage + (size_t)k * m, in + (size_t)h->sc.in_blk[k] * m, m);
		h->loc[k] = stage + (size_t)k * m;
		h->lkey[k] = h->stage->lkey;
	}
	for (s = 0; s < h->nsteps && rc == IBC_OK; s++) {
		const int *mv = h->sc.moving + (size_t)s * (size_t)n;

		a2a_jitter(a);
		rc = hrwg_send(a, h, s, h->sc.step[s].send_to, hoff, m);
		if (rc == IBC_OK && a->params.mutant != IBC_ALLTOALL_MUTANT_NO_TAIL_WAIT)
			rc = a2a_wait_u64(a, (const uint64_t *)(base + h->flag_off[s]), a->seq,
					  "tail flag", h->sc.step[s].recv_from);
		for (j = 0; rc == IBC_OK && j < h->sc.nmoving[s]; j++) {
			h->loc[mv[j]] = base + h->reg_off[s] + (size_t)j * m;
			h->lkey[mv[j]] = h->mr->lkey;
		}
	}
	for (k = 0; rc == IBC_OK && k < n; k++)
		a2a_copy(a, out + (size_t)h->sc.out_blk[k] * m, h->loc[k], m);
	return rc ? rc : a2a_drain(a);
}

static void hrwg_teardown(struct ibc_alltoall *a)
{
	struct hrwg_priv *h = a->priv;

	if (h == NULL)
		return;
	a2a_sched_free(&h->sc);
	if (h->mr)
		(void)ibc_xport_mr_dereg(a->x, h->mr);
	if (h->stage)
		(void)ibc_xport_mr_dereg(a->x, h->stage);
	free(h->reg_off);
	free(h->flag_off);
	free(h->rdesc);
	free(h->loc);
	free(h->lkey);
	free(h->sge);
	free(h->wr);
	free(h);
	a->priv = NULL;
}

static const int multi = 1;

/* the hypercube's steps (Bruck's for other p), by RDMA write, each ending
 * in the tail flag on its own line; copies: the n blocks into the staging
 * buffer, then out: its own from there, the n - 1 received from the regions
 * peers wrote */
static int hrwg_rounds(int n, struct ibc_pattern_round *r, int cap)
{
	int m = ibc_pattern_comb_rounds(ibc_pattern_pow2_is(n) ? IBC_PATTERN_COMB_HCUBE
							    : IBC_PATTERN_COMB_BRUCK,
					n, IBC_PATTERN_ROUND_WRITE, r, cap), k;

	for (k = 0; r != NULL && k < m && k < cap; k++)
		r[k].flag_line = 1;
	return a2a_rounds_copies(r, m, cap, n, 1, n - 1);
}

const struct ibc_alltoall_alg ibc_alltoall_alg_hrwg = {
	.name = "hrwg",
	.desc = "§5.3 HRWG: hypercube (Bruck's schedule for other p) over RDMA write with a "
		"gather list, copy based, persistent two-half buffer, tail flags",
	.needs = IBC_ALLTOALL_NEEDS_RDMA_WRITE,
	.setup = hrwg_setup, .run = hrwg_run, .teardown = hrwg_teardown,
	.rounds = hrwg_rounds,
};

const struct ibc_alltoall_alg ibc_alltoall_alg_hrwg_multi = {
	.name = "hrwg-multi",
	.desc = "HRWG with one RDMA write per block instead of a gather list (Fig. 12)",
	.needs = IBC_ALLTOALL_NEEDS_RDMA_WRITE,
	.arg = &multi,
	.setup = hrwg_setup, .run = hrwg_run, .teardown = hrwg_teardown,
	.rounds = hrwg_rounds,
};
