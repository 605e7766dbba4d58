/* The global clock: see gclock.h. */
#include "harness/gclock.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/status.h"
#include "core/timer.h"
#include "xport/xport.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define GC_FIT_GROUPS 6        /* fit points per leader */
#define GC_FIT_ROUNDS 16       /* ping-pongs per point (the fastest counts) */
#define GC_GROUP_GAP_NS 3000000L /* between points: the fit spans ~15 ms */
#define GC_CHECK_ROUNDS_NODE 200 /* check: leader against each rank of its node */
#define GC_CHECK_ROUNDS_NET 32   /* check: rank 0 against each leader */
#define GC_TIMEOUT_NS 5000000000LL
#define GC_EPS_US 0.05         /* check slack beyond the round trip's half */
#define CL 64

/* One ping-pong: A's clock before the ping and after the pong, B's in between
 * (all in microseconds, local or global as the caller maps them). */
struct pp {
	double a1, b, a2;
};

void ibc_gclock_evidence_init(struct ibc_gclock_evidence *e)
{
	e->excess = -INFINITY;
	e->bound = e->rtt = INFINITY;
}

void ibc_gclock_evidence_add(struct ibc_gclock_evidence *e, double a1, double b, double a2)
{
	double rtt = a2 - a1, o = fabs(b - (a1 + a2) / 2);

	if (o - rtt / 2 > e->excess)
		e->excess = o - rtt / 2;
	if (o + rtt / 2 < e->bound)
		e->bound = o + rtt / 2;
	if (rtt < e->rtt)
		e->rtt = rtt;
}

double ibc_gclock_global(const struct ibc_gclock *g, double local_us)
{
	return local_us - (g->offset_us + g->drift * (local_us - g->ref_us));
}

double ibc_gclock_local(const struct ibc_gclock *g, double global_us)
{
	/* global = ref - offset + (local - ref) (1 - drift) */
	return g->ref_us + (global_us - g->ref_us + g->offset_us) / (1.0 - g->drift);
}

double ibc_gclock_now(const struct ibc_gclock *g)
{
	return ibc_gclock_global(g, ibc_timer_now_us());
}

const char *ibc_gclock_clocksource(void)
{
	static char buf[64];
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");

	snprintf(buf, sizeof(buf), "unknown");
	if (f != NULL) {
		if (fgets(buf, sizeof(buf), f) == NULL)
			snprintf(buf, sizeof(buf), "unknown");
		buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

/* --------------------------------------------- the node's cache lines ---- */
/* One line per local rank in a segment of the node leader; the leader pings
 * (odd sequence numbers), the rank answers with its clock and the next even
 * one. */
struct gc_line {
	_Alignas(CL) uint64_t seq;
	double b;
};

static int line_ping(struct gc_line *l, uint64_t *seq, enum ibc_wait w, struct pp *out)
{
	int rc;

	out->a1 = ibc_timer_now_us();
	__atomic_store_n(&l->seq, ++*seq, __ATOMIC_RELEASE);
	rc = ibc_wait_u64(&l->seq, ++*seq, w, GC_TIMEOUT_NS, NULL, NULL, NULL);
	out->a2 = ibc_timer_now_us();
	out->b = l->b; /* written before seq (release), read after it (acquire) */
	return rc;
}

static int line_pong(struct gc_line *l, uint64_t *seq, enum ibc_wait w, const struct ibc_gclock *g)
{
	int rc = ibc_wait_u64(&l->seq, ++*seq, w, GC_TIMEOUT_NS, NULL, NULL, NULL);

	if (rc != IBC_OK)
		return rc;
	l->b = g != NULL ? ibc_gclock_now(g) : ibc_timer_now_us();
	__atomic_store_n(&l->seq, ++*seq, __ATOMIC_RELEASE);
	return IBC_OK;
}

/* ------------------------------------------ across nodes: a channel ---- */
/* Ping-pongs between rank 0 (A) and a leader (B), over the transport (RDMA
 * writes into a small region: rank 0's word pair 64 r holds leader r's
 * answer {seq, b}, a leader's word pair 0 holds rank 0's ping) or over the
 * bootstrap (two broadcasts per round, every rank taking part). */
struct net_ch {
	struct ibc_boot *boot;
	struct ibc_xport *x;           /* NULL: the bootstrap */
	struct ibc_xport_mr *mr;
	struct ibc_xport_rdesc *rd;
	uint64_t *src;                 /* three source words after the areas */
	uint64_t seq;
	enum ibc_wait w;
};

static uint64_t *net_area(struct net_ch *c, int r)
{
	return (uint64_t *)(void *)((char *)c->mr->addr + (size_t)r * CL);
}

static int net_wc(struct net_ch *c)
{
	struct ibc_xport_wc wc;
	int rc = ibc_xport_cq_wait(c->x, IBC_XPORT_CQ_SEND, GC_TIMEOUT_NS, &wc);

	if (rc != IBC_OK)
		return rc;
	if (wc.status != IBC_OK) {
		ibc_error("gclock: a write of the clock exchange failed: %s", wc.reason);
		return IBC_ERR_REMOTE;
	}
	return IBC_OK;
}

static void net_write(struct net_ch *c, int peer, uint64_t *src, uint64_t off, int signaled,
		      struct ibc_xport_wr *wr, struct ibc_xport_sge *sge)
{
	*sge = (struct ibc_xport_sge){ (uint64_t)(uintptr_t)src, 8, c->mr->lkey };
	*wr = (struct ibc_xport_wr){ .opcode = IBC_XPORT_OP_WRITE, .peer = peer, .num_sge = 1,
				     .sge = sge, .remote_addr = c->rd[peer].addr + off,
				     .rkey = c->rd[peer].rkey,
				     .flags = (signaled ? IBC_XPORT_WR_SIGNALED : 0) |
					      (c->x->caps.max_inline >= 8 ? IBC_XPORT_WR_INLINE : 0) };
}

static int net_open(struct ibc_boot *b, struct ibc_xport *x, const int *leader, enum ibc_wait w,
		    struct net_ch *c)
{
	uint8_t *want = NULL;
	int rc, r;

	memset(c, 0, sizeof(*c));
	c->boot = b;
	c->x = x;
	c->w = w;
	if (x == NULL)
		return IBC_OK;
	c->rd = calloc((size_t)b->size, sizeof(*c->rd));
	want = calloc((size_t)b->size, 1);
	if (c->rd == NULL || want == NULL) {
		free(c->rd);
		free(want);
		return IBC_ERR_NOMEM;
	}
	/* rank 0 and each other leader (connect links a pair either side wants) */
	for (r = 1; b->rank == 0 && r < b->size; r++)
		want[r] = leader[r] == r;
	rc = ibc_xport_mr_alloc(x, (size_t)(b->size + 1) * CL, IBC_XPORT_ACCESS_ALL, &c->mr);
	/* every rank takes part in the exchange, even after a failure */
	{
		const struct ibc_xport_rdesc none = { 0 };

		if (ibc_xport_rdesc_allgather(x, c->mr != NULL ? &c->mr->rdesc : &none, c->rd) !=
			    IBC_OK && rc == IBC_OK)
			rc = IBC_ERR_CLOSED;
	}
	if (rc == IBC_OK)
		rc = ibc_xport_connect(x, want);
	free(want);
	if (rc != IBC_OK)
		return rc;
	c->src = net_area(c, b->size);
	return IBC_OK;
}

static void net_close(struct net_ch *c)
{
	if (c->mr != NULL)
		(void)ibc_xport_mr_dereg(c->x, c->mr);
	free(c->rd);
	c->mr = NULL;
	c->rd = NULL;
}

/* One round between rank 0 and leader l, on every rank (only the boot
 * channel needs the others).  B answers with g's time (NULL: local). */
static int net_round(struct net_ch *c, int l, const struct ibc_gclock *g, struct pp *out)
{
	struct ibc_boot *b = c->boot;
	struct ibc_xport_wr wr[2];
	struct ibc_xport_sge sge[2];
	double tb = 0;
	int rc = IBC_OK, posted;

	if (c->x == NULL) {
		uint64_t tok = 0;

		if (b->rank == 0)
			out->a1 = ibc_timer_now_us();
		rc = ibc_boot_bcast(b, &tok, sizeof(tok), 0);
		if (rc == IBC_OK && b->rank == l)
			tb = g != NULL ? ibc_gclock_now(g) : ibc_timer_now_us();
		if (rc == IBC_OK)
			rc = ibc_boot_bcast(b, &tb, sizeof(tb), l);
		if (b->rank == 0) {
			out->a2 = ibc_timer_now_us();
			out->b = tb;
		}
		return rc;
	}
	c->seq++;
	if (b->rank == 0) {
		uint64_t *in = net_area(c, l);

		c->src[0] = c->seq;
		net_write(c, l, &c->src[0], 0, 1, &wr[0], &sge[0]);
		out->a1 = ibc_timer_now_us();
		rc = ibc_xport_post(c->x, wr, 1, &posted);
		if (rc == IBC_OK)
			rc = ibc_xport_wait_u64(c->x, &in[0], c->seq, GC_TIMEOUT_NS, NULL);
		out->a2 = ibc_timer_now_us();
		memcpy(&out->b, &in[1], sizeof(double));
		if (rc == IBC_OK)
			rc = net_wc(c);
	} else if (b->rank == l) {
		uint64_t *in = net_area(c, 0);

		rc = ibc_xport_wait_u64(c->x, &in[0], c->seq, GC_TIMEOUT_NS, NULL);
		tb = g != NULL ? ibc_gclock_now(g) : ibc_timer_now_us();
		memcpy(&c->src[1], &tb, sizeof(double));
		c->src[2] = c->seq;
		/* the clock reading first, then the sequence number: ordered */
		net_write(c, 0, &c->src[1], (uint64_t)l * CL + 8, 0, &wr[0], &sge[0]);
		net_write(c, 0, &c->src[2], (uint64_t)l * CL, 1, &wr[1], &sge[1]);
		if (rc == IBC_OK)
			rc = ibc_xport_post(c->x, wr, 2, &posted);
		if (rc == IBC_OK)
			rc = net_wc(c);
	}
	if (rc == IBC_ERR_TIMEOUT)
		ibc_error("gclock: no answer in the clock exchange between rank 0 and rank %d", l);
	return rc;
}

/* ----------------------------------------------------------- fitting ---- */
/* ibc_gclock_fit (gclock.h).  The fit spans milliseconds and the model is
 * used for seconds: a slope made of noise (1e-3 from a bootstrap's 15 us
 * jitter over 15 ms) puts the clocks milliseconds apart by then.  Real
 * drifts are ppm, which the fresh fit at every point keeps small, so a
 * drift must be far beyond what noise makes: t beyond the 1e-4 two-sided
 * quantile (13.0 for six points, against 3 before; with 3, hosts.t saw
 * samples grow from 258 to 490 us over one point, a 660 ppm slope between
 * two processes of one machine, whose TSC calibrations agreed within 2 ppm). */
#define GC_DRIFT_ALPHA 1e-4

void ibc_gclock_fit(const double *x, const double *y, int n, struct ibc_gclock *m,
		    double *resid)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, ss = 0;
	int i;

	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	m->ref_us = mx;
	m->drift = sxx > 0 ? sxy / sxx : 0;
	m->offset_us = my;
	for (i = 0; i < n; i++) {
		double e = y[i] - (my + m->drift * (x[i] - mx));

		ss += e * e;
	}
	*resid = n > 2 ? sqrt(ss / (n - 2)) : 0;
	if (n <= 2 || sxx <= 0 ||
	    fabs(m->drift) <= gsl_cdf_tdist_Qinv(GC_DRIFT_ALPHA / 2, n - 2) * *resid / sqrt(sxx)) {
		m->drift = 0;
		for (ss = 0, i = 0; i < n; i++)
			ss += (y[i] - my) * (y[i] - my);
		*resid = n > 1 ? sqrt(ss / (n - 1)) : 0;
	}
}

/* Leaders' models against rank 0; *resid = this leader's fit residual. */
static int fit_leaders(struct net_ch *c, const int *leader, struct ibc_gclock *mine, double *resid)
{
	struct ibc_boot *b = c->boot;
	double x[GC_FIT_GROUPS], y[GC_FIT_GROUPS];
	int l, grp, k, rc = IBC_OK;

	*resid = 0;
	for (l = 1; l < b->size && rc == IBC_OK; l++) {
		if (leader[l] != l)
			continue;
		for (grp = 0; grp < GC_FIT_GROUPS && rc == IBC_OK; grp++) {
			struct pp best = { 0, 0, INFINITY };

			for (k = 0; k < GC_FIT_ROUNDS && rc == IBC_OK; k++) {
				struct pp p = { 0, 0, 0 };

				rc = net_round(c, l, NULL, &p);
				if (b->rank == 0 && p.a2 - p.a1 < best.a2 - best.a1)
					best = p;
			}
			/* rank 0 tells the leader its best point of the group */
			if (rc == IBC_OK) {
				double pt[2] = { best.b, best.b - (best.a1 + best.a2) / 2 };

				rc = ibc_boot_bcast(b, pt, sizeof(pt), 0);
				x[grp] = pt[0];
				y[grp] = pt[1];
			}
			if (rc == IBC_OK)
				nanosleep(&(struct timespec){ 0, GC_GROUP_GAP_NS }, NULL);
		}
		if (rc == IBC_OK && b->rank == l)
			ibc_gclock_fit(x, y, GC_FIT_GROUPS, mine, resid);
	}
	return rc;
}

/* ------------------------------------------------------------- check ---- */
struct verdict {
	double excess, bound, rtt, resid;
	int32_t worst_rank, pad;
};

/* The leader of each node checks its ranks, in global time. */
static int check_node(struct ibc_boot *b, const int *leader, const int *nodes, int nnodes,
		      enum ibc_wait w, const struct ibc_gclock *g, struct verdict *v)
{
	size_t len = (size_t)b->size * sizeof(struct gc_line);
	struct gc_line *lines = NULL;
	int k, r, i, rc = IBC_OK, rc2;

	for (k = 0; k < nnodes; k++) {
		void *map = NULL;
		int mine = leader[b->rank] == nodes[k];

		rc2 = ibc_boot_shm_map(b, nodes[k], "gclock", len, mine, &map);
		if (rc2 != IBC_OK)
			rc = rc2;
		if (mine)
			lines = map;
	}
	if (rc != IBC_OK) {
		if (lines != NULL)
			munmap(lines, len);
		return rc;
	}
	if (b->rank == leader[b->rank]) {
		for (r = 0; r < b->size && rc == IBC_OK; r++) {
			struct ibc_gclock_evidence best;
			uint64_t seq = 0;

			if (r == b->rank || leader[r] != b->rank)
				continue;
			ibc_gclock_evidence_init(&best);
			for (i = 0; i < GC_CHECK_ROUNDS_NODE && rc == IBC_OK; i++) {
				struct pp p;

				rc = line_ping(&lines[r], &seq, w, &p);
				p.a1 = ibc_gclock_global(g, p.a1);
				p.a2 = ibc_gclock_global(g, p.a2);
				ibc_gclock_evidence_add(&best, p.a1, p.b, p.a2);
			}
			if (rc == IBC_OK && best.excess > v->excess) {
				v->excess = best.excess;
				v->worst_rank = r;
			}
			if (rc == IBC_OK && best.bound > v->bound)
				v->bound = best.bound;
			if (rc == IBC_OK && best.rtt < v->rtt)
				v->rtt = best.rtt;
		}
	} else {
		uint64_t seq = 0;

		for (i = 0; i < GC_CHECK_ROUNDS_NODE && rc == IBC_OK; i++)
			rc = line_pong(&lines[b->rank], &seq, w, g);
	}
	if (rc == IBC_ERR_TIMEOUT)
		ibc_error("gclock: the clock check within a node timed out");
	munmap(lines, len);
	return rc;
}

/* Rank 0 checks the leaders, in global time. */
static int check_net(struct net_ch *c, const int *leader, const struct ibc_gclock *g,
		     struct verdict *v)
{
	struct ibc_boot *b = c->boot;
	int l, i, rc = IBC_OK;

	for (l = 1; l < b->size && rc == IBC_OK; l++) {
		struct ibc_gclock_evidence best;

		if (leader[l] != l)
			continue;
		ibc_gclock_evidence_init(&best);
		for (i = 0; i < GC_CHECK_ROUNDS_NET && rc == IBC_OK; i++) {
			struct pp p = { 0, 0, 0 };

			rc = net_round(c, l, g, &p);
			if (b->rank == 0)
				ibc_gclock_evidence_add(&best, p.a1, p.b, p.a2);
		}
		if (rc != IBC_OK || b->rank != 0)
			continue;
		if (best.excess > v->excess) {
			v->excess = best.excess;
			v->worst_rank = l;
		}
		if (best.bound > v->bound)
			v->bound = best.bound;
		if (best.rtt < v->rtt)
			v->rtt = best.rtt;
	}
	return rc;
}

/* --------------------------------------------------------------- sync ---- */
static void mutant_apply(const struct ibc_boot *b, struct ibc_gclock *g)
{
	const char *m = getenv("IBC_GCLOCK_MUTANT");
	int rank;
	double us;

	if (m != NULL && sscanf(m, "%d:%lf", &rank, &us) == 2 && rank == b->rank) {
		ibc_warn("gclock: IBC_GCLOCK_MUTANT shifts rank %d's clock model by %g us", rank, us);
		g->offset_us -= us;
	}
}

int ibc_gclock_sync(struct ibc_boot *b, struct ibc_xport *x, enum ibc_wait w,
		    struct ibc_gclock *g)
{
	struct {
		int32_t node, local_rank;
	} me = { b->node_id, b->local_rank }, *info = NULL;
	struct verdict v = { -INFINITY, 0, INFINITY, 0, -1, 0 }, *all = NULL;
	struct net_ch c;
	double (*lm)[4] = NULL, resid = 0;
	int *leader = NULL, *nodes = NULL, nnodes = 0, r, k, rc;
	const char *src = ibc_timer_source_name();

	memset(g, 0, sizeof(*g));
	g->ok = 1;
	g->worst_rank = -1;
	memset(&c, 0, sizeof(c));
	if (b->size == 1) {
		snprintf(g->method, sizeof(g->method), "one rank (%s)", src);
		return IBC_OK;
	}
	info = calloc((size_t)b->size, sizeof(*info));
	leader = calloc((size_t)b->size, sizeof(*leader));
	nodes = calloc((size_t)b->size, sizeof(*nodes));
	lm = calloc((size_t)b->size, sizeof(*lm));
	all = calloc((size_t)b->size, sizeof(*all));
	if (info == NULL || leader == NULL || nodes == NULL || lm == NULL || all == NULL) {
		rc = IBC_ERR_NOMEM; /* the others block in the allgather: best effort */
		goto out_free;
	}
	rc = ibc_boot_allgather(b, &me, info, sizeof(me));
	if (rc != IBC_OK)
		goto out_free;
	/* leader[r]: the global rank of r's node leader (local rank 0) */
	for (r = 0; r < b->size; r++)
		if (info[r].local_rank == 0)
			nodes[nnodes++] = r;
	for (r = 0; r < b->size; r++) {
		leader[r] = -1;
		for (k = 0; k < nnodes; k++)
			if (info[nodes[k]].node == info[r].node)
				leader[r] = nodes[k];
		if (leader[r] < 0) {
			if (b->rank == 0)
				ibc_error("gclock: rank %d's node has no local rank 0", r);
			rc = IBC_ERR_PROTO;
			goto out_free;
		}
	}
	if (leader[0] != 0) {
		if (b->rank == 0)
			ibc_error("gclock: rank 0 is not its node's local rank 0");
		rc = IBC_ERR_PROTO;
		goto out_free;
	}

	/* across nodes: fit the leaders against rank 0 */
	if (nnodes > 1) {
		rc = net_open(b, x, leader, w, &c);
		if (rc == IBC_OK)
			rc = fit_leaders(&c, leader, g, &resid);
		if (rc != IBC_OK)
			goto out_close;
		snprintf(g->method, sizeof(g->method), "linear fit over %s %s (%s)",
			 x != NULL ? "xport" : "bootstrap", x != NULL ? x->caps.backend : b->ops->name,
			 src);
	} else {
		snprintf(g->method, sizeof(g->method), "shared by one node (%s)", src);
	}
	/* the node's ranks share their leader's model and its TSC calibration
	 * (calibrated apart, under a launcher or MPI, not fork, processes differ
	 * by a few ppm: milliseconds over the count since boot); only leaders
	 * have timed anything so far */
	{
		double mine[4] = { g->offset_us, g->drift, g->ref_us, ibc_timer_tsc_ghz() };

		rc = ibc_boot_allgather(b, mine, lm, sizeof(mine));
		if (rc != IBC_OK)
			goto out_close;
		g->offset_us = lm[leader[b->rank]][0];
		g->drift = lm[leader[b->rank]][1];
		g->ref_us = lm[leader[b->rank]][2];
		ibc_timer_tsc_ghz_set(lm[leader[b->rank]][3]);
	}
	mutant_apply(b, g);

	/* the check, in global time */
	v.resid = resid;
	rc = check_node(b, leader, nodes, nnodes, w, g, &v);
	if (rc == IBC_OK && nnodes > 1)
		rc = check_net(&c, leader, g, &v);
	if (rc != IBC_OK)
		goto out_close;
	rc = ibc_boot_gather(b, &v, all, sizeof(v), 0);
	if (rc != IBC_OK)
		goto out_close;
	if (b->rank == 0) {
		struct verdict t = { -INFINITY, 0, INFINITY, 0, -1, 0 };

		for (r = 0; r < b->size; r++) {
			if (all[r].excess > t.excess) {
				t.excess = all[r].excess;
				t.worst_rank = all[r].worst_rank;
			}
			if (all[r].bound > t.bound)
				t.bound = all[r].bound;
			if (all[r].rtt < t.rtt)
				t.rtt = all[r].rtt;
			if (all[r].resid > t.resid)
				t.resid = all[r].resid;
		}
		v = t;
	}
	rc = ibc_boot_bcast(b, &v, sizeof(v), 0);
	if (rc != IBC_OK)
		goto out_close;
	g->err_us = v.bound;
	g->rtt_us = v.rtt;
	g->resid_us = v.resid;
	g->worst_rank = v.worst_rank;
	if (v.excess > GC_EPS_US + 3 * v.resid) {
		g->ok = 0;
		snprintf(g->why, sizeof(g->why),
			 "clock check failed: rank %d is %.3f us further from rank 0 than its round "
			 "trip allows (the fastest took %.3f us; %s)", v.worst_rank, v.excess, v.rtt,
			 g->method);
	}
out_close:
	net_close(&c);
out_free:
	free(info);
	free(leader);
	free(nodes);
	free(lm);
	free(all);
	return rc;
}
