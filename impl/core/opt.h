/* One option table per program: it drives getopt_long and generates --help.
 * Bad options and bad values print "prog: <problem>" and "Try 'prog --help'."
 * on stderr and return IBC_ERR_INVAL (mains exit 2 via ibc_status_exit_code).
 *
 *   static long iters = 1000;
 *   static const struct ibc_opt opts[] = {
 *       { "iters", 'i', IBC_OPT_INT, &iters, "N", "timed iterations", .min = 1, .max = 1e9 },
 *       IBC_OPT_END
 *   };
 *   static const struct ibc_opt_spec spec = { "prog", "[OPTIONS]", "What it does.", opts };
 */
#ifndef IBC_CORE_OPT_H
#define IBC_CORE_OPT_H

#include <stddef.h>
#include <stdio.h>

#define IBC_OPT_LIST_MAX 256
#define IBC_OPT_STRBUF 4096

enum ibc_opt_type {
	IBC_OPT_FLAG,        /* no argument: int *dest = 1 */
	IBC_OPT_INT,         /* long *dest; [min, max] checked when min < max */
	IBC_OPT_DOUBLE,      /* double *dest; [min, max] checked when min < max */
	IBC_OPT_SIZE,        /* size_t *dest; suffixes K, M, G (powers of 1024) */
	IBC_OPT_STRING,      /* const char **dest (points into argv) */
	IBC_OPT_CHOICE,      /* int *dest = index in .choices (NULL-terminated) */
	IBC_OPT_INT_LIST,    /* struct ibc_opt_list: "2,4,8..12" (a..b steps by 1) */
	IBC_OPT_SIZE_LIST,   /* struct ibc_opt_list: "1,8,1K..4M" (a..b doubles) */
	IBC_OPT_STRING_LIST, /* struct ibc_opt_strlist: "a,b,c" */
	IBC_OPT_APPEND       /* struct ibc_opt_strlist: each use appends its value */
};

struct ibc_opt {
	const char *name;   /* long name, without dashes; NULL ends the table */
	int short_name;     /* 0 for none */
	enum ibc_opt_type type;
	void *dest;
	const char *metavar; /* shown in --help, e.g. "N" */
	const char *help;
	const char *const *choices; /* IBC_OPT_CHOICE and optional check for STRING_LIST */
	double min, max;
};
#define IBC_OPT_END { .name = NULL }

struct ibc_opt_list {
	size_t n;
	long long v[IBC_OPT_LIST_MAX];
	int given; /* set when the option appeared on the command line */
};

struct ibc_opt_strlist {
	size_t n;
	const char *v[IBC_OPT_LIST_MAX];
	char buf[IBC_OPT_STRBUF]; /* storage for split items */
	size_t used;
	int given;
};

struct ibc_opt_spec {
	const char *prog;     /* program name as shown in messages */
	const char *synopsis; /* after the program name, e.g. "[OPTIONS] -- PROGRAM [ARGS...]" */
	const char *summary;  /* one paragraph shown under the usage line */
	const struct ibc_opt *opts;
	const char *epilog;   /* text after the option list, or NULL */
	int stop_at_operand;  /* 1: options end at the first operand (like "+" in getopt) */
};

#define IBC_OPT_HELP_SHOWN 1

/* Parses argv[1..].  Returns IBC_OK with *first_operand set; IBC_OPT_HELP_SHOWN
 * when --help printed the usage on stdout; IBC_ERR_INVAL after printing the
 * problem on stderr.  Defaults shown in --help are the dest values on entry. */
int ibc_opt_parse(const struct ibc_opt_spec *spec, int argc, char **argv, int *first_operand);
void ibc_opt_usage_print(const struct ibc_opt_spec *spec, FILE *out);
/* ibc_opt_parse for programs that take no operands: a stray operand is
 * reported like a bad option (IBC_ERR_INVAL).  Mains do
 *   rc = ibc_opt_parse_all(&spec, argc, argv);
 *   if (rc != IBC_OK) return rc == IBC_OPT_HELP_SHOWN ? 0 : ibc_status_exit_code(rc); */
int ibc_opt_parse_all(const struct ibc_opt_spec *spec, int argc, char **argv);

/* The value parsers behind the table, for callers with their own text. */
int ibc_opt_parse_long(const char *text, long *out);
int ibc_opt_parse_size(const char *text, size_t *out);
int ibc_opt_parse_double(const char *text, double *out);
int ibc_opt_list_parse(const char *text, int sizes, struct ibc_opt_list *out);
int ibc_opt_strlist_add(struct ibc_opt_strlist *list, const char *text, int split);
/* 1 when name is one of list's strings */
int ibc_opt_strlist_has(const struct ibc_opt_strlist *list, const char *name);
/* Index of name in a NULL-terminated choices array, or -1. */
int ibc_opt_choice_find(const char *const *choices, const char *name);

#endif
