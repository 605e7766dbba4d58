/* The suite driver: see suite.h. */
#include "suite/suite.h"

#include "boot/boot.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/timer.h"
#include "harness/harness.h"
#include "xport/xport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_VARIANTS 64
#define MAX_OPTS 64

static struct ibc_harness_cli cli = IBC_HARNESS_CLI_INIT;
static int list_only, info_only;

static const struct ibc_opt common_opts[] = {
	IBC_HARNESS_CLI_OPTS(cli),
	{ .name = "list", .type = IBC_OPT_FLAG, .dest = &list_only,
	  .help = "print the variants, one per line, and exit" },
	{ .name = "info", .type = IBC_OPT_FLAG, .dest = &info_only,
	  .help = "describe the variants, their needs and tunables, and exit" },
	IBC_OPT_END
};

/* ---------------------------------------------------------- faults ---- */
static struct {
	int armed, rank;
	char where[32];
	long at;
	long points; /* variant setups so far, one per variant per point (hang) */
} fault;

/* IBC_FAULT, read once at start-up: the check in the timed run is then a
 * test of one flag */
static void fault_init(void)
{
	const char *f = getenv("IBC_FAULT");

	fault.at = 1;
	fault.armed = f != NULL && sscanf(f, "%31[^:]:%d:%ld", fault.where, &fault.rank,
					  &fault.at) >= 2;
}

int ibc_suite_fault(const char *where, int rank, long n)
{
	if (!fault.armed || strcmp(fault.where, where) != 0 || fault.rank != rank || fault.at != n)
		return IBC_OK;
	ibc_error("IBC_FAULT: rank %d fails at %s %ld (injected)", rank, where, n);
	return IBC_ERR_IO;
}

/* IBC_FAULT=hang:RANK:N: rank RANK stops at its N-th variant setup and
 * never returns (until a signal ends it), as a rank stuck in the network
 * would: the test of every deadline above the bench. */
static void fault_hang(int rank, long point)
{
	if (!fault.armed || strcmp(fault.where, "hang") != 0 || fault.rank != rank || fault.at != point)
		return;
	ibc_error("IBC_FAULT: rank %d hangs at point %ld (injected)", rank, point);
	for (;;)
		pause();
}

/* -------------------------------------------------------- validation ---- */
#define PAT_K 0x9e3779b97f4a7c15ull

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t ibc_suite_pattern_seed(int src, int dst, uint64_t iter, uint64_t msg)
{
	return mix64(((uint64_t)(uint32_t)src << 40) ^ ((uint64_t)(uint32_t)dst << 16) ^
		     mix64(iter ^ mix64(msg + PAT_K)));
}

unsigned char ibc_suite_pattern_byte(uint64_t seed, size_t off)
{
	return (unsigned char)((seed + (uint64_t)(off / 8) * PAT_K) >> (8 * (off % 8)));
}

void ibc_suite_pattern_fill(void *buf, size_t len, uint64_t seed)
{
	unsigned char *b = buf;
	uint64_t v = seed;
	size_t o;

	for (o = 0; o + 8 <= len; o += 8, v += PAT_K)
		memcpy(b + o, &v, 8);   /* little endian: byte k of the word is v >> 8k */
	for (; o < len; o++)
		b[o] = ibc_suite_pattern_byte(seed, o);
}

size_t ibc_suite_pattern_check(const void *buf, size_t len, uint64_t seed, size_t *first)
{
	const unsigned char *b = buf;
	uint64_t v = seed, got;
	size_t o, k, bad = 0;

	for (o = 0; o + 8 <= len; o += 8, v += PAT_K) {
		memcpy(&got, b + o, 8);
		if (got == v)
			continue;
		for (k = 0; k < 8; k++)
			if (b[o + k] != (unsigned char)(v >> (8 * k))) {
				if (bad++ == 0 && first != NULL)
					*first = o + k;
			}
	}
	for (; o < len; o++)
		if (b[o] != ibc_suite_pattern_byte(seed, o) && bad++ == 0 && first != NULL)
			*first = o;
	return bad;
}

static struct {
	int armed, rank;
	char variant[64];
	long iter, msg, byte;
} corrupt;

/* IBC_CORRUPT, read once at start-up */
static void corrupt_init(void)
{
	const char *e = getenv("IBC_CORRUPT");
	int n;

	memset(&corrupt, 0, sizeof(corrupt));
	corrupt.msg = corrupt.byte = -1;
	if (e == NULL || e[0] == '\0')
		return;
	n = sscanf(e, "%63[^:]:%ld:%d:%ld:%ld", corrupt.variant, &corrupt.iter, &corrupt.rank,
		   &corrupt.msg, &corrupt.byte);
	corrupt.armed = n >= 2 && corrupt.iter >= 1;
	if (!corrupt.armed)
		ibc_warn("IBC_CORRUPT=\"%s\": not VARIANT:ITER[:RANK[:MSG[:BYTE]]] (ITER >= 1); ignored",
			 e);
}

int ibc_suite_corrupt_rank(const struct ibc_suite_op *o)
{
	if (!corrupt.armed || o->in_b2b || o->iter != corrupt.iter ||
	    strcmp(o->v->name, corrupt.variant) != 0)
		return -1;
	return corrupt.rank;
}

int ibc_suite_corrupt(const struct ibc_suite_op *o, long msg, long nmsg, void *buf, size_t len)
{
	size_t off;

	if (!corrupt.armed || ibc_suite_corrupt_rank(o) != o->ctx->boot->rank ||
	    msg != (corrupt.msg >= 0 ? corrupt.msg : nmsg / 2))
		return 0;
	if (buf == NULL || len == 0) {
		ibc_warn("IBC_CORRUPT: %s rank %d iteration %ld: the mutant is here (injected)",
			 o->v->name, corrupt.rank, corrupt.iter);
		return 1;
	}
	off = corrupt.byte >= 0 && (size_t)corrupt.byte < len ? (size_t)corrupt.byte : len / 2;
	((unsigned char *)buf)[off] ^= 0x5a;
	ibc_warn("IBC_CORRUPT: %s rank %d iteration %ld: byte %zu of message %ld (%zu bytes) "
		 "flipped (injected)", o->v->name, corrupt.rank, corrupt.iter, off, msg, len);
	return 1;
}

struct ibc_suite_variant ibc_suite_variant_like(const struct ibc_suite_variant *tmpl,
						const char *name, const char *impl,
						const char *desc, const void *arg)
{
	struct ibc_suite_variant v = *tmpl;

	v.name = name;
	v.impl = impl;
	v.desc = desc;
	v.arg = arg;
	v.usable = NULL;
	v.counters = NULL;
	v.counters_get = NULL;
	v.extra = NULL;
	return v;
}

/* ------------------------------------------------ harness callbacks ---- */
static int h_setup(struct ibc_harness *h, const struct ibc_harness_point *pt, void *arg)
{
	struct ibc_suite_op *o = arg;
	int rc;

	o->h = h;
	o->pt = pt;
	o->runs = 0;
	o->iter = 0;
	fault_hang(o->ctx->boot->rank, ++fault.points);
	rc = ibc_suite_fault("setup", o->ctx->boot->rank, 1);
	if (rc == IBC_OK && o->v->setup != NULL)
		rc = o->v->setup(o);
	return rc;
}

static int h_prepare(struct ibc_harness *h, void *arg)
{
	struct ibc_suite_op *o = arg;
	int lineup = o->ctx->cli->validate && (o->v->flags & IBC_SUITE_V_ONE_SIDED), rc = IBC_OK;

	o->h = h;
	o->iter++;
	if (lineup && o->iter > 1)
		rc = ibc_harness_sync(h);
	if (rc == IBC_OK && o->v->prepare != NULL)
		rc = o->v->prepare(o);
	if (rc == IBC_OK && lineup)
		rc = ibc_harness_sync(h);
	return rc;
}

static int counters_read(struct ibc_suite_op *o, uint64_t *vals)
{
	memset(vals, 0, sizeof(uint64_t) * IBC_SUITE_MAX_COUNTERS);
	return o->v->counters_get != NULL ? o->v->counters_get(o, vals) : IBC_OK;
}

static int h_run(struct ibc_harness *h, void *arg)
{
	struct ibc_suite_op *o = arg;
	int rc;

	o->h = h;
	if (fault.armed && (rc = ibc_suite_fault("run", o->ctx->boot->rank, ++o->runs)) != IBC_OK)
		return rc;
	if (o->v->counters_get != NULL && ibc_harness_call(h) == IBC_HARNESS_CALL_PRIME) {
		/* a prime (harness.c): its counts are not the timed iterations' */
		uint64_t before[IBC_SUITE_MAX_COUNTERS], after[IBC_SUITE_MAX_COUNTERS];
		size_t i;

		if ((rc = counters_read(o, before)) == IBC_OK && (rc = o->v->run(o)) == IBC_OK)
			rc = counters_read(o, after);
		for (i = 0; rc == IBC_OK && i < IBC_SUITE_MAX_COUNTERS; i++)
			o->cprime[i] += after[i] - before[i];
		return rc;
	}
	return o->v->run(o);
}

static int h_validate(struct ibc_harness *h, void *arg)
{
	struct ibc_suite_op *o = arg;

	o->h = h;
	return o->v->validate != NULL ? o->v->validate(o) : IBC_OK;
}

static int h_timed_begin(struct ibc_harness *h, void *arg)
{
	struct ibc_suite_op *o = arg;

	o->h = h;
	memset(o->cprime, 0, sizeof(o->cprime));
	o->dev_read = o->ctx->dev != NULL && ibc_devcount_read(o->ctx->dev, o->d0) == IBC_OK;
	return counters_read(o, o->c0);
}

static int h_timed_end(struct ibc_harness *h, void *arg)
{
	struct ibc_suite_op *o = arg;

	o->h = h;
	if (o->dev_read)
		o->dev_read = ibc_devcount_read(o->ctx->dev, o->d1) == IBC_OK;
	return counters_read(o, o->c1);
}

static int h_teardown(struct ibc_harness *h, void *arg)
{
	struct ibc_suite_op *o = arg;

	o->h = h;
	return o->v->teardown != NULL ? o->v->teardown(o) : IBC_OK;
}

static size_t append(char *buf, size_t cap, size_t used, const char *text)
{
	int w;

	if (text[0] == '\0' || used + 1 >= cap)
		return used;
	w = snprintf(buf + used, cap - used, "%s%s", used > 0 ? ";" : "", text);
	if (w < 0)
		return used;
	used += (size_t)w;
	return used < cap ? used : cap - 1;
}

/* The back-to-back loop's blocks: n / B2B_BLOCK operations, at least 1 and
 * at most B2B_BLOCK (1000: 16 a block, 63 blocks; fewer than 32: one at a
 * time), so that its median is over 16 blocks or more where the loop has 32
 * operations or more. */
#define B2B_BLOCK 16

/* The back-to-back loop: def.b2b_iters operations with nothing between them,
 * no more than the timed run did when the budget cut it (the budget bounds
 * the point, this loop included).  The clock is read around blocks of
 * operations, not around each: read around each, two reads sat between
 * every two operations, on a ping-pong's path (docs/model.md: rtt-write-1n's
 * loop read 0.05 us above its single calls so, 0.02 with blocks).
 * "paper_us=..;b2b_p50_us=..;b2b_n=..;b2b_block=.." into buf. */
static int b2b_loop(struct ibc_suite_op *o, char *buf, size_t cap)
{
	struct ibc_boot *b = o->ctx->boot;
	long k, j, m, nb = 0, blk, n = o->ctx->def->b2b_count != NULL ? o->ctx->def->b2b_count(o)
								   : o->ctx->def->b2b_iters;
	double *t, mine[2], *all = NULL, sum = 0, scale = o->v->scale > 0 ? o->v->scale : 1.0;
	double slow = ibc_harness_slowdown_pct(o->v->name, 1), shortest = 0;
	struct ibc_stats st;
	int rc, r;

	if (o->pt->budget_iters > 0 && n > o->pt->budget_iters)
		n = o->pt->budget_iters;
	if (n < 1)
		n = 1;
	blk = n / B2B_BLOCK < 1 ? 1 : n / B2B_BLOCK > B2B_BLOCK ? B2B_BLOCK : n / B2B_BLOCK;
	t = malloc(sizeof(double) * (size_t)((n + blk - 1) / blk));
	all = calloc((size_t)b->size * 2, sizeof(double));
	if (t == NULL || all == NULL) {
		free(t);
		free(all);
		return IBC_ERR_NOMEM;
	}
	rc = ibc_harness_sync(o->h);
	o->in_b2b = 1;
	for (k = 0; rc == IBC_OK && k < n; k += m) {
		double t0 = ibc_timer_now_us();

		m = n - k < blk ? n - k : blk;
		for (j = 0; rc == IBC_OK && j < m; j++) {
			if (fault.armed)
				rc = ibc_suite_fault("b2b", b->rank, k + j + 1);
			if (rc == IBC_OK)
				rc = o->v->run(o);
		}
		t[nb] = (slow > 0 ? ibc_harness_slowdown_spin(t0, slow, &shortest) : ibc_timer_now_us()) - t0;
		sum += t[nb];
		t[nb++] /= (double)m; /* the block's time per operation */
	}
	if (rc == IBC_OK && o->v->b2b_end != NULL)
		rc = o->v->b2b_end(o);
	o->in_b2b = 0;
	if (rc == IBC_OK) {
		mine[0] = sum / (double)n;
		rc = ibc_stats_compute_inplace(t, (size_t)nb, &st);
		mine[1] = st.p50;
	}
	if (rc == IBC_OK)
		rc = ibc_boot_allgather(b, mine, all, sizeof(mine));
	if (rc == IBC_OK) {
		double paper = 0, p50 = 0;

		if (o->v->timing == IBC_HARNESS_TIME_ROOT) {
			paper = all[0];
			p50 = all[1];
		} else {
			for (r = 0; r < b->size; r++) {
				paper += all[2 * r] / b->size;
				p50 += all[2 * r + 1] / b->size;
			}
		}
		snprintf(buf, cap, "paper_us=%.4f;b2b_p50_us=%.4f;b2b_n=%ld;b2b_block=%ld", paper * scale,
			 p50 * scale, n, blk);
	} else {
		ibc_error("suite: %s: the back-to-back loop failed: %s", o->v->name,
			  ibc_status_str(rc));
	}
	free(t);
	free(all);
	return rc;
}

/* On verbs, what the ports' counters did over the point's measured phase
 * (every variant timed at the point, primes included; not the warm-up),
 * summed over the nodes: dev_NAME=DELTA for the counters that moved, last
 * in the row's extra (whole keys only: what does not fit is left out).
 * Collective: every rank gives its text, "" when it read none. */
static int dev_part(struct ibc_suite_op *o, char *buf, size_t cap, size_t used)
{
	struct ibc_boot *b = o->ctx->boot;
	char mine[IBC_DEVCOUNT_TEXT] = "";
	size_t sep;
	char *all = malloc((size_t)b->size * IBC_DEVCOUNT_TEXT);
	int rc = all != NULL ? IBC_OK : IBC_ERR_NOMEM;

	if (o->dev_read)
		ibc_devcount_format(o->ctx->dev, o->d0, o->d1, mine, sizeof(mine));
	if (rc == IBC_OK)
		rc = ibc_boot_allgather(b, mine, all, IBC_DEVCOUNT_TEXT);
	if (rc != IBC_OK) {
		ibc_error("suite: %s: gathering the device counters failed: %s", o->v->name, ibc_status_str(rc));
		free(all);
		return rc;
	}
	/* after a ';' when the row has keys already; none left over when
	 * nothing moved or nothing fitted */
	sep = used > 0;
	if (used + sep + 1 < cap) {
		ibc_devcount_merge(all, IBC_DEVCOUNT_TEXT, b->size, buf + used + sep, cap - used - sep);
		if (sep && buf[used + 1] != '\0')
			buf[used] = ';';
	}
	free(all);
	return IBC_OK;
}

/* The extra phase: the back-to-back loop, the counters of the timed
 * iterations summed over ranks, the variant's own keys, the verbs ports'
 * counters. */
static int h_extra(struct ibc_harness *h, void *arg, char *buf, size_t cap)
{
	struct ibc_suite_op *o = arg;
	struct ibc_boot *b = o->ctx->boot;
	uint64_t delta[IBC_SUITE_MAX_COUNTERS], *all = NULL;
	char part[512];
	size_t used = 0, nc = 0, i;
	int rc = IBC_OK, r;

	o->h = h;
	buf[0] = '\0';
	if (o->ctx->def->b2b_iters > 0 && !(o->v->flags & IBC_SUITE_V_NO_B2B)) {
		rc = b2b_loop(o, part, sizeof(part));
		if (rc != IBC_OK)
			return rc;
		used = append(buf, cap, used, part);
	}
	while (o->v->counters != NULL && o->v->counters[nc] != NULL && nc < IBC_SUITE_MAX_COUNTERS)
		nc++;
	if (nc > 0) {
		rc = ibc_suite_fault("counters", b->rank, 1);
		for (i = 0; i < nc; i++)
			delta[i] = o->c1[i] - o->c0[i] - o->cprime[i];
		all = calloc((size_t)b->size * nc, sizeof(uint64_t));
		if (rc == IBC_OK && all == NULL)
			rc = IBC_ERR_NOMEM;
		if (rc == IBC_OK)
			rc = ibc_boot_allgather(b, delta, all, nc * sizeof(uint64_t));
		if (rc != IBC_OK) {
			ibc_error("suite: %s: summing the counters failed: %s", o->v->name,
				  ibc_status_str(rc));
			free(all);
			return rc;
		}
		for (i = 0; i < nc; i++) {
			uint64_t sum = 0;

			for (r = 0; r < b->size; r++)
				sum += all[(size_t)r * nc + i];
			snprintf(part, sizeof(part), "%s=%llu", o->v->counters[i],
				 (unsigned long long)sum);
			used = append(buf, cap, used, part);
		}
		free(all);
	}
	if (o->v->extra != NULL) {
		part[0] = '\0';
		rc = o->v->extra(o, part, sizeof(part));
		if (rc != IBC_OK)
			return rc;
		used = append(buf, cap, used, part);
	}
	if (o->ctx->x != NULL && strcmp(o->ctx->x->caps.backend, "verbs") == 0)
		return dev_part(o, buf, cap, used);
	return IBC_OK;
}

/* ------------------------------------------------------------ driver ---- */
struct drv {
	const struct ibc_suite_def *d;
	const struct ibc_suite_ext *ext;
	char prog[96];
	struct ibc_suite_variant vars[MAX_VARIANTS];
	size_t nvars;
	struct ibc_suite_ctx ctx;
	struct ibc_devcount dev;   /* ctx.dev's */
	struct ibc_suite_op sops[IBC_SUITE_MAX_OPS];
	struct ibc_harness_op hops[IBC_SUITE_MAX_OPS];
	size_t nops;
};

/* while the harness waits: the transport's progress and its hooks, and the
 * host MPI's (ibc_suite_ext.progress) */
static int serve_drv(void *arg)
{
	const struct drv *v = arg;
	int rc = v->ctx.x != NULL ? ibc_xport_progress(v->ctx.x) : IBC_OK;

	if (rc == IBC_OK && v->ext != NULL && v->ext->progress != NULL)
		rc = v->ext->progress();
	return rc;
}

static void variants_collect(struct drv *v)
{
	const struct ibc_suite_def *d = v->d;
	size_t i;

	v->nvars = 0;
	for (i = 0; i < d->nvariants && v->nvars < MAX_VARIANTS; i++)
		v->vars[v->nvars++] = d->variants[i];
	if (d->variants_fill != NULL)
		v->nvars += d->variants_fill(v->vars + v->nvars, MAX_VARIANTS - v->nvars);
	for (i = 0; v->ext != NULL && i < v->ext->nvariants && v->nvars < MAX_VARIANTS; i++)
		v->vars[v->nvars++] = v->ext->variants[i];
}

static int name_known(const struct drv *v, const char *name)
{
	size_t i;

	if (strcmp(name, "all") == 0)
		return 1;
	for (i = 0; i < v->nvars; i++)
		if (strcmp(v->vars[i].name, name) == 0)
			return 1;
	return 0;
}

/* each name once, in table order */
static void names_print(const struct drv *v, FILE *out, const char *sep)
{
	size_t i, j;
	int n = 0;

	for (i = 0; i < v->nvars; i++) {
		for (j = 0; j < i && strcmp(v->vars[j].name, v->vars[i].name) != 0; j++)
			;
		if (j == i)
			fprintf(out, "%s%s", n++ ? sep : "", v->vars[i].name);
	}
}

static void info_print(const struct drv *v)
{
	size_t i;

	if (v->d->info != NULL) {
		v->d->info(stdout);
	} else {
		printf("%s: %s\n\n", v->d->name, v->d->summary);
		for (i = 0; i < v->nvars && (v->ext == NULL || i < v->nvars - v->ext->nvariants); i++)
			printf("  %-20s %-8s %s\n", v->vars[i].name,
			       v->vars[i].impl ? v->vars[i].impl : "ibchar",
			       v->vars[i].desc ? v->vars[i].desc : "");
	}
	for (i = 0; v->ext != NULL && i < v->ext->nvariants; i++)
		printf("  %-20s %-8s %s\n", v->ext->variants[i].name,
		       v->ext->variants[i].impl ? v->ext->variants[i].impl : "ibchar",
		       v->ext->variants[i].desc ? v->ext->variants[i].desc : "");
}

/* Was name asked for by --variants (not just "all" or nothing)? */
/* One harness operation per variant that can run here (per fan-in).  A
 * variant that cannot is skipped with its reason: at info level while
 * sweeping defaults, as a warning when --variants named it and nothing of
 * that name runs. */
static int ops_build(struct drv *v)
{
	struct ibc_suite_ctx *c = &v->ctx;
	static char skipped[MAX_VARIANTS][256];
	size_t i, f, j;
	int rc;

	v->nops = 0;
	memset(skipped, 0, sizeof(skipped));
	for (i = 0; i < v->nvars; i++) {
		const struct ibc_suite_variant *var = &v->vars[i];
		int fan = (var->flags & IBC_SUITE_V_FANIN) != 0;
		size_t nf = !fan ? 1 : cli.fanin.n ? cli.fanin.n : v->d->nfanins;

		if (!ibc_harness_cli_wants(&cli, var->name))
			continue;
		for (f = 0; f < nf; f++) {
			long l = !fan ? 0 : cli.fanin.n ? (long)cli.fanin.v[f] : v->d->fanins[f];
			char why[256] = "", at[32] = "";
			struct ibc_suite_op *o;

			rc = var->usable != NULL ? var->usable(c, var, l, why, sizeof(why)) : IBC_OK;
			if (rc == IBC_ERR_UNSUPPORTED) {
				if (fan)
					snprintf(at, sizeof(at), " at fan-in %ld", l);
				snprintf(skipped[i], sizeof(skipped[i]), "%s%s", why[0] ? why : "not supported here", at);
				if (c->boot->rank == 0)
					ibc_info("%s: %s%s%s: %s; skipped", v->prog, var->name,
						 var->impl ? "/" : "", var->impl ? var->impl : "",
						 skipped[i]);
				continue;
			}
			if (rc != IBC_OK)
				return rc;
			if (v->nops == IBC_SUITE_MAX_OPS) {
				ibc_error("%s: more than %d operations in one run", v->prog,
					  IBC_SUITE_MAX_OPS);
				return IBC_ERR_INVAL;
			}
			o = &v->sops[v->nops];
			memset(o, 0, sizeof(*o));
			o->v = var;
			o->ctx = c;
			o->fanin = l;
			v->hops[v->nops] = (struct ibc_harness_op){
				.variant = var->name, .impl = var->impl, .fanin = l,
				.timing = var->timing, .scale = var->scale, .arg = o,
				.one_figure = (var->flags & IBC_SUITE_V_ONE_FIGURE) != 0,
				.primed = (var->flags & IBC_SUITE_V_PRIMED) != 0,
				.setup = h_setup, .prepare = h_prepare,
				.run = h_run, .validate = var->validate ? h_validate : NULL,
				.checked = var->checked,
				.extra = h_extra,
				.teardown = h_teardown, .timed_begin = h_timed_begin,
				.timed_end = h_timed_end,
			};
			v->nops++;
		}
	}
	/* a name asked for by --variants of which nothing runs: say why */
	for (i = 0; i < v->nvars && c->boot->rank == 0; i++) {
		if (skipped[i][0] == '\0' || !ibc_opt_strlist_has(&cli.variants, v->vars[i].name))
			continue;
		for (j = 0; j < v->nops && strcmp(v->hops[j].variant, v->vars[i].name) != 0; j++)
			;
		if (j == v->nops)
			ibc_warn("%s: %s: %s; skipped", v->prog, v->vars[i].name, skipped[i]);
	}
	return IBC_OK;
}

static int boot_open(struct drv *v, int *argc, char ***argv, struct ibc_boot **out)
{
	if (v->ext != NULL && v->ext->boot_open != NULL)
		return v->ext->boot_open(argc, argv, out);
	return ibc_harness_cli_boot(&cli, v->d->default_ranks, out);
}

/* Bench-side checks of the options, before any rank starts. */
static int options_check(struct drv *v)
{
	int n = ibc_harness_cli_nranks(&cli, v->d->default_ranks);
	size_t i;

	for (i = 0; i < cli.variants.n; i++)
		if (!name_known(v, cli.variants.v[i])) {
			fprintf(stderr, "%s: unknown variant '%s' (known: ", v->prog, cli.variants.v[i]);
			names_print(v, stderr, ", ");
			fprintf(stderr, ")\n");
			return IBC_ERR_INVAL;
		}
	/* under MPI the launcher decides the rank count */
	if ((v->ext == NULL || v->ext->boot_open == NULL) &&
	    (n < v->d->min_ranks || (v->d->max_ranks > 0 && n > v->d->max_ranks))) {
		if (v->d->max_ranks == v->d->min_ranks)
			fprintf(stderr, "%s: needs --ranks %d (%d given)\n", v->prog, v->d->min_ranks, n);
		else
			fprintf(stderr, "%s: needs %d..%d ranks (%d given)\n", v->prog, v->d->min_ranks,
				v->d->max_ranks, n);
		return IBC_ERR_INVAL;
	}
	return v->d->check != NULL ? v->d->check(&cli) : IBC_OK;
}

int ibc_suite_main(const struct ibc_suite_def *d, const struct ibc_suite_ext *ext, int argc,
		   char **argv)
{
	static struct drv v;
	static struct ibc_opt opts[MAX_OPTS];
	struct ibc_opt_spec spec;
	struct ibc_harness_params p;
	struct ibc_xport_params xp;
	struct ibc_boot *boot = NULL;
	size_t n = 0, i;
	int rc, rc2;

	memset(&v, 0, sizeof(v));
	v.d = d;
	v.ext = ext;
	snprintf(v.prog, sizeof(v.prog), "%s%s", d->prog, ext && ext->prog_suffix ? ext->prog_suffix : "");
	ibc_log_init(v.prog);
	fault_init();
	corrupt_init();
	for (i = 0; common_opts[i].name != NULL && n + 1 < MAX_OPTS; i++)
		opts[n++] = common_opts[i];
	for (i = 0; d->opts != NULL && d->opts[i].name != NULL && n + 1 < MAX_OPTS; i++)
		opts[n++] = d->opts[i];
	opts[n] = (struct ibc_opt)IBC_OPT_END;
	spec = (struct ibc_opt_spec){ .prog = v.prog, .synopsis = "[OPTIONS]", .summary = d->summary,
				      .opts = opts };
	rc = ibc_opt_parse_all(&spec, argc, argv);
	if (rc != IBC_OK)
		return rc == IBC_OPT_HELP_SHOWN ? 0 : ibc_status_exit_code(rc);
	variants_collect(&v);
	if (list_only) {
		names_print(&v, stdout, "\n");
		printf("\n");
		return 0;
	}
	if (info_only) {
		info_print(&v);
		return 0;
	}
	rc = options_check(&v);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);

	ibc_harness_params_init(&p);
	p.suite = d->name;
	p.kind = d->kind;
	if (d->sizes != NULL) {
		for (p.nsizes = 0; p.nsizes < d->nsizes && p.nsizes < IBC_HARNESS_MAX_SIZES; p.nsizes++)
			p.sizes[p.nsizes] = d->sizes[p.nsizes];
	}
	for (i = 0; d->factor_refs != NULL && d->factor_refs[i] != NULL && i < IBC_HARNESS_MAX_REFS; i++)
		p.factor_refs[i] = d->factor_refs[i];
	p.nfactor_refs = i;
	p.mpi_version = ext != NULL ? ext->mpi_version : NULL;
	p.unprimed = d->unprimed;
	ibc_harness_params_argv(&p, argc, argv);
	rc = ibc_harness_cli_apply(&cli, &p);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	rc = ibc_timer_init();
	if (rc == IBC_OK)
		rc = boot_open(&v, &argc, &argv, &boot);
	if (rc != IBC_OK)
		return ibc_status_exit_code(rc);
	v.ctx = (struct ibc_suite_ctx){ .def = d, .boot = boot, .cli = &cli };
	for (i = 0; i < p.nsizes; i++)
		if (p.sizes[i] > v.ctx.max_bytes)
			v.ctx.max_bytes = p.sizes[i];

	/* the transport waits the way the harness will (decided the same way) */
	p.wait_force = ibc_wait_decide(boot->local_size);
	if (d->flags & IBC_SUITE_XPORT) {
		ibc_xport_params_init(&xp);
		xp.backend = cli.xport;
		xp.wait = (enum ibc_wait)p.wait_force;
		if (d->xport_params != NULL)
			d->xport_params(&xp);
		rc = ibc_xport_open(boot, &xp, &v.ctx.x);
		if (rc == IBC_OK && (d->flags & IBC_SUITE_CONNECT))
			rc = ibc_xport_connect(v.ctx.x, NULL);
		if (rc != IBC_OK)
			goto out_close_xport;
		p.xport = v.ctx.x->caps.backend;
		p.device = v.ctx.x->caps.device;
		if (strcmp(v.ctx.x->caps.backend, "verbs") == 0 && boot->local_rank == 0 &&
		    ibc_devcount_open(&v.dev, IBC_DEVCOUNT_ROOT, v.ctx.x->caps.device) == IBC_OK)
			v.ctx.dev = &v.dev;
		p.clock_xport = v.ctx.x;
	}
	if (v.ctx.x != NULL || (ext != NULL && ext->progress != NULL)) {
		p.serve = serve_drv;
		p.serve_arg = &v;
	}
	if (d->open != NULL) {
		rc = d->open(&v.ctx, &v.ctx.state);
		if (rc != IBC_OK)
			goto out_close_xport;
	}
	rc = ops_build(&v);
	if (rc == IBC_OK && v.nops == 0) {
		if (boot->rank == 0)
			ibc_error("%s: no variant can run here%s%s", v.prog,
				  v.ctx.x != NULL ? " on transport " : "",
				  v.ctx.x != NULL ? v.ctx.x->caps.backend : "");
		rc = IBC_ERR_UNSUPPORTED;
	}
	if (rc == IBC_OK && d->params != NULL)
		d->params(&v.ctx, &p);
	if (rc == IBC_OK)
		rc = ibc_harness_run(boot, &p, v.hops, v.nops);
	if (rc == IBC_OK && d->after != NULL)
		rc = d->after(&v.ctx);
	if (d->close != NULL)
		d->close(&v.ctx);
out_close_xport:
	if (v.ctx.x != NULL) {
		rc2 = ibc_xport_close(v.ctx.x);
		if (rc == IBC_OK)
			rc = rc2;
	}
	rc2 = ibc_boot_close(boot);
	if (rc == IBC_OK)
		rc = rc2;
	return ibc_status_exit_code(rc);
}
