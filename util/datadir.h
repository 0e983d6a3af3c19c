/*
** datadir.h: where carve finds the files it ships: the stdlib tactics
** (`use "NAME"`) and the device profiles (`--device NAME`). This is the one
** place that knows the search order and reads the environment for it; the
** layers above take the folders as options (tactic_opts.stdlib_dir and
** .profile_dir, repl_opts.profile_dir, sim_profile_load's dir), and fall
** back to what this file says only where a caller gave none.
**
** The folders, searched in this order (a name is taken from the first
** folder that has it):
**   1. $CARVE_STDLIB (stdlib) or $CARVE_PROFILES (profiles), when set;
**   2. DIR/stdlib-tactics or DIR/profiles for each DIR of $CARVE_PATH
**      (':'-separated, empty entries skipped);
**   3. when this binary lies in its build tree: the source tree's
**      stdlib-tactics/ and profiles/;
**      else the installed folders, found from the binary
**      (/proc/self/exe: BINDIR/../share/carve/... or whatever path leads
**      from the configured bindir to pkgdatadir), so that a moved prefix
**      or a DESTDIR install works; then the configured pkgdatadir itself
**      when that is another folder.
** Folders that do not exist stay in the list: messages say where carve
** looked.
*/
#ifndef util_datadir_h
#define util_datadir_h

#include <stddef.h>
#include "util/arena.h"

typedef enum datadir_kind { DATADIR_STDLIB, DATADIR_PROFILES } datadir_kind;

/* The folders to search for kind's files, ':'-separated, first first.
** Worked out once, from the environment at the first call (of either
** kind), and kept in static storage until exit. */
const char *datadir_path(datadir_kind k);

/* The folders of a ':'-separated list, one a call: the next one's start in
** *dir and its length; *list moves past it. 0 at the end (empty entries
** are skipped). */
size_t datadir_next(const char **list, const char **dir);

/* The subfolder of a CARVE_PATH entry that holds kind's files
** ("stdlib-tactics", "profiles"). */
const char *datadir_sub(datadir_kind k);

/* The files in the folders of a ':'-separated list whose names end in one
** of exts (NULL-terminated), each ending dropped: sorted, each name once,
** joined by ", " into a ("" when there are none). Messages list them:
** "the stdlib has batch, embedding, ...". */
const char *datadir_names(arena *a, const char *list, const char *const *exts);

#endif
