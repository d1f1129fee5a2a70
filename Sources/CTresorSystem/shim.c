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

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#include <string.h>
#include <errno.h>

int tresor_set_passcred(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
}

long tresor_recv_with_credentials(int fd, void *buffer, unsigned long length, pid_t *pid, uid_t *uid) {
    struct iovec part = { .iov_base = buffer, .iov_len = length };
    // Room for the credentials only: descriptors a client sends are discarded (MSG_CTRUNC) and
    // closed by the kernel, never installed here.
    union { struct cmsghdr align; char bytes[CMSG_SPACE(sizeof(struct ucred))]; } control;
    struct msghdr message;
    memset(&message, 0, sizeof(message));
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof(control.bytes);
    *pid = 0;
    *uid = (uid_t)-1;
    ssize_t count = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (count <= 0) return (long)count;
    for (struct cmsghdr *entry = CMSG_FIRSTHDR(&message); entry != NULL; entry = CMSG_NXTHDR(&message, entry)) {
        if (entry->cmsg_level == SOL_SOCKET && entry->cmsg_type == SCM_CREDENTIALS
            && entry->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
            struct ucred credentials;
            memcpy(&credentials, CMSG_DATA(entry), sizeof(credentials));
            *pid = credentials.pid;
            *uid = credentials.uid;
        }
    }
    return (long)count;
}

int tresor_peer_pidfd(int fd) {
    int pidfd = -1;
    socklen_t size = sizeof(pidfd);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &size) != 0) return -1;
    return pidfd;
}

#include <sys/epoll.h>

int tresor_epoll_add(int epoll, int fd, unsigned long long token, int edge_triggered) {
    struct epoll_event event = { .events = EPOLLIN | EPOLLRDHUP | (edge_triggered ? (EPOLLOUT | EPOLLET) : 0), .data.u64 = token };
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

int tresor_epoll_remove(int epoll, int fd) { return epoll_ctl(epoll, EPOLL_CTL_DEL, fd, NULL); }

int tresor_epoll_wait(int epoll, unsigned long long *tokens, int *flags, int capacity, int timeout_ms) {
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epoll, events, capacity, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < count; i++) {
        tokens[i] = events[i].data.u64;
        int f = 0;
        if (events[i].events & (EPOLLIN | EPOLLRDHUP)) f |= 1;
        if (events[i].events & EPOLLOUT) f |= 2;
        if (events[i].events & (EPOLLHUP | EPOLLERR)) f |= 4;
        flags[i] = f;
    }
    return count;
}

#include <sys/eventfd.h>
int tresor_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
int tresor_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
int tresor_accept(int listener) { return accept4(listener, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }

#include "sock_diag.h"
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <linux/inet_diag.h>

int tresor_unix_socket_peer(unsigned long long inode, unsigned long long *peer_inode,
                            unsigned char *name, unsigned long name_capacity, unsigned long *name_length) {
    struct {
        struct nlmsghdr header;
        struct unix_diag_req request;
    } query;
    memset(&query, 0, sizeof(query));
    query.header.nlmsg_len = sizeof(query);
    query.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    query.header.nlmsg_flags = NLM_F_REQUEST;
    query.request.sdiag_family = AF_UNIX;
    query.request.udiag_states = ~0u;
    query.request.udiag_ino = (unsigned int)inode;
    query.request.udiag_show = UDIAG_SHOW_PEER | UDIAG_SHOW_NAME;
    // No cookie: the lookup is by inode alone.
    query.request.udiag_cookie[0] = INET_DIAG_NOCOOKIE;
    query.request.udiag_cookie[1] = INET_DIAG_NOCOOKIE;
    tresor_sock_diag_answer answer;
    ssize_t length = tresor_sock_diag_exchange(&query, sizeof(query), &answer);
    if (length < 0) return -1;
    *peer_inode = 0;
    *name_length = 0;
    struct nlmsghdr *header = &answer.align;
    struct unix_diag_msg *message;
    size_t size_found;
    while ((message = tresor_sock_diag_next(&header, &length, &size_found)) != NULL) {
        if (message->udiag_ino != (unsigned int)inode) continue;
        long remaining = (long)size_found - (long)sizeof(*message);
        for (struct nlattr *attribute = (struct nlattr *)(message + 1);
             remaining >= (long)sizeof(struct nlattr) && attribute->nla_len >= sizeof(struct nlattr) && attribute->nla_len <= remaining;
             remaining -= NLA_ALIGN(attribute->nla_len), attribute = (struct nlattr *)((char *)attribute + NLA_ALIGN(attribute->nla_len))) {
            unsigned long size = attribute->nla_len - sizeof(struct nlattr);
            void *data = (char *)attribute + sizeof(struct nlattr);
            if (attribute->nla_type == UNIX_DIAG_PEER && size >= sizeof(unsigned int)) {
                *peer_inode = *(unsigned int *)data;
            } else if (attribute->nla_type == UNIX_DIAG_NAME) {
                if (size > name_capacity) size = name_capacity;
                memcpy(name, data, size);
                *name_length = size;
            }
        }
        return 0;
    }
    return -1;
}

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
int tresor_rename_no_replace(const char *from, const char *to) {
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    // The file system does not take the flag: a hard link fails just as atomically if `to` exists.
    if (link(from, to) != 0) return -1;
    unlink(from);
    return 0;
}

#include <fcntl.h>
#include <sys/stat.h>
int tresor_birth_time(const char *path, long long *seconds, unsigned int *nanoseconds) {
    struct statx info;
    if (statx(AT_FDCWD, path, 0, STATX_BTIME, &info) != 0) return -1;
    if (!(info.stx_mask & STATX_BTIME)) { errno = ENODATA; return -1; }
    *seconds = info.stx_btime.tv_sec; *nanoseconds = info.stx_btime.tv_nsec;
    return 0;
}
