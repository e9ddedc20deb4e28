#ifndef CLOUPE_SYSTEM_H
#define CLOUPE_SYSTEM_H

// The system calls Loupe needs that Swift's Glibc module does not declare. renameat2(2) swaps two names
// atomically (RENAME_EXCHANGE) or renames only where nothing is at the new name (RENAME_NOREPLACE): a write
// swaps its new file in and looks at what came out, so that a person's save that landed meanwhile is swapped
// back rather than lost. openat2(2) opens a path only where no link is on the way (a fast path for reading
// secret files: `Sources/Loupe/FastPaths/OpenWithoutLinks.swift`).

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

/// openat2(2) relative to the working directory, refusing every symbolic link on the way
/// (RESOLVE_NO_SYMLINKS: ELOOP where there is one): what it opens is where the path, as written, leads. -1 with
/// errno ENOSYS where the system has no such call (not Linux, or a kernel older than 5.6); a sandbox may refuse
/// it with another error (EPERM).
static inline int loupe_open_without_links(const char *path, int flags) {
#if defined(__linux__) && defined(SYS_openat2)
    struct { unsigned long long flags, mode, resolve; } how = { (unsigned long long)flags, 0, 0x04 };
    return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
#else
    (void)path; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

#endif
