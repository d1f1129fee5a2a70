// Tries to speak to tresord as a process it is not (docs/SECURITY.md §3.4). Built by the tests
// with `cc` (BorrowedSocketTests); each mode prints what the daemon answered.
//
//   borrowed-socket exec-stopped SOCKET PATH APP   the child connects and execs APP, which is
//       stopped before its first instruction (caught at exec with ptrace, then detached with
//       SIGSTOP, so nothing traces it); the parent sends `GET PATH` on the shared socket.
//   borrowed-socket pid-reuse SOCKET PATH          a child connects and sends `GET PATH`, then
//       exits; another child is given its pid (root: /proc/sys/kernel/ns_last_pid) and sends
//       `GET PATH` on the same socket.
//   borrowed-socket traced APP ARGS...             runs APP under ptrace to its end.
//
// An answer is printed as `<label>: <status> <body>`, a connection closed without one as
// `<label>: closed`.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void fail(const char *what) {
    fprintf(stderr, "borrowed-socket: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void connect_to(int fd, const char *path) {
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    strncpy(address.sun_path, path, sizeof(address.sun_path) - 1);
    if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) fail("connect");
}

// Sends `GET path` on fd and prints the answer (status and body) or that the connection closed.
static void exchange(int fd, const char *path, const char *label) {
    char request[1024];
    int length = snprintf(request, sizeof(request), "GET %s HTTP/1.1\r\nHost: tresord\r\n\r\n", path);
    if (write(fd, request, length) != length) {
        printf("%s: closed\n", label);
        fflush(stdout);
        return;
    }
    char answer[65536];
    size_t have = 0;
    for (;;) {
        struct pollfd entry = { .fd = fd, .events = POLLIN };
        if (poll(&entry, 1, 10000) <= 0) break;
        ssize_t count = read(fd, answer + have, sizeof(answer) - 1 - have);
        if (count <= 0) break;
        have += (size_t)count;
        answer[have] = 0;
        char *end = strstr(answer, "\r\n\r\n");
        char *lengthField = strcasestr(answer, "content-length:");
        if (end && lengthField && have >= (size_t)(end + 4 - answer) + (size_t)atol(lengthField + 15)) break;
    }
    answer[have] = 0;
    int status = 0;
    char *body = strstr(answer, "\r\n\r\n");
    if (have == 0 || sscanf(answer, "HTTP/1.1 %d", &status) != 1 || !body) {
        printf("%s: closed\n", label);
    } else {
        printf("%s: %d %s\n", label, status, body + 4);
    }
    fflush(stdout);
}

static int exec_stopped(const char *socketPath, const char *path, char **app) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) fail("socket");
    pid_t child = fork();
    if (child < 0) fail("fork");
    if (child == 0) {
        connect_to(fd, socketPath);
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execv(app[0], app);
        _exit(127);
    }
    int status;
    if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) fail("catching the child at exec");
    // Untraced from here on, and stopped before running a single instruction of APP.
    if (ptrace(PTRACE_DETACH, child, NULL, (void *)(long)SIGSTOP) != 0) fail("ptrace detach");
    if (waitpid(child, &status, WUNTRACED) != child || !WIFSTOPPED(status)) fail("waiting for the stop");
    printf("child %d stopped at exec of %s\n", child, app[0]);
    exchange(fd, path, "parent");
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    return 0;
}

static int pid_reuse(const char *socketPath, const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) fail("socket");
    pid_t first = fork();
    if (first < 0) fail("fork");
    if (first == 0) {
        connect_to(fd, socketPath);
        exchange(fd, path, "first");
        _exit(0);
    }
    int status;
    waitpid(first, &status, 0);
    // Other processes fork too: try until the next child gets the first one's pid.
    for (int attempt = 0; attempt < 200; attempt++) {
        FILE *last = fopen("/proc/sys/kernel/ns_last_pid", "w");
        if (!last) fail("opening ns_last_pid");
        fprintf(last, "%d", first - 1);
        if (fclose(last) != 0) fail("writing ns_last_pid");
        pid_t second = fork();
        if (second < 0) fail("fork");
        if (second == 0) {
            if (getpid() != first) _exit(77);
            printf("pid %d reused\n", first);
            fflush(stdout);
            exchange(fd, path, "second");
            _exit(0);
        }
        waitpid(second, &status, 0);
        if (second == first) return 0;
    }
    printf("pid %d not reused\n", first);
    return 3;
}

static int traced(char **app) {
    pid_t child = fork();
    if (child < 0) fail("fork");
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execv(app[0], app);
        _exit(127);
    }
    for (;;) {
        int status;
        if (waitpid(child, &status, 0) != child) fail("waitpid");
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
        int signal = WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status);
        ptrace(PTRACE_CONT, child, NULL, (void *)(long)signal);
    }
}

int main(int argc, char **argv) {
    if (argc >= 5 && strcmp(argv[1], "exec-stopped") == 0) return exec_stopped(argv[2], argv[3], argv + 4);
    if (argc == 4 && strcmp(argv[1], "pid-reuse") == 0) return pid_reuse(argv[2], argv[3]);
    if (argc >= 3 && strcmp(argv[1], "traced") == 0) return traced(argv + 2);
    fprintf(stderr, "usage: borrowed-socket exec-stopped SOCKET PATH APP | pid-reuse SOCKET PATH | traced APP ARGS...\n");
    return 2;
}
