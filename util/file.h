/*
** file.h: writing a file whole or not at all.
*/
#ifndef util_file_h
#define util_file_h

#include <stddef.h>

/* Write n bytes to path through a temporary file beside it, synced and
** renamed over path, so that a reader sees the old file or the new one,
** never a part. 0, or -1 with errno set (the temporary file removed). */
int file_write_atomic(const char *path, const char *data, size_t n);

#endif
