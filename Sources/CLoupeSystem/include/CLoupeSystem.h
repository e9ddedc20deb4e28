#ifndef CLOUPE_SYSTEM_H
#define CLOUPE_SYSTEM_H

// The one system call Loupe needs that Swift's Glibc module does not declare: renameat2(2), which swaps two
// names atomically (RENAME_EXCHANGE) or renames only where nothing is at the new name (RENAME_NOREPLACE).
// A write swaps its new file in and looks at what came out, so that a person's save that landed meanwhile
// is swapped back rather than lost.

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#define LOUPE_RENAME_NOREPLACE (1U << 0)
#define LOUPE_RENAME_EXCHANGE (1U << 1)

/// renameat2(2) through syscall(2); -1 with errno ENOSYS where the system has no such call (not Linux, or
/// a kernel older than 3.15). EINVAL: the file system cannot do what `flags` ask.
static inline int loupe_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
#if defined(__linux__) && defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags);
#else
    (void)olddirfd; (void)oldpath; (void)newdirfd; (void)newpath; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

#endif
