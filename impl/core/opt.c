#include "core/opt.h"
#include "core/status.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define OPT_MAX 128

int ibc_opt_parse_long(const char *text, long *out)
{
	char *end;
	long v;

	if (!text || !*text)
		return IBC_ERR_INVAL;
	errno = 0;
	v = strtol(text, &end, 0);
	if (errno || *end)
		return IBC_ERR_INVAL;
	*out = v;
	return IBC_OK;
}

int ibc_opt_parse_double(const char *text, double *out)
{
	char *end;
	double v;

	if (!text || !*text)
		return IBC_ERR_INVAL;
	errno = 0;
	v = strtod(text, &end);
	if (errno || *end || !isfinite(v))
		return IBC_ERR_INVAL;
	*out = v;
	return IBC_OK;
}

int ibc_opt_parse_size(const char *text, size_t *out)
{
	char *end;
	unsigned long long v, mul = 1;

	if (!text || !isdigit((unsigned char)*text))
		return IBC_ERR_INVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno)
		return IBC_ERR_INVAL;
	switch (toupper((unsigned char)*end)) {
	case 'K': mul = 1ULL << 10; end++; break;
	case 'M': mul = 1ULL << 20; end++; break;
	case 'G': mul = 1ULL << 30; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	if (*end || (v && mul > SIZE_MAX / v))
		return IBC_ERR_INVAL;
	*out = (size_t)(v * mul);
	return IBC_OK;
}

static int list_push(struct ibc_opt_list *out, long long v)
{
	if (out->n >= IBC_OPT_LIST_MAX)
		return IBC_ERR_INVAL;
	out->v[out->n++] = v;
	return IBC_OK;
}

static int list_item(const char *item, int sizes, long long *v)
{
	long l;
	size_t s;

	if (sizes) {
		if (ibc_opt_parse_size(item, &s))
			return IBC_ERR_INVAL;
		*v = (long long)s;
		return IBC_OK;
	}
	if (ibc_opt_parse_long(item, &l))
		return IBC_ERR_INVAL;
	*v = l;
	return IBC_OK;
}

int ibc_opt_list_parse(const char *text, int sizes, struct ibc_opt_list *out)
{
	char buf[IBC_OPT_STRBUF], *save = NULL, *tok;

	if (!text || strlen(text) >= sizeof(buf))
		return IBC_ERR_INVAL;
	strcpy(buf, text);
	out->n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dots = strstr(tok, "..");
		long long a, b;

		if (!dots) {
			if (list_item(tok, sizes, &a) || list_push(out, a))
				return IBC_ERR_INVAL;
			continue;
		}
		*dots = '\0';
		if (list_item(tok, sizes, &a) || list_item(dots + 2, sizes, &b) || a > b)
			return IBC_ERR_INVAL;
		if (sizes && a <= 0)
			return IBC_ERR_INVAL;
		/* the next value is checked before it is made: no overflow near LLONG_MAX */
		for (long long v = a;; v = sizes ? v * 2 : v + 1) {
			if (list_push(out, v))
				return IBC_ERR_INVAL;
			if (sizes ? v > b / 2 : v >= b)
				break;
		}
	}
	return out->n ? IBC_OK : IBC_ERR_INVAL;
}

int ibc_opt_strlist_add(struct ibc_opt_strlist *list, const char *text, int split)
{
	const char *p = text;

	do {
		size_t len = split ? strcspn(p, ",") : strlen(p);

		if (list->n >= IBC_OPT_LIST_MAX || list->used + len + 1 > sizeof(list->buf))
			return IBC_ERR_INVAL;
		if (split && len == 0)
			return IBC_ERR_INVAL;
		memcpy(list->buf + list->used, p, len);
		list->buf[list->used + len] = '\0';
		list->v[list->n++] = list->buf + list->used;
		list->used += len + 1;
		p += len;
	} while (split && *p++ == ',');
	return IBC_OK;
}

int ibc_opt_choice_find(const char *const *choices, const char *name)
{
	for (int i = 0; choices && choices[i]; i++)
		if (strcmp(choices[i], name) == 0)
			return i;
	return -1;
}

int ibc_opt_strlist_has(const struct ibc_opt_strlist *list, const char *name)
{
	for (size_t i = 0; i < list->n; i++)
		if (strcmp(list->v[i], name) == 0)
			return 1;
	return 0;
}

static void choices_print(const char *const *choices, FILE *out)
{
	for (int i = 0; choices && choices[i]; i++)
		fprintf(out, "%s%s", i ? "|" : "", choices[i]);
}

static void default_print(const struct ibc_opt *o, FILE *out)
{
	switch (o->type) {
	case IBC_OPT_INT:
		fprintf(out, " (default %ld)", *(long *)o->dest);
		break;
	case IBC_OPT_DOUBLE:
		fprintf(out, " (default %g)", *(double *)o->dest);
		break;
	case IBC_OPT_SIZE:
		fprintf(out, " (default %zu)", *(size_t *)o->dest);
		break;
	case IBC_OPT_STRING:
		if (*(const char **)o->dest)
			fprintf(out, " (default %s)", *(const char **)o->dest);
		break;
	case IBC_OPT_CHOICE: {
		int idx = *(int *)o->dest;

		fprintf(out, " (one of ");
		choices_print(o->choices, out);
		if (idx >= 0 && o->choices[idx])
			fprintf(out, "; default %s", o->choices[idx]);
		fprintf(out, ")");
		break;
	}
	case IBC_OPT_INT_LIST:
	case IBC_OPT_SIZE_LIST: {
		const struct ibc_opt_list *l = o->dest;

		if (!l->n)
			break;
		fprintf(out, " (default ");
		for (size_t i = 0; i < l->n; i++)
			fprintf(out, "%s%lld", i ? "," : "", l->v[i]);
		fprintf(out, ")");
		break;
	}
	case IBC_OPT_STRING_LIST: {
		const struct ibc_opt_strlist *l = o->dest;

		if (o->choices) {
			fprintf(out, " (from ");
			choices_print(o->choices, out);
			fprintf(out, ")");
		}
		if (!l->n)
			break;
		fprintf(out, " (default ");
		for (size_t i = 0; i < l->n; i++)
			fprintf(out, "%s%s", i ? "," : "", l->v[i]);
		fprintf(out, ")");
		break;
	}
	case IBC_OPT_FLAG:
	case IBC_OPT_APPEND:
		break;
	}
}

void ibc_opt_usage_print(const struct ibc_opt_spec *spec, FILE *out)
{
	fprintf(out, "Usage: %s %s\n", spec->prog, spec->synopsis ? spec->synopsis : "[OPTIONS]");
	if (spec->summary)
		fprintf(out, "\n%s\n", spec->summary);
	fprintf(out, "\nOptions:\n");
	for (const struct ibc_opt *o = spec->opts; o && o->name; o++) {
		char head[96];
		int n;

		if (o->short_name)
			n = snprintf(head, sizeof(head), "  -%c, --%s", o->short_name, o->name);
		else
			n = snprintf(head, sizeof(head), "      --%s", o->name);
		if (o->type != IBC_OPT_FLAG && n > 0 && (size_t)n < sizeof(head))
			snprintf(head + n, sizeof(head) - (size_t)n, " %s",
				 o->metavar ? o->metavar : "VALUE");
		fprintf(out, "%-30s %s", head, o->help ? o->help : "");
		default_print(o, out);
		fputc('\n', out);
	}
	fprintf(out, "%-30s %s\n", "  -h, --help", "show this help and exit");
	if (spec->epilog)
		fprintf(out, "\n%s\n", spec->epilog);
}

static int opt_fail(const struct ibc_opt_spec *spec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int opt_fail(const struct ibc_opt_spec *spec, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", spec->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", spec->prog);
	return IBC_ERR_INVAL;
}

static int range_ok(const struct ibc_opt *o, double v)
{
	return !(o->min < o->max) || (v >= o->min && v <= o->max);
}

static int range_fail(const struct ibc_opt_spec *spec, const struct ibc_opt *o, const char *arg)
{
	char range[96];

	snprintf(range, sizeof(range), "%g and %g", o->min, o->max);
	fprintf(stderr, "%s: --%s: '%s' is out of range (must be between %s)\nTry '%s --help'.\n",
		spec->prog, o->name, arg, range, spec->prog);
	return IBC_ERR_INVAL;
}

static int value_set(const struct ibc_opt_spec *spec, const struct ibc_opt *o, const char *arg,
		     int first_use)
{
	long l;
	double d;
	size_t s;
	int idx;

	switch (o->type) {
	case IBC_OPT_FLAG:
		*(int *)o->dest = 1;
		return IBC_OK;
	case IBC_OPT_INT:
		if (ibc_opt_parse_long(arg, &l))
			return opt_fail(spec, "--%s: '%s' is not an integer", o->name, arg);
		if (!range_ok(o, (double)l))
			return range_fail(spec, o, arg);
		*(long *)o->dest = l;
		return IBC_OK;
	case IBC_OPT_DOUBLE:
		if (ibc_opt_parse_double(arg, &d))
			return opt_fail(spec, "--%s: '%s' is not a number", o->name, arg);
		if (!range_ok(o, d))
			return range_fail(spec, o, arg);
		*(double *)o->dest = d;
		return IBC_OK;
	case IBC_OPT_SIZE:
		if (ibc_opt_parse_size(arg, &s))
			return opt_fail(spec, "--%s: '%s' is not a size (e.g. 64, 4K, 1M)", o->name, arg);
		if (!range_ok(o, (double)s))
			return range_fail(spec, o, arg);
		*(size_t *)o->dest = s;
		return IBC_OK;
	case IBC_OPT_STRING:
		*(const char **)o->dest = arg;
		return IBC_OK;
	case IBC_OPT_CHOICE:
		idx = ibc_opt_choice_find(o->choices, arg);
		if (idx < 0) {
			fprintf(stderr, "%s: --%s: '%s' is not one of ", spec->prog, o->name, arg);
			choices_print(o->choices, stderr);
			fprintf(stderr, "\nTry '%s --help'.\n", spec->prog);
			return IBC_ERR_INVAL;
		}
		*(int *)o->dest = idx;
		return IBC_OK;
	case IBC_OPT_INT_LIST:
	case IBC_OPT_SIZE_LIST: {
		struct ibc_opt_list *list = o->dest;

		if (ibc_opt_list_parse(arg, o->type == IBC_OPT_SIZE_LIST, list))
			return opt_fail(spec, "--%s: '%s' is not a list (e.g. 1,2,4..16)", o->name, arg);
		for (size_t i = 0; i < list->n; i++) {
			char item[32];

			snprintf(item, sizeof(item), "%lld", list->v[i]);
			if (!range_ok(o, (double)list->v[i]))
				return range_fail(spec, o, item);
		}
		list->given = 1;
		return IBC_OK;
	}
	case IBC_OPT_STRING_LIST:
	case IBC_OPT_APPEND: {
		struct ibc_opt_strlist *list = o->dest;

		if (o->type == IBC_OPT_STRING_LIST && first_use)
			list->n = list->used = 0; /* replace the default (or an earlier parse) */
		if (ibc_opt_strlist_add(list, arg, o->type == IBC_OPT_STRING_LIST))
			return opt_fail(spec, "--%s: '%s' is not a valid list", o->name, arg);
		for (size_t i = 0; o->choices && i < list->n; i++)
			if (ibc_opt_choice_find(o->choices, list->v[i]) < 0) {
				fprintf(stderr, "%s: --%s: '%s' is not one of ", spec->prog, o->name,
					list->v[i]);
				choices_print(o->choices, stderr);
				fprintf(stderr, "\nTry '%s --help'.\n", spec->prog);
				return IBC_ERR_INVAL;
			}
		list->given = 1;
		return IBC_OK;
	}
	}
	return IBC_ERR_INVAL;
}

int ibc_opt_parse(const struct ibc_opt_spec *spec, int argc, char **argv, int *first_operand)
{
	struct option lopts[OPT_MAX + 2];
	char sopts[3 * OPT_MAX + 8];
	unsigned char seen[OPT_MAX] = { 0 };
	size_t nl = 0, ns = 0;
	int c, idx, help_val, status = IBC_OK;

	sopts[ns++] = spec->stop_at_operand ? '+' : ':';
	if (spec->stop_at_operand)
		sopts[ns++] = ':';
	for (const struct ibc_opt *o = spec->opts; o && o->name; o++) {
		if (nl >= OPT_MAX)
			return IBC_ERR_INVAL;
		lopts[nl].name = o->name;
		lopts[nl].has_arg = o->type == IBC_OPT_FLAG ? no_argument : required_argument;
		lopts[nl].flag = NULL;
		lopts[nl].val = 256 + (int)nl;
		nl++;
		if (o->short_name) {
			sopts[ns++] = (char)o->short_name;
			if (o->type != IBC_OPT_FLAG)
				sopts[ns++] = ':';
		}
	}
	/* a value >= 256 so getopt reports "--help=x" as a long option */
	help_val = 256 + (int)nl;
	lopts[nl++] = (struct option){ "help", no_argument, NULL, help_val };
	lopts[nl] = (struct option){ NULL, 0, NULL, 0 };
	sopts[ns++] = 'h';
	sopts[ns] = '\0';

	opterr = 0;
	optind = 0; /* full re-initialisation, so a program may parse twice */
	while (status == IBC_OK && (c = getopt_long(argc, argv, sopts, lopts, &idx)) != -1) {
		const struct ibc_opt *o = NULL;

		if (c == 'h' || c == help_val) {
			ibc_opt_usage_print(spec, stdout);
			return IBC_OPT_HELP_SHOWN;
		}
		/* optopt is the short option's character, 0 for an unknown long
		 * option, or the long option's val (>= 256) when it was given a value
		 * it does not take or is missing its value */
		if (c == '?') {
			const char *arg = argv[optind - 1];

			if (optopt > 0 && optopt < 256)
				return opt_fail(spec, "unknown option '-%c'", optopt);
			if (optopt >= 256)
				return opt_fail(spec, "option '%.*s' takes no value",
						(int)strcspn(arg, "="), arg);
			return opt_fail(spec, "unknown option '%s'", arg);
		}
		if (c == ':') {
			if (optopt > 0 && optopt < 256)
				return opt_fail(spec, "option '-%c' needs a value", optopt);
			return opt_fail(spec, "option '%s' needs a value", argv[optind - 1]);
		}
		if (c >= 256)
			o = &spec->opts[c - 256];
		else
			for (const struct ibc_opt *p = spec->opts; p->name; p++)
				if (p->short_name == c)
					o = p;
		if (!o)
			return IBC_ERR_INVAL;
		status = value_set(spec, o, optarg, !seen[o - spec->opts]);
		seen[o - spec->opts] = 1;
	}
	if (first_operand)
		*first_operand = optind;
	return status;
}

int ibc_opt_parse_all(const struct ibc_opt_spec *spec, int argc, char **argv)
{
	int first, rc = ibc_opt_parse(spec, argc, argv, &first);

	if (rc != IBC_OK)
		return rc;
	if (first < argc)
		return opt_fail(spec, "unexpected argument '%s'", argv[first]);
	return IBC_OK;
}
