/* Pairwise exchange and the direct ring over two-sided messages.
 *
 *   pairwise  MPICH's large-message all-to-all: step i = 1..p-1 exchanges
 *             with rank XOR i when p is a power of two, else sends to
 *             rank + i and receives from rank - i; eager or rendezvous by size
 *   direct    Sur et al. eq. 2-3, the direct virtual ring: step i sends to
 *             (rank + i) mod p and receives from (rank - i) mod p with a
 *             rendezvous per message (the receive block registered through
 *             the registration cache: p - 1 entries, one per block) */
#include "alltoall/alltoall_impl.h"

#include "core/status.h"
#include "pattern/pattern.h"

static int p2p_setup(struct ibc_alltoall *a)
{
	return a2a_p2p_setup(a);
}

static int ring_run(struct ibc_alltoall *a, const void *sbuf, void *rbuf, size_t m)
{
	const unsigned char *in = sbuf;
	unsigned char *out = rbuf;
	int n = a->size, i, rc = IBC_OK, xor = (n & (n - 1)) == 0 && a->alg->arg == NULL;
	int rndz = a->alg->arg != NULL;

	a2a_self_copy(a, sbuf, rbuf, m);
	for (i = 1; i < n && rc == IBC_OK; i++) {
		int to = xor ? a->rank ^ i : ibc_pattern_ring_next(n, a->rank, i);
		int from = xor ? to : ibc_pattern_ring_prev(n, a->rank, i);

		a2a_jitter(a);
		rc = a2a_sendrecv(a, to, in + (size_t)to * m, m, from, out + (size_t)from * m, m,
				  rndz);
	}
	return rc ? rc : a2a_drain(a);
}

static const int always_rndz = 1;

/* one peer per step, eager by size; copies: its own block first */
static int pairwise_rounds(int n, struct ibc_pattern_round *r, int cap)
{
	int m = ibc_pattern_ring_rounds(n, 0, IBC_PATTERN_ROUND_SEND, r, cap), k;

	for (k = 0; r != NULL && m <= cap && k < m; k++)
		r[k].eager = 1;
	return a2a_rounds_copies(r, m, cap, 1, 0, 0);
}

/* one peer per step, each a rendezvous: RTS and CTS signals, then the block
 * written into the receiver's user buffer and FIN, a signal, behind it (no
 * eager copies); copies: its own block first */
static int direct_rounds(int n, struct ibc_pattern_round *r, int cap)
{
	int k, m = ibc_pattern_ring_rounds(n, 0, IBC_PATTERN_ROUND_SEND, NULL, 0);

	for (k = 0; m > 0 && k < 3 * m; k++)
		if (k < cap)
			r[k] = (struct ibc_pattern_round){ .out = 1, .in = 1,
							   .kind = IBC_PATTERN_ROUND_SEND,
							   .user_writes = k % 3 == 2 };
	return m < 0 ? m : a2a_rounds_copies(r, 3 * m, cap, 1, 0, 0);
}

const struct ibc_alltoall_alg ibc_alltoall_alg_pairwise = {
	.name = "pairwise",
	.desc = "pairwise exchange over two-sided messages (MPICH's large-message algorithm)",
	.needs = IBC_ALLTOALL_NEEDS_TWO_SIDED | IBC_ALLTOALL_NEEDS_USER_MEM,
	.arg = NULL,
	.setup = p2p_setup, .run = ring_run, .teardown = a2a_p2p_teardown,
	.rounds = pairwise_rounds,
};

const struct ibc_alltoall_alg ibc_alltoall_alg_direct = {
	.name = "direct",
	.desc = "eq. 2-3: direct virtual ring over two-sided messages, a rendezvous per message",
	.needs = IBC_ALLTOALL_NEEDS_TWO_SIDED | IBC_ALLTOALL_NEEDS_USER_MEM,
	.arg = &always_rndz,
	.setup = p2p_setup, .run = ring_run, .teardown = a2a_p2p_teardown,
	.rounds = direct_rounds,
};
