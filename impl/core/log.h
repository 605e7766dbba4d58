/* Logging to stderr.  The level comes from IBCHAR_LOG=debug|info|warn|error
 * (default warn).  Each line: "<prog>[<tag>]: <level>: <message>".  Log an
 * error once, where it is decided; callers up the stack pass the status on. */
#ifndef IBC_CORE_LOG_H
#define IBC_CORE_LOG_H

#include <stdarg.h>

enum ibc_log_level {
	IBC_LOG_DEBUG = 0,
	IBC_LOG_INFO = 1,
	IBC_LOG_WARN = 2,
	IBC_LOG_ERROR = 3,
	IBC_LOG_NONE = 4
};

/* Sets the program name and reads IBCHAR_LOG (an unknown value is reported
 * once and ignored).  Safe to call more than once. */
void ibc_log_init(const char *prog);
void ibc_log_level_set(enum ibc_log_level level);
enum ibc_log_level ibc_log_level_get(void);
int ibc_log_enabled(enum ibc_log_level level);
/* A tag shown after the program name, e.g. "rank 3"; NULL clears it. */
void ibc_log_tag_set(const char *tag);

void ibc_log_msg(enum ibc_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ibc_log_vmsg(enum ibc_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#define ibc_debug(...) ibc_log_msg(IBC_LOG_DEBUG, __VA_ARGS__)
#define ibc_info(...)  ibc_log_msg(IBC_LOG_INFO, __VA_ARGS__)
#define ibc_warn(...)  ibc_log_msg(IBC_LOG_WARN, __VA_ARGS__)
#define ibc_error(...) ibc_log_msg(IBC_LOG_ERROR, __VA_ARGS__)

#endif
