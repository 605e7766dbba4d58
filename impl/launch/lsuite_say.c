/* The launch suite's shared bits, below lsuite.c, lsuite_job.c and
 * lsuite_tables.c (which all call them and none of which they call): the
 * programs' names and the progress lines. */
#include "launch/lsuite_priv.h"

#include <stdarg.h>
#include <stdio.h>

const char *const ibc_lsuite_prog_names[] = { "true", "pmi", "hello" };

/* A progress line on stdout (nothing with --quiet). */
void ibc_lsuite_say(const struct ls *ls, const char *fmt, ...)
{
	va_list ap;

	if (ls->o->quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fflush(stdout);
}
