/* The cost models of Sur et al. with parameters measured here
 * (alltoall_model.h). */
#include "alltoall/alltoall_model.h"

#include "alltoall/alltoall_impl.h"
#include "boot/boot.h"
#include "core/csv.h"
#include "core/log.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/timer.h"
#include "pattern/pattern.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PP_MAX (1 << 20)
#define PP_FLAG PP_MAX              /* the flag word after the data */
#define PP_SRC (PP_MAX + 64)        /* the local source of the data */
#define PP_SEQ (2 * PP_MAX + 128)   /* the local source of the flag */
#define PP_LEN (2 * PP_MAX + 192)
#define WAIT_NS 10000000000LL

static const size_t pp_sizes[] = { 8, 4096, 65536, 262144, 1 << 20 };
#define NPP (sizeof(pp_sizes) / sizeof(pp_sizes[0]))

/* One round from me to peer: data (m bytes) and the flag behind it. */
static int pp_send(struct ibc_xport *x, struct ibc_xport_mr *mr, const struct ibc_xport_rdesc *rd,
		   int peer, size_t m, uint64_t seq)
{
	unsigned char *base = mr->addr;
	struct ibc_xport_sge data = { (uintptr_t)(base + PP_SRC), (uint32_t)m, mr->lkey };
	struct ibc_xport_sge flag = { (uintptr_t)(base + PP_SEQ), 8, mr->lkey };
	struct ibc_xport_wr w[2];
	struct ibc_xport_wc wc;
	int posted, rc;

	memset(w, 0, sizeof(w));
	*(uint64_t *)(base + PP_SEQ) = seq;
	w[0].opcode = w[1].opcode = IBC_XPORT_OP_WRITE;
	w[0].peer = w[1].peer = peer;
	w[0].num_sge = w[1].num_sge = 1;
	w[0].sge = &data;
	w[1].sge = &flag;
	w[0].remote_addr = rd->addr;
	w[1].remote_addr = rd->addr + PP_FLAG;
	w[0].rkey = w[1].rkey = rd->rkey;
	w[0].flags = m <= x->caps.max_inline ? IBC_XPORT_WR_INLINE : 0;
	w[1].flags = IBC_XPORT_WR_SIGNALED;
	rc = ibc_xport_post(x, w, 2, &posted);
	if (rc == IBC_OK)
		rc = ibc_xport_cq_wait(x, IBC_XPORT_CQ_SEND, WAIT_NS, &wc);
	return rc == IBC_OK ? wc.status : rc;
}

/* Rank 0: median one-way time of a write + flag at m bytes; rank 1 echoes.
 * read: each side also copies the data it received out of the region
 * before it goes on (on shm the lines come from the writer's cache: what
 * HRWG's receiver pays when it copies out or forwards a block). */
static int pingpong(struct ibc_xport *x, struct ibc_xport_mr *mr, const struct ibc_xport_rdesc *all,
		    size_t m, int rounds, int read, uint64_t *seq, double *oneway)
{
	volatile uint64_t *flag = (uint64_t *)((unsigned char *)mr->addr + PP_FLAG);
	double *t = calloc((size_t)rounds, sizeof(double));
	unsigned char *scratch = read ? malloc(m) : NULL;
	struct ibc_stats st;
	int i, rc = IBC_OK, peer = 1 - x->rank;

	if (t == NULL || (read && scratch == NULL)) {
		free(t);
		return IBC_ERR_NOMEM;
	}
	for (i = 0; i < rounds && rc == IBC_OK; i++) {
		uint64_t s = ++*seq;
		double t0 = ibc_timer_now_us();

		if (x->rank == 0) {
			rc = pp_send(x, mr, &all[peer], peer, m, s);
			if (rc == IBC_OK)
				rc = ibc_xport_wait_u64(x, (const uint64_t *)flag, s, WAIT_NS, NULL);
			if (rc == IBC_OK && read)
				memcpy(scratch, mr->addr, m);
		} else {
			rc = ibc_xport_wait_u64(x, (const uint64_t *)flag, s, WAIT_NS, NULL);
			if (rc == IBC_OK && read)
				memcpy(scratch, mr->addr, m);
			if (rc == IBC_OK)
				rc = pp_send(x, mr, &all[peer], peer, m, s);
		}
		t[i] = (ibc_timer_now_us() - t0) / 2;
	}
	free(scratch);
	if (rc == IBC_OK && (rc = ibc_stats_compute_inplace(t + rounds / 5, (size_t)(rounds - rounds / 5),
							    &st)) == IBC_OK)
		*oneway = st.p50;
	free(t);
	return rc;
}

/* The write ping-pong into the peer's registered memory: mr_alloc'd (the
 * collective buffers: on shm a shared segment) or user memory registered
 * with mr_reg (DE's receive buffer: on shm reached by process_vm_writev). */
static int measure_write(struct ibc_xport *x, int user, double *ts, double *tw, double *resid,
			 double *px, double *py, double *pr)
{
	struct ibc_xport_rdesc *all = calloc((size_t)x->size, sizeof(*all));
	struct ibc_xport_mr *mr = NULL;
	double xs[NPP], ys[NPP];
	void *mem = NULL;
	uint64_t seq = 0;
	size_t i;
	int rc, rc2;
	unsigned acc = IBC_XPORT_ACCESS_LOCAL_WRITE | IBC_XPORT_ACCESS_REMOTE_WRITE;

	if (all == NULL)
		return IBC_ERR_NOMEM;
	if (!user) {
		rc = ibc_xport_mr_alloc(x, PP_LEN, acc, &mr);
	} else if (posix_memalign(&mem, 4096, PP_LEN) == 0) {
		memset(mem, 0, PP_LEN);
		rc = ibc_xport_mr_reg(x, mem, PP_LEN, acc, &mr);
	} else {
		rc = IBC_ERR_NOMEM;
	}
	if (rc == IBC_OK)
		rc = ibc_xport_rdesc_allgather(x, &mr->rdesc, all);
	if (rc == IBC_OK)
		rc = ibc_xport_connect(x, NULL);
	for (i = 0; i < NPP && rc == IBC_OK && x->rank < 2; i++) {
		int rounds = pp_sizes[i] > 8192 ? 40 : 300;

		xs[i] = (double)pp_sizes[i];
		rc = pingpong(x, mr, all, pp_sizes[i], rounds, 0, &seq, &ys[i]);
		if (rc == IBC_OK && pr != NULL)
			rc = pingpong(x, mr, all, pp_sizes[i], rounds, 1, &seq, &pr[i]);
	}
	if (rc == IBC_OK && x->rank == 0) {
		rc = ibc_stats_line_fit(xs, ys, NPP, ts, tw, resid);
		*ts = ys[0] - *tw * xs[0]; /* the startup: the smallest write's time */
		memcpy(px, xs, sizeof(xs));
		memcpy(py, ys, sizeof(ys));
	}
	rc2 = ibc_boot_barrier(x->boot);
	if (mr)
		(void)ibc_xport_mr_dereg(x, mr);
	free(mem);
	free(all);
	return rc ? rc : rc2;
}

/* memcpy of 4 KiB .. 4 MiB between two buffers (the copies of HRWG and of
 * the two-sided baselines): the line's slope, per byte */
static int measure_copy(struct ibc_alltoall_model *md)
{
	static const size_t sizes[] = { 4096, 65536, 262144, 1 << 20, 4 << 20 };
	double xs[5], ys[5], t[7], a, resid;

	_Static_assert(sizeof(md->c_x) >= sizeof(xs), "copy points");
	unsigned char *src = NULL, *dst = NULL;
	struct ibc_stats st;
	int i, k, rc = IBC_OK;

	if (posix_memalign((void **)&src, 4096, 4 << 20) || posix_memalign((void **)&dst, 4096, 4 << 20)) {
		free(src);
		return IBC_ERR_NOMEM;
	}
	memset(src, 1, 4 << 20);
	memset(dst, 2, 4 << 20);
	for (i = 0; i < 5 && rc == IBC_OK; i++) {
		for (k = 0; k < 7; k++) {
			double t0 = ibc_timer_now_us();

			memcpy(dst, src, sizes[i]);
			t[k] = ibc_timer_now_us() - t0;
		}
		rc = ibc_stats_compute(t, 7, &st);
		xs[i] = (double)sizes[i];
		ys[i] = st.p50;
	}
	if (rc == IBC_OK)
		rc = ibc_stats_line_fit(xs, ys, 5, &a, &md->tcopy, &resid);
	memcpy(md->c_x, xs, sizeof(xs));
	memcpy(md->c_y, ys, sizeof(ys));
	md->nc = 5;
	free(src);
	free(dst);
	return rc;
}

/* Rank 0 and 1: median time of an 8-byte exchange, eager or rendezvous. */
static int measure_p2p(struct ibc_xport *x, size_t eager, struct ibc_alltoall_model *md)
{
	struct ibc_alltoall_params ap;
	struct ibc_alltoall *a = NULL;
	unsigned char *sb = NULL, *rb = NULL;
	double t[2][200];
	int rc, rc2, k, i, peer = 1 - x->rank;

	ibc_alltoall_params_init(&ap);
	ap.eager_max = eager;
	rc = ibc_alltoall_create(x, "pairwise", &ap, &a);
	if (rc == IBC_OK)
		rc = ibc_alltoall_setup(a);
	if (rc == IBC_OK && (posix_memalign((void **)&sb, 4096, 4096) ||
			     posix_memalign((void **)&rb, 4096, 4096)))
		rc = IBC_ERR_NOMEM;
	for (k = 0; k < 2 && rc == IBC_OK && x->rank < 2; k++)
		for (i = 0; i < 200 && rc == IBC_OK; i++) {
			double t0 = ibc_timer_now_us();

			rc = a2a_sendrecv(a, peer, sb, 8, peer, rb, 8, k);
			if (rc == IBC_OK)
				rc = a2a_drain(a);
			t[k][i] = ibc_timer_now_us() - t0;
		}
	if (rc == IBC_OK && x->rank == 0) {
		struct ibc_stats s0, s1;

		rc = ibc_stats_compute(t[0] + 40, 160, &s0);
		if (rc == IBC_OK)
			rc = ibc_stats_compute(t[1] + 40, 160, &s1);
		md->ts2 = s0.p50;
		md->trndz = s1.p50;
	}
	rc2 = a ? ibc_alltoall_destroy(a) : IBC_OK;
	free(sb);
	free(rb);
	return rc ? rc : rc2;
}

static int measure_reg(struct ibc_xport *x, struct ibc_alltoall_model *md)
{
	static const size_t sizes[] = { 4096, 65536, 262144, 1 << 20, 4 << 20 };
	double xs[5], ys[5], t[5];
	struct ibc_stats st;
	int i, k, rc = IBC_OK;

	for (i = 0; i < 5 && rc == IBC_OK; i++) {
		for (k = 0; k < 5 && rc == IBC_OK; k++) {
			struct ibc_xport_mr *mr;
			void *buf;
			double t0;

			if (posix_memalign(&buf, 4096, sizes[i]))
				return IBC_ERR_NOMEM;
			memset(buf, k, sizes[i]);
			t0 = ibc_timer_now_us();
			rc = ibc_xport_mr_reg(x, buf, sizes[i], IBC_XPORT_ACCESS_LOCAL_WRITE |
					      IBC_XPORT_ACCESS_REMOTE_WRITE | IBC_XPORT_ACCESS_REMOTE_READ,
					      &mr);
			t[k] = ibc_timer_now_us() - t0;
			if (rc == IBC_OK)
				rc = ibc_xport_mr_dereg(x, mr);
			free(buf);
		}
		if (rc == IBC_OK)
			rc = ibc_stats_compute(t, 5, &st);
		xs[i] = (double)sizes[i];
		ys[i] = st.p50;
	}
	if (rc == IBC_OK)
		rc = ibc_stats_line_fit(xs, ys, 5, &md->tcreg, &md->twreg, &md->resid_reg);
	return rc;
}

int ibc_alltoall_model_measure(struct ibc_xport *x, size_t eager, struct ibc_alltoall_model *out)
{
	int rc = IBC_OK;

	memset(out, 0, sizeof(*out));
	out->ranks = x->size;
	if (x->size < 2)
		return IBC_OK;
	out->nw = (int)NPP;
	rc = measure_write(x, 0, &out->ts, &out->tw, &out->resid_w, out->w_x, out->w_y, out->r_y);
	if (rc == IBC_OK)
		rc = measure_write(x, 1, &out->ts_u, &out->tw_u, &out->resid_u, out->w_x, out->u_y,
				   NULL);
	if (rc == IBC_OK)
		rc = measure_p2p(x, eager, out);
	if (rc == IBC_OK && x->rank == 0)
		rc = measure_reg(x, out);
	if (rc == IBC_OK && x->rank == 0)
		rc = measure_copy(out);
	out->valid = rc == IBC_OK;
	if (rc == IBC_OK)
		rc = ibc_boot_bcast(x->boot, out, sizeof(*out), 0);
	if (rc)
		ibc_error("alltoall: measuring the model's parameters: %s", ibc_status_str(rc));
	return rc;
}

/* eq. 1 over a combining schedule: sum over steps of (t0 + tw * moved * m) */
static double comb_time(enum ibc_pattern_comb kind, int p, size_t m, double t0, double tw)
{
	int s, n = ibc_pattern_comb_nsteps(kind, p);
	double t = 0;

	for (s = 0; s < n; s++)
		t += t0 + tw * (double)ibc_pattern_comb_nmoves(kind, p, s) * (double)m;
	return t;
}

/* y at x, linear between measured points; below the first: y0 (from0 = 0)
 * or y0 x / x0 (from0 = 1); beyond the last: the last segment's slope */
static double interp(const double *px, const double *py, int n, double v, int from0)
{
	int i;

	if (n < 2)
		return n == 1 ? py[0] : 0;
	if (v <= px[0])
		return from0 ? py[0] * v / px[0] : py[0];
	for (i = 1; i < n - 1 && v > px[i]; i++)
		;
	return py[i - 1] + (py[i] - py[i - 1]) * (v - px[i - 1]) / (px[i] - px[i - 1]);
}

static double wtime(const struct ibc_alltoall_model *md, double b)
{
	return interp(md->w_x, md->w_y, md->nw, b, 0);
}

static double utime(const struct ibc_alltoall_model *md, double b)
{
	return interp(md->w_x, md->u_y, md->nw, b, 0);
}

/* reading b bytes another process has just written (the read ping-pong's
 * extra time over the plain one) */
static double rtime(const struct ibc_alltoall_model *md, double b)
{
	double d = interp(md->w_x, md->r_y, md->nw, b, 0) - wtime(md, b);

	return d > 0 ? d : 0;
}

static double ctime_(const struct ibc_alltoall_model *md, double b)
{
	return interp(md->c_x, md->c_y, md->nc, b, 1);
}

/* a two-sided message of b bytes as a2a_sendrecv sends it: eager copies it
 * twice (into the send slot, out of the receive slot) besides the send,
 * rendezvous writes it into the receiver's registered memory */
static double msg_time(const struct ibc_alltoall_model *md, double b, size_t eager)
{
	if (b <= (double)eager)
		return md->ts2 + wtime(md, b) - wtime(md, 8) + 2 * ctime_(md, b);
	return md->trndz + utime(md, b) - utime(md, 8);
}

double ibc_alltoall_model_literal(const struct ibc_alltoall_model *md, const char *alg, int p,
				  size_t m, size_t eager, int reuse, const char **eq)
{
	double q = (double)(p - 1), dm = (double)m, t = -1;
	const char *e = NULL;
	int pow2 = ibc_pattern_pow2_is(p);

	if (!md->valid || p < 1 || alg == NULL)
		return -1;
	if (strcmp(alg, "hrwg") == 0 || strcmp(alg, "hrwg-multi") == 0) {
		t = comb_time(pow2 ? IBC_PATTERN_COMB_HCUBE : IBC_PATTERN_COMB_BRUCK, p, m, md->ts,
			      md->tw);
		e = "1";
	} else if ((strcmp(alg, "hypercube") == 0 && pow2) || strcmp(alg, "bruck") == 0) {
		t = comb_time(pow2 && alg[0] == 'h' ? IBC_PATTERN_COMB_HCUBE : IBC_PATTERN_COMB_BRUCK,
			      p, m, md->ts2, md->tw);
		e = "1";
	} else if (strcmp(alg, "pairwise") == 0 && m <= eager) {
		t = q * (md->ts2 + md->tw * dm);
		e = "2";
	} else if (strcmp(alg, "pairwise") == 0 || strcmp(alg, "direct") == 0) {
		t = q * (md->trndz + md->tw * dm);
		if (!reuse)
			t += q * (md->tcreg + dm * md->twreg);
		e = "3";
	} else if (strcmp(alg, "de") == 0) {
		t = md->tw * dm * q;
		if (!reuse)
			t += md->tcreg + q * dm * md->twreg;
		e = "4";
	}
	if (eq)
		*eq = e;
	return t;
}

double ibc_alltoall_model_predict(const struct ibc_alltoall_model *md, const char *alg, int p,
				  size_t m, size_t eager, int reuse, const char **eq)
{
	double q = (double)(p - 1), dm = (double)m, pm = (double)p * dm, t = -1;
	int pow2 = ibc_pattern_pow2_is(p), s, n;
	enum ibc_pattern_comb kind;
	const char *e = NULL;

	if (!md->valid || p < 1 || alg == NULL)
		return -1;
	if (strcmp(alg, "hrwg") == 0 || strcmp(alg, "hrwg-multi") == 0) {
		/* eq. 1's steps, the copy in, and the received blocks read
		 * where they landed (to forward or to copy out) */
		kind = pow2 ? IBC_PATTERN_COMB_HCUBE : IBC_PATTERN_COMB_BRUCK;
		n = ibc_pattern_comb_nsteps(kind, p);
		for (t = 2 * ctime_(md, pm), s = 0; s < n; s++) {
			double b = (double)ibc_pattern_comb_nmoves(kind, p, s) * dm;

			t += wtime(md, b) + rtime(md, b);
		}
		e = "1+copy+reads";
	} else if ((strcmp(alg, "hypercube") == 0 && pow2) || strcmp(alg, "bruck") == 0) {
		/* per step a message of the moved blocks, packed and unpacked */
		kind = pow2 && alg[0] == 'h' ? IBC_PATTERN_COMB_HCUBE : IBC_PATTERN_COMB_BRUCK;
		n = ibc_pattern_comb_nsteps(kind, p);
		for (t = 2 * ctime_(md, pm), s = 0; s < n; s++) {
			double b = (double)ibc_pattern_comb_nmoves(kind, p, s) * dm;

			t += msg_time(md, b, eager) + 2 * ctime_(md, b);
		}
		e = "1+copies";
	} else if (strcmp(alg, "pairwise") == 0 || strcmp(alg, "direct") == 0) {
		t = alg[0] == 'd' ? q * (md->trndz + utime(md, dm) - utime(md, 8))
				  : q * msg_time(md, dm, eager);
		t += ctime_(md, dm);
		if (!reuse && (alg[0] == 'd' || m > eager))
			t += q * (md->tcreg + dm * md->twreg);
		e = alg[0] == 'd' || m > eager ? "3" : "2";
	} else if (strcmp(alg, "de") == 0) {
		/* eq. 4 with the startups it leaves out: the first address's
		 * latency, then a zero-copy write into user memory per step */
		t = wtime(md, 24) + q * utime(md, dm) + ctime_(md, dm);
		if (!reuse)
			t += md->tcreg + pm * md->twreg;
		e = "4+startup";
	}
	if (eq)
		*eq = e;
	return t;
}

/* ------------------------------------------------------ writing rows --- */

static int csv_append(const char *dir, const char *name, const char *const *cols, size_t ncols,
		      struct ibc_csv_writer **w)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return ibc_csv_writer_open(path, cols, ncols, 1, w);
}

static double cell_num(const struct ibc_csv_table *t, size_t r, const char *col)
{
	const char *c = ibc_csv_cell(t, r, col);

	return c && *c ? strtod(c, NULL) : -1;
}

static int write_params(const char *dir, const char *run_id, const char *xport,
			const struct ibc_alltoall_model *md)
{
	static const char *const cols[] = { "run_id", "ranks", "xport", "param", "value", "unit",
					     "how" };
	const struct { const char *name; double v; const char *unit, *how; } ps[] = {
		{ "ts", md->ts, "us", "RDMA write + flag, one-way, 8 B (ping-pong median)" },
		{ "tw", md->tw, "us/B", "slope of the write's one-way time, 8 B..1 MiB (least squares)" },
		{ "tw_resid", md->resid_w, "us", "that fit's residual standard deviation" },
		{ "ts_u", md->ts_u, "us", "the same into user memory (mr_reg; DE's receive buffer)" },
		{ "tw_u", md->tw_u, "us/B", "its slope" },
		{ "tw_u_resid", md->resid_u, "us", "that fit's residual standard deviation" },
		{ "tcopy", md->tcopy, "us/B", "memcpy 4 KiB..4 MiB, slope (least squares)" },
		{ "tread_1M", md->nw > 0 ? md->r_y[md->nw - 1] - md->w_y[md->nw - 1] : 0, "us",
		  "reading 1 MiB the peer has just written: the read ping-pong's extra time" },
		{ "ts2", md->ts2, "us", "two-sided eager exchange of 8 B (median)" },
		{ "trndz", md->trndz, "us", "two-sided rendezvous exchange of 8 B (median)" },
		{ "tcreg", md->tcreg, "us", "registration, intercept of 4 KiB..4 MiB (least squares)" },
		{ "twreg", md->twreg, "us/B", "registration, slope per byte" },
		{ "twreg_page", md->twreg * 4096, "us/page", "registration per 4 KiB page" },
		{ "reg_resid", md->resid_reg, "us", "that fit's residual standard deviation" },
	};
	struct ibc_csv_writer *w = NULL;
	char ranks[16], val[32];
	size_t i;
	int rc = csv_append(dir, "alltoall_model.csv", cols, 7, &w);

	snprintf(ranks, sizeof(ranks), "%d", md->ranks);
	for (i = 0; rc == IBC_OK && i < sizeof(ps) / sizeof(ps[0]); i++) {
		const char *f[7] = { run_id, ranks, xport, ps[i].name, val, ps[i].unit, ps[i].how };

		snprintf(val, sizeof(val), "%.6g", ps[i].v);
		rc = ibc_csv_writer_row(w, f);
	}
	if (w && ibc_csv_writer_close(w) && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc;
}

/* The model rows of this run at md->ranks, appended to results.csv. */
static int write_rows(const char *dir, const struct ibc_csv_table *t, const char *run_id,
		      const struct ibc_alltoall_model *md, size_t eager)
{
	const char **cols = calloc(t->ncols, sizeof(char *)), **f = calloc(t->ncols, sizeof(char *));
	static const char *const blank[] = { "iters", "warmup", "min_us", "p99_us", "max_us",
					     "stdev_us", "ci_lo_us", "ci_hi_us", "skew_us" };
	struct ibc_csv_writer *w = NULL;
	size_t r, c, k;
	int rc = IBC_OK;

	if (cols == NULL || f == NULL) {
		free(cols);
		free(f);
		return IBC_ERR_NOMEM;
	}
	for (c = 0; c < t->ncols; c++)
		cols[c] = t->cells[c];
	rc = csv_append(dir, "results.csv", cols, t->ncols, &w);
	for (r = 0; rc == IBC_OK && r + 1 < t->nrows; r++) {
		const char *eq = NULL, *leq = NULL, *extra = ibc_csv_cell(t, r, "extra");
		static const char *const loop[] = { "b2b_p50_us", "paper_us" };
		const char *as = NULL;
		double meas = cell_num(t, r, "p50_us"), b2b, mean, pred, lit;
		char c_pred[32], c_extra[512], c_b2b[160] = "", c_mean[48] = "", c_lerr[48] = "";

		if (strcmp(ibc_csv_str(t, r, "run_id"), run_id) != 0 ||
		    strcmp(ibc_csv_str(t, r, "suite"), "alltoall") != 0 ||
		    strcmp(ibc_csv_str(t, r, "impl"), "ibchar") != 0 ||
		    (int)cell_num(t, r, "ranks") != md->ranks || meas <= 0)
			continue;
		pred = ibc_alltoall_model_predict(md, ibc_csv_cell(t, r, "variant"), md->ranks,
						  (size_t)cell_num(t, r, "bytes"), eager, 1, &eq);
		if (pred < 0) /* not an algorithm of the model */
			continue;
		if (!(pred > 0) || !isfinite(pred)) {
			printf("alltoall model: %s N = %d, %s B: no prediction (the fitted model "
			       "gives %.4g us: a time <= 0 is not physical)\n",
			       ibc_csv_str(t, r, "variant"), md->ranks, ibc_csv_str(t, r, "bytes"), pred);
			continue;
		}
		/* the models are of calls back to back (the paper's figures), and
		 * their parameters are medians (of ping-pongs): err_pct is against
		 * the loop's median (b2b_p50_us), else its mean (paper_us),
		 * measured_as naming which; err_mean_pct against the mean beside a
		 * median; err_p50_pct against the row's p50.  A row without a loop
		 * has no err_pct (not 0: nothing was compared) */
		b2b = ibc_csv_extra_first(extra, loop, 2, &as);
		mean = ibc_csv_extra_num(extra, "paper_us");
		lit = ibc_alltoall_model_literal(md, ibc_csv_cell(t, r, "variant"), md->ranks,
						 (size_t)cell_num(t, r, "bytes"), eager, 1, &leq);
		snprintf(c_pred, sizeof(c_pred), "%.4f", pred);
		if (as != NULL) {
			if (as == loop[0] && isfinite(mean) && mean > 0)
				snprintf(c_mean, sizeof(c_mean), "err_mean_pct=%.1f;",
					 100.0 * (pred - mean) / mean);
			snprintf(c_b2b, sizeof(c_b2b), "measured_b2b_us=%.4f;measured_as=%s;err_pct=%.1f;%s",
				 b2b, as, 100.0 * (pred - b2b) / b2b, c_mean);
			snprintf(c_lerr, sizeof(c_lerr), "literal_err_pct=%.1f;",
				 100.0 * (lit - b2b) / b2b);
		}
		snprintf(c_extra, sizeof(c_extra),
			 "%smeasured_p50_us=%.4f;err_p50_pct=%.1f;eq=%s;literal_us=%.4f;literal_eq=%s;"
			 "%sreuse=1",
			 c_b2b, meas, 100.0 * (pred - meas) / meas, eq, lit, leq ? leq : "", c_lerr);
		/* no valid: a prediction moves no bytes (the measured row beside
		 * it carries its own) */
		for (c = 0; c < t->ncols; c++) {
			const char *name = cols[c];

			f[c] = t->cells[(r + 1) * t->ncols + c];
			if (strcmp(name, "impl") == 0)
				f[c] = "model";
			else if (strcmp(name, "p50_us") == 0 || strcmp(name, "mean_us") == 0)
				f[c] = c_pred;
			else if (strcmp(name, "extra") == 0)
				f[c] = c_extra;
			for (k = 0; k < sizeof(blank) / sizeof(blank[0]); k++)
				if (strcmp(name, blank[k]) == 0)
					f[c] = "";
		}
		rc = ibc_csv_writer_row(w, f);
	}
	if (w && ibc_csv_writer_close(w) && rc == IBC_OK)
		rc = IBC_ERR_IO;
	free(cols);
	free(f);
	return rc;
}

/* v with 4 decimals when it is a time (> 0 and finite), else empty */
static void fmt_pos(char *b, size_t cap, double v)
{
	if (v > 0 && isfinite(v))
		snprintf(b, cap, "%.4f", v);
	else
		b[0] = '\0';
}

/* Fig. 20: DE against the direct ring with rendezvous, 4 KiB, p to 4096;
 * and the HRWG/DE crossover, predicted (powers of two) and measured. */
static int write_extrapolation(const char *dir, const struct ibc_csv_table *t, const char *run_id,
			       const struct ibc_alltoall_model *md, size_t eager)
{
	static const char *const cols[] = { "run_id", "ranks_measured", "what", "p", "bytes",
					    "direct_us", "de_us", "gain_pct", "reuse" };
	static const char *const what[2] = { "de-vs-direct-eq3-eq4", "de-vs-direct-ibchar" };
	int lit;
	struct ibc_csv_writer *w = NULL;
	char c_n[16], c_p[16], c_b[32], c_d[32], c_e[32], c_g[32], c_r[4];
	double best_hr = -1, best_de = -1;
	long pred_x = -1, meas_x = -1;
	size_t m, r;
	int rc, p, reuse;

	snprintf(c_n, sizeof(c_n), "%d", md->ranks);
	rc = csv_append(dir, "alltoall_extrapolation.csv", cols, 9, &w);
	for (lit = 0; lit < 2; lit++)
	for (reuse = 1; reuse >= 0 && rc == IBC_OK; reuse--)
		for (p = 2; p <= 4096 && rc == IBC_OK; p *= 2) {
			double (*fn)(const struct ibc_alltoall_model *, const char *, int, size_t,
				     size_t, int, const char **) =
				lit == 0 ? ibc_alltoall_model_literal : ibc_alltoall_model_predict;
			double d = fn(md, "direct", p, 4096, eager, reuse, NULL);
			double e = fn(md, "de", p, 4096, eager, reuse, NULL);
			const char *f[9] = { run_id, c_n, what[lit], c_p, "4096", c_d, c_e, c_g, c_r };

			/* a time <= 0 (fits from noisy or oversubscribed rows) is
			 * not a prediction: its cell and the gain stay empty */
			int ok = d > 0 && e > 0 && isfinite(d) && isfinite(e);

			snprintf(c_p, sizeof(c_p), "%d", p);
			fmt_pos(c_d, sizeof(c_d), d);
			fmt_pos(c_e, sizeof(c_e), e);
			if (ok)
				snprintf(c_g, sizeof(c_g), "%.1f", 100.0 * (d - e) / d);
			else
				c_g[0] = '\0';
			snprintf(c_r, sizeof(c_r), "%d", reuse);
			rc = ibc_csv_writer_row(w, f);
			if (p == 1024 && md->ranks >= 2 && ok)
				printf("alltoall model (%s): DE against the direct ring at 4 KiB, "
				       "p = 1024, %s: %.0f against %.0f us, a gain of %s%% "
				       "(the paper: 77%%)\n", lit == 0 ? "eq. 3 and 4" : "ibchar's",
				       reuse ? "buffers reused" : "registering every call", e, d, c_g);
			else if (p == 1024 && md->ranks >= 2)
				printf("alltoall model (%s): DE against the direct ring at 4 KiB, "
				       "p = 1024, %s: no prediction (the fitted model gives DE %.4g and "
				       "the direct ring %.4g us: a time <= 0 is not physical)\n",
				       lit == 0 ? "eq. 3 and 4" : "ibchar's",
				       reuse ? "buffers reused" : "registering every call", e, d);
		}
	/* crossover at this N: the smallest size where DE beats HRWG */
	for (m = 1; m <= ((size_t)4 << 20) && pred_x < 0; m *= 2)
		if (ibc_alltoall_model_predict(md, "de", md->ranks, m, eager, 1, NULL) <
		    ibc_alltoall_model_predict(md, "hrwg", md->ranks, m, eager, 1, NULL))
			pred_x = (long)m;
	for (m = 0; m < 64 && meas_x < 0; m++) {
		size_t want = (size_t)1 << m;

		best_hr = best_de = -1;
		for (r = 0; r + 1 < t->nrows; r++) {
			const char *v = ibc_csv_cell(t, r, "variant");

			if (strcmp(ibc_csv_str(t, r, "run_id"), run_id) != 0 ||
			    strcmp(ibc_csv_str(t, r, "impl"), "ibchar") != 0 ||
			    (int)cell_num(t, r, "ranks") != md->ranks ||
			    (size_t)cell_num(t, r, "bytes") != want)
				continue;
			if (strcmp(v, "hrwg") == 0)
				best_hr = cell_num(t, r, "p50_us");
			else if (strcmp(v, "de") == 0)
				best_de = cell_num(t, r, "p50_us");
		}
		if (best_hr > 0 && best_de > 0 && best_de < best_hr)
			meas_x = (long)want;
	}
	if (rc == IBC_OK) {
		const char *f[9] = { run_id, c_n, "hrwg-de-crossover", c_n, c_b, "", "", "", "1" };

		snprintf(c_b, sizeof(c_b), "%ld", pred_x);
		rc = ibc_csv_writer_row(w, f);
		f[2] = "hrwg-de-crossover-measured";
		snprintf(c_d, sizeof(c_d), "%ld", meas_x);
		f[4] = c_d;
		if (rc == IBC_OK)
			rc = ibc_csv_writer_row(w, f);
		printf("alltoall model: N = %d: DE overtakes HRWG at %ld bytes per pair predicted, "
		       "%ld measured (-1: not within the sizes)\n", md->ranks, pred_x, meas_x);
	}
	if (w && ibc_csv_writer_close(w) && rc == IBC_OK)
		rc = IBC_ERR_IO;
	return rc;
}

/* Whether this run's measured all-to-all rows at n ranks ran oversubscribed
 * (their oversub column): the parameters were measured beside them */
static int run_oversubscribed(const struct ibc_csv_table *t, const char *run_id, int n)
{
	size_t r;

	for (r = 0; r + 1 < t->nrows; r++)
		if (strcmp(ibc_csv_str(t, r, "run_id"), run_id) == 0 &&
		    strcmp(ibc_csv_str(t, r, "suite"), "alltoall") == 0 &&
		    strcmp(ibc_csv_str(t, r, "impl"), "model") != 0 &&
		    (int)cell_num(t, r, "ranks") == n && cell_num(t, r, "oversub") > 0)
			return 1;
	return 0;
}

int ibc_alltoall_model_write(const char *dir, const struct ibc_alltoall_model *md, size_t eager)
{
	struct ibc_csv_table *t = NULL;
	char path[4200], run_id[256] = "", xport[32] = "";
	size_t r;
	int rc;

	if (!md->valid)
		return IBC_OK;
	snprintf(path, sizeof(path), "%s/results.csv", dir);
	rc = ibc_csv_read(path, &t);
	if (rc) {
		ibc_error("alltoall model: %s: %s", path, ibc_status_str(rc));
		return rc;
	}
	for (r = 0; r + 1 < t->nrows; r++)
		if (strcmp(ibc_csv_str(t, r, "suite"), "alltoall") == 0 &&
		    strcmp(ibc_csv_str(t, r, "impl"), "model") != 0) {
			snprintf(run_id, sizeof(run_id), "%s", ibc_csv_str(t, r, "run_id"));
			snprintf(xport, sizeof(xport), "%s", ibc_csv_str(t, r, "xport"));
		}
	if (run_id[0] == '\0') {
		ibc_csv_table_free(t);
		return IBC_OK;
	}
	rc = write_params(dir, run_id, xport, md);
	if (rc == IBC_OK && run_oversubscribed(t, run_id, md->ranks)) {
		printf("alltoall model: N = %d: not modelled (oversubscribed: more ranks than PUs, "
		       "so its parameters and rows time the scheduler): no model rows, no "
		       "extrapolation\n", md->ranks);
	} else if (rc == IBC_OK) {
		rc = write_rows(dir, t, run_id, md, eager);
		if (rc == IBC_OK)
			rc = write_extrapolation(dir, t, run_id, md, eager);
	}
	fflush(stdout);
	ibc_csv_table_free(t);
	if (rc)
		ibc_error("alltoall model: writing to %s: %s", dir, ibc_status_str(rc));
	return rc;
}
