/* What can run here: verbs devices with an active port, programs on PATH. */
#ifndef IBC_HARNESS_AVAIL_H
#define IBC_HARNESS_AVAIL_H

#include <stddef.h>

/* Number of active verbs ports; buf gets "dev:port,..." */
int ibc_harness_avail_verbs(char *buf, size_t cap);
/* 1 when name is an executable on PATH (or a path); its full path in path. */
int ibc_harness_avail_program(const char *name, char *path, size_t cap);

#endif
