/*
** file.h: writing a file whole or not at all, and only where a file
** belongs. A target must be a regular file or a new name in a folder that
** exists; it must not be a file the command is reading. The data goes to
** a temporary file beside it, synced, renamed over it, and the folder is
** synced so that the rename survives a crash. The temporary file is
** removed on every failure, and on SIGINT, SIGTERM or SIGHUP while it
** exists.
*/
#ifndef util_file_h
#define util_file_h

#include <stddef.h>

/* A file a command reads, and what it is to the command, as a message
** names it ("the model file this command reads"). */
typedef struct file_read { const char *path, *what; } file_read;

/* May `path` be written? -1 with a reason in err when it names a
** directory, a device, a FIFO or a socket, when it is one of the nread
** files in `reading` (the same file under any name: the same device and
** inode, through a symbolic or a hard link; for a file not yet written,
** the same name in the same folder; a NULL path is skipped), or
** when its folder is missing or not writable. */
int file_check_target(const char *path, const file_read *reading, int nread, char *err, size_t errlen);

/* Write n bytes to path as above. 0, or -1 with errno set. */
int file_write_atomic(const char *path, const char *data, size_t n);

/* For writers that stream their own bytes (safetensors): make the
** temporary file beside path (its name into *tmp, malloc'd) and guard it
** against signals; file_tmp_commit syncs, renames and syncs the folder,
** file_tmp_abandon removes it. Both end the guard and free *tmp.
** The fd is open for writing. -1 with errno set. */
int file_tmp_open(const char *path, char **tmp);
int file_tmp_commit(int fd, char *tmp, const char *path);
void file_tmp_abandon(int fd, char *tmp);

/* fsync the folder that holds path (a rename in it becomes durable). */
int file_sync_folder(const char *path);

#endif
