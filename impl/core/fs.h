/* Small file-system helpers shared by the harness, the runner and tools. */
#ifndef IBC_CORE_FS_H
#define IBC_CORE_FS_H

/* Creates dir and its missing parents (like mkdir -p); logs the failing
 * component.  IBC_ERR_INVAL for an empty or over-long path, IBC_ERR_IO else. */
int ibc_fs_mkdir_p(const char *dir);

#endif
