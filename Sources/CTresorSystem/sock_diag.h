// The kernel's socket diagnostics (NETLINK_SOCK_DIAG), asked about one socket: what the Unix
// and TCP lookups share. Private to CTresorSystem.
#ifndef TRESOR_SOCK_DIAG_H
#define TRESOR_SOCK_DIAG_H

#include <sys/types.h>
#include <linux/netlink.h>

/// Room for the kernel's answer about one socket.
typedef union { struct nlmsghdr align; unsigned char bytes[8192]; } tresor_sock_diag_answer;

/// Sends `query` (a netlink header and its request, `size` bytes) to the kernel on a socket of
/// its own and reads the answer into `answer`. Returns the answer's length, or -1 with errno set.
ssize_t tresor_sock_diag_exchange(const void *query, size_t size, tresor_sock_diag_answer *answer);

/// The next socket description (`SOCK_DIAG_BY_FAMILY`'s payload, `*size` bytes with its
/// attributes) of an answer, advancing `*header` and `*length` past it; NULL at the end (errno
/// ENOENT) or when the kernel answered an error (errno that error).
void *tresor_sock_diag_next(struct nlmsghdr **header, ssize_t *length, size_t *size);

#endif
