/* tests/core/progress.c - the ranks' progress records (core/progress.h):
 * what each rank stores, and whom the runner's reading names as not
 * answering: the ranks that never entered the bootstrap collective the
 * others wait in, a rank without a record, and, when nobody waits in one,
 * where each rank was.  One process plays every rank (a record is mapped
 * again when the rank changes, as a forked rank does). */
#include "core/progress.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/ibc-progress-XXXXXX";
static char text[8192];

static int has(const char *s) { return strstr(text, s) != NULL; }

static void show(void)
{
	char *line, *save = NULL, copy[sizeof(text)];

	memcpy(copy, text, sizeof(copy));
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
		tap_diag("%s", line);
}

/* rank enters and leaves `done` collectives, then enters one more if `stay` */
static void play(int rank, int done, int stay, unsigned point, const char *step)
{
	int i;

	for (i = 0; i < done; i++) {
		ibc_progress_in(rank, i % 2 ? "allgather" : "barrier");
		tap_is_int(ibc_progress_out(-7), -7, "rank %d: leaving a collective returns its status", rank);
	}
	ibc_progress_step(point, "pairwise", 64, step);
	if (stay)
		ibc_progress_in(rank, "barrier");
}

int main(void)
{
	char path[64], empty[64], shortf[64], big[64];
	int r, n;

	tap_plan_none();
	if (mkdtemp(dir) == NULL)
		tap_bail_out("mkdtemp");
	snprintf(path, sizeof(path), "%s/four", dir);
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	snprintf(shortf, sizeof(shortf), "%s/short", dir);
	snprintf(big, sizeof(big), "%s/big", dir);

	/* no IBC_PROGRESS: nothing is written, nothing breaks */
	unsetenv("IBC_PROGRESS");
	ibc_progress_in(99, "barrier");
	tap_is_int(ibc_progress_out(3), 3, "without IBC_PROGRESS a collective's status passes through");
	tap_is_int(ibc_progress_blame(path, 4, "", text, sizeof(text)), -1, "no file: -1");
	tap_is_str(text, "", "... and nothing said");

	tap_is_int(ibc_progress_create(path, 4), 0, "the runner makes a file of 4 records");
	setenv("IBC_PROGRESS", path, 1);
	play(0, 2, 1, 2, "setup");
	play(1, 2, 0, 2, "setup");
	play(2, 2, 1, 2, "setup");
	/* rank 3 never writes (another host, or it never got this far) */
	n = ibc_progress_blame(path, 4, "pfx: ", text, sizeof(text));
	show();
	tap_is_int(n, 2, "ranks 0, 2 wait in their 3rd collective: ranks 1 and 3 did not answer");
	tap_ok(has("pfx: rank 1 (pid ") &&
		       has(") did not answer: it never entered its bootstrap collective 3; it was at point 2 "
			   "(pairwise, 64 B): setup\n"),
	       "rank 1 is named, with where it was");
	tap_ok(has("pfx: rank 3 did not answer: it wrote no record"), "rank 3, without a record, is named");
	tap_ok(has("pfx: ranks 0, 2 wait in their bootstrap collective 3 (barrier), at point 2"),
	       "the waiting ranks and their collective are said");
	tap_ok(!has("rank 0 (pid") && !has("rank 2 (pid"), "a waiting rank is not named as not answering");

	/* rank 1 catches up and the others go on to measure: nobody waits in a
	 * bootstrap collective; where each was is said, nobody is blamed */
	ibc_progress_in(1, "barrier");
	for (r = 0; r < 3; r++) {
		ibc_progress_in(r, "barrier");
		ibc_progress_out(0);
		ibc_progress_step(2, "pairwise", 64, "measure");
	}
	n = ibc_progress_blame(path, 4, "", text, sizeof(text));
	show();
	tap_is_int(n, 0, "nobody in a bootstrap collective: nobody named as not answering");
	tap_ok(has("no rank waits in a bootstrap collective") && has("rank 1 (pid") &&
		       has("at point 2 (pairwise, 64 B): measure") && has("rank 3: no record"),
	       "... where each rank was is said");

	/* a file too short for a rank: the rank writes nothing, and nothing breaks */
	tap_is_int(ibc_progress_create(shortf, 1), 0, "a file of one record");
	setenv("IBC_PROGRESS", shortf, 1);
	ibc_progress_in(5, "barrier");
	ibc_progress_out(0);
	ibc_progress_step(1, "x", 8, "setup");
	tap_ok(1, "rank 5 beyond the file writes nothing");
	tap_is_int(ibc_progress_blame(shortf, 1, "", text, sizeof(text)), 0, "... rank 0's record is empty");
	tap_ok(has("no rank wrote a progress record ("), "... and that is said, not a blame");

	/* 40 ranks, 39 in their first collective: the list is cut, counted */
	tap_is_int(ibc_progress_create(big, 40), 0, "a file of 40 records");
	setenv("IBC_PROGRESS", big, 1);
	for (r = 0; r < 40; r++)
		if (r != 7)
			play(r, 0, 1, 1, "setup");
	play(7, 0, 0, 1, "setup");
	ibc_progress_in(7, "x");
	ibc_progress_out(0);
	n = ibc_progress_blame(big, 40, "", text, sizeof(text));
	tap_is_int(n, 0, "rank 7 entered (and left) one collective too: nobody is behind the first");
	play(3, 0, 0, 1, "setup");
	ibc_progress_out(0);
	ibc_progress_in(3, "barrier");
	n = ibc_progress_blame(big, 40, "", text, sizeof(text));
	show();
	tap_is_int(n, 39, "rank 3 in its 2nd collective: the 39 others did not answer");
	tap_ok(has("and 23 more ranks did not answer") && has("rank 3 waits in its bootstrap collective 2"),
	       "... 16 are named, the rest counted; the one waiting rank is said");

	unlink(path);
	unlink(shortf);
	unlink(big);
	unlink(empty);
	rmdir(dir);
	return tap_done();
}
