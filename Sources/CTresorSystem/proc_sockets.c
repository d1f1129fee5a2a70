#define _GNU_SOURCE
#include "CTresorSystem.h"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

// The sockets processes hold, read from /proc/<pid>/fd without the C library's directory
// streams: one getdents64 buffer serves every folder of a scan, each descriptor's link is read
// into a buffer on the stack and its "socket:[N]" parsed in place.

struct tresor_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

enum {
    // Room for about 1,300 descriptors' entries per getdents64 call.
    listing_size = 32768,
    // More than any entry of /proc or /proc/<pid>/fd takes (a header and a name of digits).
    largest_entry = 64,
};

// The inode of the socket descriptor `name` of the open fd folder `folder` is, or 0 when it is
// not a socket.
static unsigned long long socket_inode(int folder, const char *name) {
    char target[40];
    ssize_t size = readlinkat(folder, name, target, sizeof(target));
    if (size < 10 || size >= (ssize_t)sizeof(target) || memcmp(target, "socket:[", 8) != 0 || target[size - 1] != ']') return 0;
    unsigned long long inode = 0;
    for (ssize_t i = 8; i < size - 1; i++) {
        if (target[i] < '0' || target[i] > '9') return 0;
        inode = inode * 10 + (unsigned long long)(target[i] - '0');
    }
    return inode;
}

// Calls `visit` with each socket inode among the descriptors of `folder` (an open
// /proc/<pid>/fd) until it returns nonzero. Returns that answer, 0 when the listing ended, -1 on
// error. procfs fills a getdents64 buffer until its listing ends, so a buffer returned with room
// for another entry is the listing's end: no last call that would return nothing.
static int visit_sockets(int folder, char *listing, int (*visit)(unsigned long long, void *), void *context) {
    for (;;) {
        long count = syscall(SYS_getdents64, folder, listing, listing_size);
        if (count <= 0) return count < 0 ? -1 : 0;
        for (long offset = 0; offset < count;) {
            struct tresor_dirent64 *entry = (struct tresor_dirent64 *)(listing + offset);
            offset += entry->d_reclen;
            if (entry->d_name[0] == '.') continue;
            unsigned long long inode = socket_inode(folder, entry->d_name);
            if (inode == 0) continue;
            int answer = visit(inode, context);
            if (answer != 0) return answer;
        }
        if (count + largest_entry <= listing_size) return 0;
    }
}

// A pid's folder name as a number, or 0 for anything else in /proc.
static pid_t pid_named(const char *name) {
    if (name[0] < '1' || name[0] > '9') return 0;
    long pid = 0;
    for (const char *digit = name; *digit != '\0'; digit++) {
        if (*digit < '0' || *digit > '9' || pid > 0x3fffffff) return 0;
        pid = pid * 10 + (*digit - '0');
    }
    return (pid_t)pid;
}

struct wanted_inodes {
    const unsigned long long *inodes;
    int count;
};

static int is_wanted(unsigned long long inode, void *context) {
    const struct wanted_inodes *wanted = context;
    for (int i = 0; i < wanted->count; i++)
        if (wanted->inodes[i] == inode) return 1;
    return 0;
}

// Every descriptor of every process of the user is looked at: whoever holds the socket may have
// received it from anyone (fork, SCM_RIGHTS, pidfd_getfd). Only the user's processes: the owner
// of /proc/<pid> (the process's, or root's for a kernel thread or a process made non-dumpable,
// whose descriptors the user cannot read) is checked before its fd folder is opened.
int tresor_socket_holders(const unsigned long long *inodes, int count, uid_t uid, pid_t excluding,
                          pid_t *holders, int capacity, const char *proc_root) {
    int root = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return -1;
    char *processes = malloc(2 * listing_size);
    if (processes == NULL) { close(root); return -1; }
    char *descriptors = processes + listing_size;
    struct wanted_inodes wanted = { inodes, count };
    int found = 0;
    long listed;
    while ((listed = syscall(SYS_getdents64, root, processes, listing_size)) > 0) {
        for (long offset = 0; offset < listed;) {
            struct tresor_dirent64 *process = (struct tresor_dirent64 *)(processes + offset);
            offset += process->d_reclen;
            pid_t pid = pid_named(process->d_name);
            if (pid == 0 || pid == excluding) continue;
            struct stat owner;
            if (fstatat(root, process->d_name, &owner, AT_SYMLINK_NOFOLLOW) != 0 || owner.st_uid != uid) continue;
            char path[32];
            size_t length = strlen(process->d_name);
            if (length + sizeof("/fd") > sizeof(path)) continue;
            memcpy(path, process->d_name, length);
            memcpy(path + length, "/fd", sizeof("/fd"));
            int folder = openat(root, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (folder < 0) continue;
            // The folder's own owner, now that it is open: the pid may have been reused since.
            int holds = fstat(folder, &owner) == 0 && owner.st_uid == uid && visit_sockets(folder, descriptors, is_wanted, &wanted) == 1;
            close(folder);
            if (holds && found < capacity) holders[found++] = pid;
        }
    }
    free(processes);
    close(root);
    return found;
}

struct held_inodes {
    unsigned long long *inodes;
    int capacity;
    int count;
};

static int keep(unsigned long long inode, void *context) {
    struct held_inodes *held = context;
    if (held->count < held->capacity) held->inodes[held->count] = inode;
    held->count++;
    return 0;
}

int tresor_socket_inodes(pid_t pid, unsigned long long *inodes, int capacity, const char *proc_root) {
    char path[4096 + 32];
    size_t length = strlen(proc_root);
    if (length + 32 > sizeof(path)) return -1;
    memcpy(path, proc_root, length);
    // "/<pid>/fd"
    char number[16];
    int digits = 0;
    unsigned int value = (unsigned int)pid;
    do { number[digits++] = (char)('0' + value % 10); value /= 10; } while (value != 0);
    path[length++] = '/';
    while (digits > 0) path[length++] = number[--digits];
    memcpy(path + length, "/fd", sizeof("/fd"));
    int folder = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (folder < 0) return -1;
    char *listing = malloc(listing_size);
    if (listing == NULL) { close(folder); return -1; }
    struct held_inodes held = { inodes, capacity, 0 };
    int failed = visit_sockets(folder, listing, keep, &held) < 0;
    free(listing);
    close(folder);
    return failed ? -1 : held.count;
}
