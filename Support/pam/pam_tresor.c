/*
 * pam_tresor: unlocks Tresor's login keybag with the login password, when the user linked the two
 * (`tresor passcode link-login`). docs/SECURITY.md, "Unlock at login", says what that gives up.
 *
 *   auth     keeps the password the stack authenticated with, and whose it is (PAM data, wiped by
 *            its cleanup); decides nothing and asks nothing. Only that user's daemon ever gets it.
 *   setcred  (after a successful auth: a screensaver's unlock, or a login before its session)
 *            hands the password to the user's tresord when one is already running.
 *   session  open_session hands it over, starting tresord when none runs.
 *   password after the module that changed it (requisite, so a failed change stops the stack):
 *            the link follows from the old password to the new; without the old one (root's
 *            `passwd USER`) the link is marked stale.
 *
 * Handing over: fork, drop to the user's uid and groups (setgroups, setgid, setuid, each checked), exec
 * `tresor pam-helper …` with the password on a pipe — never argv or the environment. A fresh
 * executable, because a process forked from a root login program holds that program's memory and
 * is not dumpable, so the daemon could not identify it. The helper talks to
 * $XDG_RUNTIME_DIR/tresor/tresord.sock (XDG_RUNTIME_DIR from the PAM environment, else
 * /run/user/UID when it exists) and starts tresord through the systemd user unit or directly.
 * Every wait is bounded (timeout=SECONDS, default 10) and nothing here ever fails a login.
 *
 * Options: tresor=PATH (the `tresor` executable; tresord is found beside it), timeout=SECONDS, debug.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define PAM_SM_AUTH
#define PAM_SM_SESSION
#define PAM_SM_PASSWORD
#include <security/pam_ext.h>
#include <security/pam_modules.h>

#ifndef TRESOR_PATH
#define TRESOR_PATH "/usr/local/bin/tresor"
#endif

/* The password between auth and the session; its cleanup wipes it. */
#define PASSWORD_DATA "pam_tresor.password"
/* Set once the daemon took the password, so a session after setcred does not hand it again. */
#define HANDED_DATA "pam_tresor.handed"

struct options {
    const char *tresor;
    int timeout_seconds;
    int debug;
};

static void parse_options(pam_handle_t *pamh, int argc, const char **argv, struct options *options)
{
    options->tresor = TRESOR_PATH;
    options->timeout_seconds = 10;
    options->debug = 0;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "tresor=", 7) == 0) {
            options->tresor = argv[i] + 7;
        } else if (strncmp(argv[i], "timeout=", 8) == 0) {
            int seconds = atoi(argv[i] + 8);
            if (seconds >= 1 && seconds <= 60) options->timeout_seconds = seconds;
        } else if (strcmp(argv[i], "debug") == 0) {
            options->debug = 1;
        } else {
            pam_syslog(pamh, LOG_WARNING, "unknown option %s", argv[i]);
        }
    }
}

/* The password and the user it authenticated: a session or credentials for another user (sudo -u,
 * which switches PAM_USER after authenticating the caller) must never get it. */
struct kept_password {
    char *user;
    char *password;
};

static void wipe_password(pam_handle_t *pamh, void *data, int error_status)
{
    (void)pamh;
    (void)error_status;
    struct kept_password *kept = data;
    if (kept == NULL) return;
    if (kept->password != NULL) {
        explicit_bzero(kept->password, strlen(kept->password));
        free(kept->password);
    }
    free(kept->user);
    free(kept);
}

static void no_cleanup(pam_handle_t *pamh, void *data, int error_status)
{
    (void)pamh;
    (void)data;
    (void)error_status;
}

/* Writes all of `length` bytes, or fails. */
static int write_all(int fd, const char *bytes, size_t length)
{
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        bytes += written;
        length -= (size_t)written;
    }
    return 0;
}

/* The user's groups, looked up before the fork: after it, in a threaded login program, only
 * async-signal-safe calls are safe, and an NSS lookup is not one. */
struct user_groups {
    gid_t list[256];
    int count;
};

static void look_up_groups(const struct passwd *user, struct user_groups *groups)
{
    groups->count = (int)(sizeof groups->list / sizeof groups->list[0]);
    if (getgrouplist(user->pw_name, user->pw_gid, groups->list, &groups->count) < 0) {
        groups->list[0] = user->pw_gid;
        groups->count = 1;
    }
}

/* In the child: become the user for good, or exit. */
static void become_user(const struct passwd *user, const struct user_groups *groups)
{
    if (geteuid() == 0) {
        if (setgroups((size_t)groups->count, groups->list) != 0) _exit(2);
        if (setgid(user->pw_gid) != 0) _exit(2);
        if (setuid(user->pw_uid) != 0) _exit(2);
    }
    /* A screensaver runs as the user already; anyone else is no one to hand a password for. */
    if (getuid() != user->pw_uid || geteuid() != user->pw_uid) _exit(2);
    if (getgid() != user->pw_gid || getegid() != user->pw_gid) _exit(2);
    if (user->pw_uid != 0 && setuid(0) == 0) _exit(2);
}

/* The user's runtime directory: pam_systemd's XDG_RUNTIME_DIR, else /run/user/UID when it exists
 * and is the user's. NULL when neither: the helper then uses the home's own socket folder. */
static const char *runtime_directory(pam_handle_t *pamh, const struct passwd *user, char *buffer, size_t size)
{
    const char *from_pam = pam_getenv(pamh, "XDG_RUNTIME_DIR");
    if (from_pam != NULL && from_pam[0] == '/') return from_pam;
    snprintf(buffer, size, "/run/user/%u", (unsigned)user->pw_uid);
    struct stat info;
    if (stat(buffer, &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == user->pw_uid) return buffer;
    return NULL;
}

/*
 * Runs `tresor pam-helper ARGUMENTS…` as `user` with `input` on its standard input, for at most
 * the timeout. Returns the helper's exit status, or -1 when it could not run or took too long.
 */
static int run_helper(pam_handle_t *pamh, const struct options *options, const struct passwd *user, const char *const arguments[],
                      const char *input, size_t input_length)
{
    char runtime_buffer[64];
    const char *runtime = runtime_directory(pamh, user, runtime_buffer, sizeof runtime_buffer);
    char home[PATH_MAX + 8], name[300], logname[300], runtime_variable[PATH_MAX + 24], timeout[48];
    snprintf(home, sizeof home, "HOME=%s", user->pw_dir);
    snprintf(name, sizeof name, "USER=%s", user->pw_name);
    snprintf(logname, sizeof logname, "LOGNAME=%s", user->pw_name);
    snprintf(timeout, sizeof timeout, "TRESOR_TIMEOUT=%d", options->timeout_seconds);
    snprintf(runtime_variable, sizeof runtime_variable, "XDG_RUNTIME_DIR=%s", runtime != NULL ? runtime : "");
    /* The helper's whole environment: nothing of the login program's, no secret. */
    char *environment[] = {
        home, name, logname, timeout, "PATH=/usr/local/bin:/usr/bin:/bin", "SWIFT_BACKTRACE=enable=no",
        runtime != NULL ? runtime_variable : NULL, NULL,
    };
    const char *argv[8] = {options->tresor, "pam-helper"};
    int argc = 2;
    for (int i = 0; arguments[i] != NULL && argc < 7; i++) argv[argc++] = arguments[i];
    argv[argc] = NULL;

    struct user_groups groups;
    look_up_groups(user, &groups);

    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;

    /* The application's own SIGCHLD handler must not reap the helper before we do, and a helper
     * that exits before reading must not kill the application with SIGPIPE. */
    struct sigaction default_action = {.sa_handler = SIG_DFL}, ignore_action = {.sa_handler = SIG_IGN};
    struct sigaction saved_child, saved_pipe;
    sigemptyset(&default_action.sa_mask);
    sigemptyset(&ignore_action.sa_mask);
    sigaction(SIGCHLD, &default_action, &saved_child);
    sigaction(SIGPIPE, &ignore_action, &saved_pipe);

    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(pipe_fds[0], 0) != 0) _exit(2);
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, 1) != 1 || dup2(null, 2) != 2) _exit(2);
        closefrom(3);
        become_user(user, &groups);
        if (chdir(user->pw_dir) != 0 && chdir("/") != 0) _exit(2);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        execve(options->tresor, (char *const *)argv, environment);
        _exit(127);
    }
    close(pipe_fds[0]);
    int result = -1;
    if (pid > 0) {
        if (write_all(pipe_fds[1], input, input_length) != 0 && options->debug) {
            pam_syslog(pamh, LOG_DEBUG, "the helper did not read the password");
        }
        close(pipe_fds[1]);
        struct timespec start, now, pause = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
            int status;
            pid_t waited = waitpid(pid, &status, WNOHANG);
            if (waited == pid) {
                result = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
                break;
            }
            if (waited < 0 && errno != EINTR) break;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (now.tv_sec - start.tv_sec >= options->timeout_seconds) {
                pam_syslog(pamh, LOG_WARNING, "tresor pam-helper took longer than %d s; stopped", options->timeout_seconds);
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                break;
            }
            nanosleep(&pause, NULL);
        }
    } else {
        close(pipe_fds[1]);
    }
    sigaction(SIGPIPE, &saved_pipe, NULL);
    sigaction(SIGCHLD, &saved_child, NULL);
    return result;
}

/* The PAM user's passwd entry, copied into `storage`. */
static const struct passwd *pam_user(pam_handle_t *pamh, struct passwd *entry, char *storage, size_t size)
{
    const char *name = NULL;
    struct passwd *found = NULL;
    if (pam_get_user(pamh, &name, NULL) != PAM_SUCCESS || name == NULL) return NULL;
    if (getpwnam_r(name, entry, storage, size, &found) != 0 || found == NULL) return NULL;
    return found;
}

/* Hands the kept password to the user's daemon, starting one when `start_daemon`. */
static void hand_over(pam_handle_t *pamh, const struct options *options, int start_daemon)
{
    const void *data = NULL, *handed = NULL;
    if (pam_get_data(pamh, HANDED_DATA, &handed) == PAM_SUCCESS && handed != NULL) return;
    if (pam_get_data(pamh, PASSWORD_DATA, &data) != PAM_SUCCESS || data == NULL) return;
    const struct kept_password *kept = data;
    struct passwd entry;
    char storage[4096];
    const struct passwd *user = pam_user(pamh, &entry, storage, sizeof storage);
    if (user == NULL) return;
    if (strcmp(user->pw_name, kept->user) != 0) {
        if (options->debug) pam_syslog(pamh, LOG_DEBUG, "the session is not the authenticated user's: nothing handed over");
        return;
    }

    const char *password = kept->password;
    size_t length = strlen(password);
    char *line = malloc(length + 2);
    if (line == NULL) return;
    memcpy(line, password, length);
    line[length] = '\n';
    const char *unlock[] = {"unlock", start_daemon ? "--start-daemon" : NULL, NULL};
    int status = run_helper(pamh, options, user, unlock, line, length + 1);
    explicit_bzero(line, length + 1);
    free(line);
    if (options->debug) pam_syslog(pamh, LOG_DEBUG, "tresor pam-helper unlock exited with %d", status);
    if (status == 0) {
        pam_set_data(pamh, HANDED_DATA, (void *)HANDED_DATA, no_cleanup);
        /* Replacing the data runs its cleanup: the password is wiped now, not at pam_end. */
        pam_set_data(pamh, PASSWORD_DATA, NULL, NULL);
    }
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    (void)flags;
    struct options options;
    parse_options(pamh, argc, argv, &options);
    const void *password = NULL;
    const char *name = NULL;
    if (pam_get_item(pamh, PAM_AUTHTOK, &password) != PAM_SUCCESS || password == NULL) return PAM_IGNORE;
    if (pam_get_user(pamh, &name, NULL) != PAM_SUCCESS || name == NULL) return PAM_IGNORE;
    struct kept_password *kept = calloc(1, sizeof *kept);
    if (kept == NULL) return PAM_IGNORE;
    kept->user = strdup(name);
    kept->password = strdup(password);
    if (kept->user == NULL || kept->password == NULL || pam_set_data(pamh, PASSWORD_DATA, kept, wipe_password) != PAM_SUCCESS) {
        wipe_password(pamh, kept, 0);
    }
    return PAM_IGNORE;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    struct options options;
    parse_options(pamh, argc, argv, &options);
    /* pam_setcred comes only after a successful pam_authenticate: the password is the user's. */
    if ((flags & PAM_DELETE_CRED) == 0) hand_over(pamh, &options, 0);
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    (void)flags;
    struct options options;
    parse_options(pamh, argc, argv, &options);
    hand_over(pamh, &options, 1);
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_chauthtok(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    if ((flags & PAM_UPDATE_AUTHTOK) == 0) return PAM_IGNORE;
    struct options options;
    parse_options(pamh, argc, argv, &options);
    const void *old = NULL, *new = NULL;
    if (pam_get_item(pamh, PAM_AUTHTOK, &new) != PAM_SUCCESS || new == NULL) return PAM_IGNORE;
    pam_get_item(pamh, PAM_OLDAUTHTOK, &old);
    struct passwd entry;
    char storage[4096];
    const struct passwd *user = pam_user(pamh, &entry, storage, sizeof storage);
    if (user == NULL) return PAM_IGNORE;

    size_t old_length = old != NULL ? strlen(old) : 0, new_length = strlen(new);
    size_t length = (old != NULL ? old_length + 1 : 0) + new_length + 1;
    char *lines = malloc(length);
    if (lines == NULL) return PAM_IGNORE;
    size_t at = 0;
    if (old != NULL) {
        memcpy(lines, old, old_length);
        lines[old_length] = '\n';
        at = old_length + 1;
    }
    memcpy(lines + at, new, new_length);
    lines[at + new_length] = '\n';
    const char *changed[] = {"password-changed", old == NULL ? "--without-old" : NULL, NULL};
    int status = run_helper(pamh, &options, user, changed, lines, length);
    explicit_bzero(lines, length);
    free(lines);
    if (options.debug) pam_syslog(pamh, LOG_DEBUG, "tresor pam-helper password-changed exited with %d", status);
    return PAM_IGNORE;
}
