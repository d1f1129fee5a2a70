#ifndef CTRESOR_SYSTEM_H
#define CTRESOR_SYSTEM_H
#include <sys/types.h>
/// Reads the credentials of the process at the other end of a connected Unix socket
/// (SO_PEERCRED). Returns 0 on success, -1 with errno set otherwise.
int tresor_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);
/// Marks the process non-dumpable (PR_SET_DUMPABLE 0): no core file, and /proc/<pid>/mem
/// and ptrace are closed to other processes of the same uid. Returns 0 or -1 with errno.
int tresor_set_non_dumpable(void);
/// Returns PR_GET_DUMPABLE (1 dumpable, 0 not) or -1 with errno.
int tresor_is_dumpable(void);
/// The size of `struct ucred`, so Swift can ask NIO for SO_PEERCRED as raw bytes.
int tresor_ucred_size(void);
/// Asks glibc to keep large buffers instead of mapping and unmapping them per use.
void tresor_tune_allocator(int mmap_threshold, int trim_threshold);
/// POSIX_SPAWN_SETSID, which Swift's Glibc does not export.
short tresor_posix_spawn_setsid_flag(void);
#include <spawn.h>
/// Closes every descriptor from `lowest` up in the spawned child, so a daemon started by the
/// CLI holds none of the CLI's pipes open (its parent would wait for EOF forever).
int tresor_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);
/// A file descriptor that refers to process `pid` itself (pidfd_open(2)): unlike the pid, it
/// can never come to name another process. -1 with errno when the process is gone.
int tresor_pidfd_open(pid_t pid);
/// 1 when the process behind `pidfd` has exited, 0 while it runs, -1 with errno on error.
int tresor_pidfd_has_exited(int pidfd);
/// Turns SO_PASSCRED on: the kernel then attaches the sending process's credentials to every
/// message written to the socket (and to connections accepted from it), and no single read
/// returns bytes of two senders. Returns 0 or -1 with errno.
int tresor_set_passcred(int fd);
/// One non-blocking recvmsg(2) of up to `length` bytes with the sender's SCM_CREDENTIALS.
/// Returns the byte count (0 at end of stream), or -1 with errno (EAGAIN when nothing waits).
/// `*pid` is the sending process as the kernel recorded it, 0 when no credentials came with
/// the bytes; `*uid` likewise. Descriptors a sender attaches are never accepted.
long tresor_recv_with_credentials(int fd, void *buffer, unsigned long length, pid_t *pid, uid_t *uid);
/// A pidfd for the process that connected the socket (SO_PEERPIDFD, Linux 6.5): taken by the
/// kernel at connect(2), so it names that process even if its pid is reused. -1 with errno.
int tresor_peer_pidfd(int fd);
/// epoll(7) for the socket API's own event loop: `token` comes back with each event.
/// Edge-triggered interest in reading, writing and hang-ups. Returns 0 or -1 with errno.
int tresor_epoll_add(int epoll, int fd, unsigned long long token, int edge_triggered);
int tresor_epoll_remove(int epoll, int fd);
/// Waits up to `timeout_ms` (-1: forever) for at most `capacity` events. Returns their count
/// (0 on timeout or EINTR) or -1 with errno. Flags: 1 readable, 2 writable, 4 hang-up or error.
int tresor_epoll_wait(int epoll, unsigned long long *tokens, int *flags, int capacity, int timeout_ms);
/// A new epoll instance and a non-blocking eventfd (both close-on-exec), -1 with errno.
int tresor_epoll_create(void);
int tresor_eventfd(void);
/// accept4(2) of a connection, non-blocking and close-on-exec. -1 with errno.
int tresor_accept(int listener);
/// Unix socket `inode` as the kernel's socket diagnostics (NETLINK_SOCK_DIAG, unix_diag) describe
/// it: the inode of its peer (0 when not connected) and the address it is bound to — a server's
/// accepted socket carries the listening socket's address. Works on any socket of this network
/// namespace, whoever holds it. Returns 0, or -1 with errno (ENOENT: no such socket).
/// `*name_length` is 0 for a socket with no address; an abstract address starts with a NUL byte.
int tresor_unix_socket_peer(unsigned long long inode, unsigned long long *peer_inode,
                            unsigned char *name, unsigned long name_capacity, unsigned long *name_length);
/// The processes of `uid`, but `excluding`, that hold a socket whose inode is one of `inodes`
/// open (/proc/<pid>/fd). Writes at most `capacity` pids to `holders`; returns how many were
/// found, or -1 with errno when /proc cannot be read.
int tresor_socket_holders(const unsigned long long *inodes, int count, uid_t uid, pid_t excluding,
                          pid_t *holders, int capacity, const char *proc_root);
/// The inodes of the sockets process `pid` holds open (/proc/<pid>/fd under `proc_root`): writes
/// at most `capacity` to `inodes` and returns how many it holds (more than `capacity` when they did
/// not fit), or -1 with errno when its descriptors cannot be read.
int tresor_socket_inodes(pid_t pid, unsigned long long *inodes, int capacity, const char *proc_root);
/// The uid owning the TCP socket whose own end is `local`:`local_port` and whose other end is
/// `remote`:`remote_port` (addresses of `family`, AF_INET 4 bytes or AF_INET6 16, in network
/// order; ports in host order), as the kernel's socket diagnostics (NETLINK_SOCK_DIAG,
/// inet_diag) find that one socket — whoever holds it. Returns 0, or -1 with errno (ENOENT: no
/// such socket, or no inet_diag in this kernel).
int tresor_tcp_socket_uid(int family, const unsigned char *local, unsigned short local_port,
                          const unsigned char *remote, unsigned short remote_port, unsigned int *uid);
/// Moves `from` to `to` unless something is at `to`, in one step (renameat2 with
/// RENAME_NOREPLACE; where the file system does not take the flag, a hard link then the unlink of
/// `from`). Returns 0, or -1 with errno (EEXIST when `to` exists).
int tresor_rename_no_replace(const char *from, const char *to);
/// When the file at `path` was made (statx(2)'s birth time): 0, or -1 with errno — ENODATA when
/// its file system does not record it. Foundation's `creationDate` on Linux is the modification time.
int tresor_birth_time(const char *path, long long *seconds, unsigned int *nanoseconds);
#endif
