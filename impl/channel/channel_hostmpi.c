/* The channel suite's glue for the host MPI's kernels (struct
 * ibc_channel_suite_fn, channel_suite.h): the variants of an -<mpi> build
 * (bench/channel/mpi.c), made like the suite's own, that run the kernel. */
#include "channel/channel_suite_impl.h"

#include "core/status.h"
#include "core/timer.h"
#include "harness/harness.h"
#include "xport/xport.h"

/* the host MPI's kernels: its ping-pong timed by the harness (RTT/2), its
 * windowed bandwidth per message */
static int fn_run(struct ibc_suite_op *o)
{
	const struct ibc_channel_suite_fn *f = o->v->arg;
	struct cs_inst *in = o->inst;
	double t0 = ibc_timer_now_us();
	int rc = f->fn(f->ctx, in->sbuf, in->rbuf, in->m, f->bw ? in->window : 0,
		       in->nmsg > 1 ? in->m : 0);

	if (rc == IBC_OK && f->bw && o->ctx->x->rank == 0)
		ibc_harness_sample_set(o->h, (ibc_timer_now_us() - t0) / (double)in->window);
	return arrived(o, in, rc);
}

struct ibc_suite_variant ibc_channel_suite_fn_variant(const char *name, const char *impl,
						      const char *desc,
						      const struct ibc_channel_suite_fn *fn)
{
	struct ibc_suite_variant v = ibc_suite_variant_like(&cs_tmpl, name, impl, desc, fn);

	v.run = fn_run;
	v.scale = fn->bw ? 0 : 0.5;
	v.flags = fn->bw ? IBC_SUITE_V_NO_B2B : 0;
	return v;
}
