#define _GNU_SOURCE
#include "sock_diag.h"
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/sock_diag.h>

ssize_t tresor_sock_diag_exchange(const void *query, size_t size, tresor_sock_diag_answer *answer) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -1;
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    if (sendto(fd, query, size, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
        int saved = errno; close(fd); errno = saved; return -1;
    }
    ssize_t length = recv(fd, answer->bytes, sizeof(answer->bytes), 0);
    int saved = errno;
    close(fd);
    errno = saved;
    return length;
}

void *tresor_sock_diag_next(struct nlmsghdr **header, ssize_t *length, size_t *size) {
    for (; NLMSG_OK(*header, (unsigned int)*length); *header = NLMSG_NEXT(*header, *length)) {
        if ((*header)->nlmsg_type == NLMSG_ERROR) {
            struct nlmsgerr *failure = NLMSG_DATA(*header);
            errno = failure->error ? -failure->error : ENOENT;
            return NULL;
        }
        if ((*header)->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
        struct nlmsghdr *found = *header;
        *header = NLMSG_NEXT(*header, *length);
        *size = found->nlmsg_len - NLMSG_HDRLEN;
        return NLMSG_DATA(found);
    }
    errno = ENOENT;
    return NULL;
}
