#include "core/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum ibc_log_level log_level = IBC_LOG_WARN;
static char log_prog[64] = "ibchar";
static char log_tag[64];

static const char *const level_names[] = { "debug", "info", "warn", "error", "none" };

void ibc_log_init(const char *prog)
{
	const char *env = getenv("IBCHAR_LOG");
	const char *base;

	if (prog) {
		base = strrchr(prog, '/');
		snprintf(log_prog, sizeof(log_prog), "%s", base ? base + 1 : prog);
	}
	if (!env || !*env)
		return;
	for (int i = IBC_LOG_DEBUG; i <= IBC_LOG_NONE; i++) {
		if (strcmp(env, level_names[i]) == 0) {
			log_level = (enum ibc_log_level)i;
			return;
		}
	}
	ibc_warn("IBCHAR_LOG=%s is not one of debug, info, warn, error, none; using warn", env);
}

void ibc_log_level_set(enum ibc_log_level level) { log_level = level; }
enum ibc_log_level ibc_log_level_get(void) { return log_level; }
int ibc_log_enabled(enum ibc_log_level level) { return level >= log_level && level < IBC_LOG_NONE; }

void ibc_log_tag_set(const char *tag)
{
	snprintf(log_tag, sizeof(log_tag), "%s", tag ? tag : "");
}

void ibc_log_vmsg(enum ibc_log_level level, const char *fmt, va_list ap)
{
	char line[1024];
	int n;

	if (!ibc_log_enabled(level))
		return;
	/* format the whole line first so concurrent ranks do not interleave */
	n = snprintf(line, sizeof(line), log_tag[0] ? "%s[%s]: %s: " : "%s%s: %s: ",
		     log_prog, log_tag, level_names[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}

void ibc_log_msg(enum ibc_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ibc_log_vmsg(level, fmt, ap);
	va_end(ap);
}
