#define _GNU_SOURCE
#include "CTresorSystem.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

int tresor_tcp_socket_uid(int family, const unsigned char *local, unsigned short local_port,
                          const unsigned char *remote, unsigned short remote_port, unsigned int *uid) {
    if (family != AF_INET && family != AF_INET6) { errno = EAFNOSUPPORT; return -1; }
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -1;
    struct {
        struct nlmsghdr header;
        struct inet_diag_req_v2 request;
    } query;
    memset(&query, 0, sizeof(query));
    query.header.nlmsg_len = sizeof(query);
    query.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    // No NLM_F_DUMP: the kernel looks the one socket up by its addresses and ports.
    query.header.nlmsg_flags = NLM_F_REQUEST;
    query.request.sdiag_family = (unsigned char)family;
    query.request.sdiag_protocol = IPPROTO_TCP;
    query.request.idiag_states = ~0u;
    size_t size = family == AF_INET ? 4 : 16;
    memcpy(query.request.id.idiag_src, local, size);
    memcpy(query.request.id.idiag_dst, remote, size);
    query.request.id.idiag_sport = htons(local_port);
    query.request.id.idiag_dport = htons(remote_port);
    query.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    query.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    if (sendto(fd, &query, sizeof(query), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
        int saved = errno; close(fd); errno = saved; return -1;
    }
    union { struct nlmsghdr align; unsigned char bytes[8192]; } answer;
    ssize_t length = recv(fd, answer.bytes, sizeof(answer.bytes), 0);
    int saved = errno;
    close(fd);
    if (length < 0) { errno = saved; return -1; }
    for (struct nlmsghdr *header = &answer.align; NLMSG_OK(header, (unsigned int)length); header = NLMSG_NEXT(header, length)) {
        if (header->nlmsg_type == NLMSG_ERROR) {
            struct nlmsgerr *failure = NLMSG_DATA(header);
            errno = failure->error ? -failure->error : ENOENT;
            return -1;
        }
        if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
        struct inet_diag_msg *message = NLMSG_DATA(header);
        // A listening socket, or one in TIME_WAIT (listed as uid 0), is nobody's live connection.
        if (message->idiag_state == 10 || message->idiag_state == 6) { errno = ENOENT; return -1; }
        *uid = message->idiag_uid;
        return 0;
    }
    errno = ENOENT;
    return -1;
}
