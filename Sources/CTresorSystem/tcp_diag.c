#define _GNU_SOURCE
#include "CTresorSystem.h"
#include "sock_diag.h"
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

int tresor_tcp_socket_uid(int family, const unsigned char *local, unsigned short local_port,
                          const unsigned char *remote, unsigned short remote_port, unsigned int *uid) {
    if (family != AF_INET && family != AF_INET6) { errno = EAFNOSUPPORT; return -1; }
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
    tresor_sock_diag_answer answer;
    ssize_t length = tresor_sock_diag_exchange(&query, sizeof(query), &answer);
    if (length < 0) return -1;
    struct nlmsghdr *header = &answer.align;
    size_t size_found;
    struct inet_diag_msg *message = tresor_sock_diag_next(&header, &length, &size_found);
    if (message == NULL) return -1;
    // A listening socket, or one in TIME_WAIT (listed as uid 0), is nobody's live connection.
    if (message->idiag_state == 10 || message->idiag_state == 6) { errno = ENOENT; return -1; }
    *uid = message->idiag_uid;
    return 0;
}
