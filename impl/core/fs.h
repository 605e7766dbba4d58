/* Small file-system helpers shared by the harness, the runner and tools. */
#ifndef IBC_CORE_FS_H
#define IBC_CORE_FS_H

#include <stddef.h>

/* Creates dir and its missing parents (like mkdir -p); logs the failing
 * component.  IBC_ERR_INVAL for an empty or over-long path, IBC_ERR_IO else. */
int ibc_fs_mkdir_p(const char *dir);

/* All n bytes to / from fd, retrying short transfers and EINTR; nothing
 * logged (the caller says what the other end is).  IBC_OK; IBC_ERR_CLOSED
 * when read meets end of file; IBC_ERR_IO on an error (errno kept). */
int ibc_fs_write_all(int fd, const void *p, size_t n);
int ibc_fs_read_all(int fd, void *p, size_t n);

#endif
