#define _GNU_SOURCE
#include "CTresorSystem.h"
#include <sys/socket.h>
#include <sys/prctl.h>

int tresor_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    *pid = cred.pid; *uid = cred.uid; *gid = cred.gid;
    return 0;
}

int tresor_set_non_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
int tresor_is_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
int tresor_ucred_size(void) { return (int)sizeof(struct ucred); }

#include <malloc.h>
void tresor_tune_allocator(int mmap_threshold, int trim_threshold) {
    mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    mallopt(M_TRIM_THRESHOLD, trim_threshold);
}

#include <spawn.h>
short tresor_posix_spawn_setsid_flag(void) { return POSIX_SPAWN_SETSID; }

int tresor_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

#include <sys/syscall.h>
#include <poll.h>
#include <unistd.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int tresor_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int tresor_pidfd_has_exited(int pidfd) {
    // A pidfd polls readable once its process has exited.
    struct pollfd entry = { .fd = pidfd, .events = POLLIN, .revents = 0 };
    int ready = poll(&entry, 1, 0);
    if (ready < 0) return -1;
    return (ready > 0 && (entry.revents & (POLLIN | POLLHUP | POLLERR))) ? 1 : 0;
}
