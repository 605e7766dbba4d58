/* The option parser (core/opt.c): the input is argv, its words separated by
 * NUL bytes, parsed against a table with every option type. */
#include "fuzz.h"
#include "core/opt.h"

static const char *const colours[] = { "red", "green", "blue", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static long n;
	static double d;
	static size_t sz;
	static const char *str;
	static int flag, choice;
	static struct ibc_opt_list ints, sizes;
	static struct ibc_opt_strlist names, app;
	const struct ibc_opt opts[] = {
		{ "flag", 'f', IBC_OPT_FLAG, &flag, NULL, "a flag" },
		{ "n", 'n', IBC_OPT_INT, &n, "N", "a number", .min = 1, .max = 1e9 },
		{ "d", 'd', IBC_OPT_DOUBLE, &d, "X", "a double", .min = 0, .max = 10 },
		{ "size", 's', IBC_OPT_SIZE, &sz, "BYTES", "a size" },
		{ "str", 0, IBC_OPT_STRING, &str, "S", "a string" },
		{ "colour", 'c', IBC_OPT_CHOICE, &choice, "C", "a choice", .choices = colours },
		{ "ints", 'i', IBC_OPT_INT_LIST, &ints, "LIST", "ints" },
		{ "sizes", 'b', IBC_OPT_SIZE_LIST, &sizes, "LIST", "sizes" },
		{ "names", 0, IBC_OPT_STRING_LIST, &names, "A,B", "names", .choices = colours },
		{ "add", 'a', IBC_OPT_APPEND, &app, "X", "appended" },
		IBC_OPT_END
	};
	const struct ibc_opt_spec spec = { "fuzz", "[OPTIONS] [ARGS]", "The option parser under a fuzzer.", opts };
	char *s = fuzz_str(data, size), *argv[66];
	int argc = 1, first = 0;
	size_t i = 0;
	FILE *saved = stderr;

	fuzz_quiet();
	argv[0] = "fuzz";
	while (i <= size && argc < 65) {
		argv[argc++] = s + i;
		i += strlen(s + i) + 1;
	}
	argv[argc] = NULL;
	/* --help shows the destinations as defaults: none may point into an old input */
	n = 0;
	d = 0;
	sz = 0;
	str = NULL;
	flag = choice = 0;
	memset(&ints, 0, sizeof(ints));
	memset(&sizes, 0, sizeof(sizes));
	memset(&names, 0, sizeof(names));
	memset(&app, 0, sizeof(app));
	/* the parser's messages go to stderr: not to the fuzzer's log */
	stderr = fopen("/dev/null", "w");
	if (stderr == NULL)
		stderr = saved;
	(void)ibc_opt_parse(&spec, argc, argv, &first);
	if (stderr != saved)
		fclose(stderr);
	stderr = saved;
	free(s);
	return 0;
}
