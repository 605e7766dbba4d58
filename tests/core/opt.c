/* Option parsing: every option type, lists, choices, ranges, bad input,
 * --help, and parsing twice in one process.  Messages printed by the parser
 * are captured in a temporary file so the TAP stream stays clean. */
#include "core/opt.h"
#include "core/status.h"
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int flag;
static long iters;
static double budget;
static size_t msg;
static const char *out_dir;
static int mode;
static struct ibc_opt_list ranks, sizes;
static struct ibc_opt_strlist xports, envs;

static const char *const modes[] = { "fast", "slow", "auto", NULL };
static const char *const xport_names[] = { "shm", "verbs", "auto", NULL };

#define OPT(n, s, t, d, m, h) .name = n, .short_name = s, .type = t, .dest = d, .metavar = m, .help = h

static const struct ibc_opt opts[] = {
	{ OPT("verbose", 'v', IBC_OPT_FLAG, &flag, NULL, "say more") },
	{ OPT("iters", 'i', IBC_OPT_INT, &iters, "N", "timed iterations"), .min = 1, .max = 1e6 },
	{ OPT("budget", 'b', IBC_OPT_DOUBLE, &budget, "S", "seconds per point"), .min = 0.001,
	  .max = 60 },
	{ OPT("msg", 'm', IBC_OPT_SIZE, &msg, "BYTES", "message size"), .min = 1,
	  .max = 1 << 30 },
	{ OPT("out", 'o', IBC_OPT_STRING, &out_dir, "DIR", "output directory") },
	{ OPT("mode", 0, IBC_OPT_CHOICE, &mode, "MODE", "how"), .choices = modes },
	{ OPT("ranks", 'n', IBC_OPT_INT_LIST, &ranks, "LIST", "rank counts"), .min = 1,
	  .max = 1024 },
	{ OPT("sizes", 's', IBC_OPT_SIZE_LIST, &sizes, "LIST", "message sizes") },
	{ OPT("xport", 'x', IBC_OPT_STRING_LIST, &xports, "LIST", "transports"),
	  .choices = xport_names },
	{ OPT("env", 'e', IBC_OPT_APPEND, &envs, "K=V", "environment") },
	IBC_OPT_END
};

static const struct ibc_opt_spec spec = {
	.prog = "opt-test", .synopsis = "[OPTIONS] [FILE...]",
	.summary = "Exercises the option parser.", .opts = opts, .epilog = "Epilog text."
};

static const struct ibc_opt plus_opts[] = {
	{ OPT("verbose", 'v', IBC_OPT_FLAG, &flag, NULL, "say more") },
	IBC_OPT_END
};
static const struct ibc_opt_spec plus_spec = {
	.prog = "launch-test", .synopsis = "[OPTIONS] -- PROG [ARGS]", .opts = plus_opts,
	.stop_at_operand = 1
};

static char captured[8192];

static void defaults(void)
{
	flag = 0;
	iters = 1000;
	budget = 1.5;
	msg = 8;
	out_dir = NULL;
	mode = 2;
	memset(&ranks, 0, sizeof(ranks));
	ranks.n = 1;
	ranks.v[0] = 2;
	memset(&sizes, 0, sizeof(sizes));
	memset(&xports, 0, sizeof(xports));
	ibc_opt_strlist_add(&xports, "auto", 1);
	memset(&envs, 0, sizeof(envs));
}

/* Runs ibc_opt_parse with stdout and stderr sent to a temp file, whose text
 * ends up in captured[]. */
static int parse(const struct ibc_opt_spec *s, int *first, ...)
{
	char *argv[32];
	int argc = 0, rc, saved_out, saved_err;
	FILE *tmp = tmpfile();
	va_list ap;
	size_t n;

	argv[argc++] = (char *)"prog";
	va_start(ap, first);
	for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;

	captured[0] = '\0';
	if (!tmp)
		tap_bail_out("tmpfile failed");
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(fileno(tmp), 1);
	dup2(fileno(tmp), 2);
	/* first == NULL: the no-operand entry point */
	rc = first ? ibc_opt_parse(s, argc, argv, first) : ibc_opt_parse_all(s, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	rewind(tmp);
	n = fread(captured, 1, sizeof(captured) - 1, tmp);
	captured[n] = '\0';
	fclose(tmp);
	return rc;
}

static int has(const char *needle)
{
	return strstr(captured, needle) != NULL;
}

static void parse_all(void)
{
	defaults();
	tap_is_int(parse(&spec, NULL, "--verbose", NULL), IBC_OK, "parse_all: options only");
	defaults();
	tap_ok(parse(&spec, NULL, "--verbose", "stray", NULL) == IBC_ERR_INVAL &&
		       has("unexpected argument 'stray'") && has("--help"),
	       "parse_all: a stray operand is an error with a hint");
	defaults();
	tap_is_int(parse(&spec, NULL, "--help", NULL), IBC_OPT_HELP_SHOWN, "parse_all: --help");
}

static void every_type(void)
{
	int first = -1, rc;

	defaults();
	rc = parse(&spec, &first, "-v", "--iters", "500", "--budget=0.25", "-m", "4K", "-o",
		   "/tmp/x", "--mode", "slow", "--ranks", "2..16", "--sizes", "1..4K", "-x",
		   "shm,verbs", "-e", "A=1", "--env", "B=2,3", "file1", "file2", NULL);
	tap_is_int(rc, IBC_OK, "all types parse");
	tap_ok(captured[0] == '\0', "nothing printed on success");
	tap_is_int(flag, 1, "flag set");
	tap_is_int(iters, 500, "int");
	tap_is_double_within(budget, 0.25, 1e-12, "double");
	tap_is_int((long long)msg, 4096, "size with K suffix");
	tap_is_str(out_dir, "/tmp/x", "string");
	tap_is_int(mode, 1, "choice index");
	tap_ok(ranks.n == 15 && ranks.v[0] == 2 && ranks.v[14] == 16 && ranks.given,
	       "int list 2..16 steps by one (%zu items)", ranks.n);
	tap_ok(sizes.n == 13 && sizes.v[0] == 1 && sizes.v[1] == 2 && sizes.v[12] == 4096,
	       "size list 1..4K doubles (%zu items)", sizes.n);
	tap_ok(xports.n == 2 && strcmp(xports.v[0], "shm") == 0 &&
		       strcmp(xports.v[1], "verbs") == 0,
	       "string list replaces its default");
	tap_ok(envs.n == 2 && strcmp(envs.v[0], "A=1") == 0 && strcmp(envs.v[1], "B=2,3") == 0,
	       "append keeps each value whole");
	tap_is_int(first, 21, "operands start after the options");

	defaults();
	rc = parse(&spec, &first, "--ranks", "1,4,8..10", "--sizes", "64,1M..4M", "-m", "2M",
		   "-vi7", NULL);
	tap_ok(rc == IBC_OK && ranks.n == 5 && ranks.v[1] == 4 && ranks.v[4] == 10,
	       "mixed int list 1,4,8..10");
	tap_ok(sizes.n == 4 && sizes.v[0] == 64 && sizes.v[1] == 1048576 &&
		       sizes.v[3] == 4194304,
	       "mixed size list 64,1M..4M");
	tap_ok(msg == 2097152 && flag == 1 && iters == 7, "size 2M and grouped short options");
}

static void bad_input(void)
{
	static const struct {
		const char *what, *a1, *a2, *msg;
	} cases[] = {
		{ "unknown long option", "--nope", NULL, "unknown option '--nope'" },
		{ "unknown short option", "-q", NULL, "unknown option '-q'" },
		{ "missing value (long)", "--iters", NULL, "option '--iters' needs a value" },
		{ "missing value (short)", "-i", NULL, "option '-i' needs a value" },
		{ "value on a flag", "--verbose=1", NULL, "option '--verbose' takes no value" },
		{ "value on --help", "--help=x", NULL, "option '--help' takes no value" },
		{ "unknown option in a group", "-vq", NULL, "unknown option '-q'" },
		{ "int not a number", "--iters", "ten", "not an integer" },
		{ "int trailing junk", "--iters", "10x", "not an integer" },
		{ "int above range", "--iters", "2000000", "out of range" },
		{ "int below range", "--iters", "0", "out of range" },
		{ "double not a number", "--budget", "fast", "not a number" },
		{ "double out of range", "--budget", "100", "out of range" },
		{ "size bad suffix", "--msg", "4X", "not a size" },
		{ "size negative", "--msg", "-4", "not a size" },
		{ "size out of range", "--msg", "2G", "out of range" },
		{ "choice not listed", "--mode", "medium", "not one of fast|slow|auto" },
		{ "list reversed range", "--ranks", "8..2", "not a list" },
		{ "list item not a number", "--ranks", "2,x", "not a list" },
		{ "list item out of range", "--ranks", "1..3,2000", "out of range" },
		{ "size list from zero", "--sizes", "0..4K", "not a list" },
		{ "string list not in choices", "--xport", "shm,tcp", "not one of" },
		{ "string list empty item", "--xport", "shm,,verbs", "not a valid list" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		defaults();
		rc = parse(&spec, NULL, cases[i].a1, cases[i].a2, NULL);
		tap_is_int(rc, IBC_ERR_INVAL, "%s: IBC_ERR_INVAL", cases[i].what);
		if (!tap_ok(has(cases[i].msg) && has("Try 'opt-test --help'."),
			    "%s: message names the problem", cases[i].what))
			tap_diag("printed: %s", captured);
	}
	defaults();
	parse(&spec, NULL, "--iters", "0", NULL);
	tap_is_int(iters, 1000, "a rejected value leaves the default");
	tap_is_int(ibc_status_exit_code(IBC_ERR_INVAL), 2, "bad options exit 2");
}

static void help(void)
{
	int rc;

	defaults();
	rc = parse(&spec, NULL, "--iters", "5", "--help", NULL);
	tap_is_int(rc, IBC_OPT_HELP_SHOWN, "--help returns IBC_OPT_HELP_SHOWN");
	tap_ok(has("Usage: opt-test [OPTIONS] [FILE...]") && has("Exercises the option parser."),
	       "usage line and summary");
	tap_ok(has("-i, --iters N") && has("(default 5)") && has("--mode MODE") &&
		       has("(one of fast|slow|auto; default auto)") &&
		       has("(from shm|verbs|auto)") && has("-h, --help") && has("Epilog text."),
	       "every option, defaults and choices are listed");
	rc = parse(&spec, NULL, "-h", NULL);
	tap_is_int(rc, IBC_OPT_HELP_SHOWN, "-h also shows help");
}

static void twice(void)
{
	int first = -1, rc;

	/* stop in the middle of grouped short options, then parse again */
	defaults();
	rc = parse(&spec, &first, "-vq", NULL);
	tap_is_int(rc, IBC_ERR_INVAL, "first parse fails inside a group");
	defaults();
	rc = parse(&spec, &first, "-i", "3", "-x", "verbs", "op", NULL);
	tap_ok(rc == IBC_OK && iters == 3 && first == 5, "second parse starts afresh");
	rc = parse(&spec, &first, "-i", "4", "-x", "shm", NULL);
	tap_ok(rc == IBC_OK && iters == 4 && xports.n == 1 && strcmp(xports.v[0], "shm") == 0,
	       "third parse: a string list is replaced, not appended to");
	tap_is_int(first, 5, "third parse: no operands");
	rc = parse(&spec, &first, "-x", "shm", "--xport", "verbs", NULL);
	tap_ok(rc == IBC_OK && xports.n == 2 && strcmp(xports.v[1], "verbs") == 0,
	       "a string list given twice in one parse keeps both");
	tap_ok(ibc_opt_strlist_has(&xports, "verbs") && ibc_opt_strlist_has(&xports, "shm") &&
	       !ibc_opt_strlist_has(&xports, "ver") && !ibc_opt_strlist_has(&xports, "auto"),
	       "strlist_has: whole names only");

	/* stop_at_operand: options after the program belong to it */
	flag = 0;
	rc = parse(&plus_spec, &first, "-v", "--", "prog", "-x", NULL);
	tap_ok(rc == IBC_OK && flag == 1 && first == 3, "'--' ends the options");
	flag = 0;
	rc = parse(&plus_spec, &first, "prog", "-v", NULL);
	tap_ok(rc == IBC_OK && flag == 0 && first == 1,
	       "stop_at_operand: options after the first operand are left alone");
}

static void value_parsers(void)
{
	long l;
	size_t s;
	double d;
	struct ibc_opt_list list;

	tap_ok(ibc_opt_parse_long("0x10", &l) == IBC_OK && l == 16, "parse_long hex");
	tap_ok(ibc_opt_parse_long("", &l) == IBC_ERR_INVAL, "parse_long empty");
	tap_ok(ibc_opt_parse_size("1G", &s) == IBC_OK && s == 1073741824, "parse_size 1G");
	tap_ok(ibc_opt_parse_size("4KiB", &s) == IBC_OK && s == 4096, "parse_size 4KiB");
	tap_ok(ibc_opt_parse_size("12", &s) == IBC_OK && s == 12, "parse_size plain");
	tap_ok(ibc_opt_parse_double("inf", &d) == IBC_ERR_INVAL, "parse_double rejects inf");
	tap_ok(ibc_opt_list_parse("3", 0, &list) == IBC_OK && list.n == 1 && list.v[0] == 3,
	       "list of one");
	tap_ok(ibc_opt_list_parse("", 0, &list) == IBC_ERR_INVAL, "empty list rejected");
	/* found by tests/fuzz/opt: the doubling ran past LLONG_MAX */
	tap_ok(ibc_opt_list_parse("4611686018427387904..9223372036854775807", 1, &list) == IBC_OK &&
		       list.n == 1 && list.v[0] == 4611686018427387904LL, "size range up to LLONG_MAX: no overflow");
	tap_ok(ibc_opt_list_parse("9223372036854775806..9223372036854775807", 0, &list) == IBC_OK &&
		       list.n == 2 && list.v[1] == 9223372036854775807LL, "int range ending at LLONG_MAX: no overflow");
	tap_ok(ibc_opt_list_parse("1..16", 1, &list) == IBC_OK && list.n == 5 && list.v[4] == 16, "1..16 doubles");
	tap_is_int(ibc_opt_choice_find(modes, "auto"), 2, "choice_find");
	tap_is_int(ibc_opt_choice_find(modes, "none"), -1, "choice_find miss");
}

int main(void)
{
	tap_plan_none();
	parse_all();
	every_type();
	bad_input();
	help();
	twice();
	value_parsers();
	return tap_done();
}
