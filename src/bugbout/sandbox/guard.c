/* The guard, compiled: the command line, behaviour and exit statuses of guard.py (read
 * its docstring), without an interpreter to start on every attempt.
 *
 *     guard --report=FILE --memory=N --processes=N --disk=N --files=N
 *         [--watch=FOLDER]... [--lifeline=FD] -- ARGV...
 *
 * bugbout compiles it on first use (bugbout/sandbox/guard_build.py) and runs guard.py
 * where no compiler works. Linux only: it reads /proc and waits through pidfds. A change
 * to one is made to the other: tests/test_guard.py runs every test under both.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define INTERVAL 0.2   /* seconds between two looks at the processes */
#define DISK_EVERY 1.0 /* the least seconds between two measures of the watched folders */
#define KILLED 137
#define USAGE 2
#define NOT_RUN 127
#define WATCHED 64 /* the most killed processes waited for through a pidfd each */
#define PID_LIMIT 4194304 /* the most processes Linux has at once (PID_MAX_LIMIT) */

extern char **environ;

enum { MEMORY, PROCESSES, DISK, FILES, LIMITS };
static const char *const NAMES[LIMITS] = {"memory", "processes", "disk", "files"};

struct spec { /* the command line; watched: the folders among --watch, in order */
    const char *report, **watched;
    size_t nwatched;
    int lifeline; /* --lifeline: bugbout's end of a pipe, or -1 */
    long long limits[LIMITS];
    char **argv;
};
struct breach { const char *limit; long long used, allowed; }; /* no limit: none */
struct pids { pid_t *pid; size_t count, size; };
struct paths { char **path; size_t count, size; };
struct link { pid_t pid, parent; }; /* a process and its parent, from /proc/PID/stat */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static struct timespec span(double seconds) {
    struct timespec t = {0, 0};
    if (seconds > 0) {
        t.tv_sec = (time_t)seconds;
        t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
        t.tv_nsec = t.tv_nsec > 999999999 ? 999999999 : t.tv_nsec;
    }
    return t;
}

/* A descriptor readable once pid has ended (a pidfd, Linux 5.3 and later), or -1. */
static int ending(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* items (*size elements of width bytes), moved if need be to hold one more than count;
 * NULL when short of memory (items stay as they were). */
static void *grown(void *items, size_t *size, size_t count, size_t width) {
    if (count < *size)
        return items;
    size_t larger = *size ? *size * 2 : 64;
    void *moved = larger > ((size_t)-1) / width ? NULL : realloc(items, larger * width);
    if (moved != NULL)
        *size = larger;
    return moved;
}

static int add(struct pids *list, pid_t pid) {
    pid_t *moved = grown(list->pid, &list->size, list->count, sizeof *moved);
    if (moved == NULL)
        return -1;
    list->pid = moved;
    list->pid[list->count++] = pid;
    return 0;
}

/* Adds path (on the heap) to list, which then owns it; short of memory, frees it. */
static void push(struct paths *list, char *path) {
    char **moved = path ? grown(list->path, &list->size, list->count, sizeof *moved) : NULL;
    if (moved == NULL) {
        free(path);
        return;
    }
    list->path = moved;
    list->path[list->count++] = path;
}

/* Reads at most size - 1 bytes of path into buffer, NUL-terminated: how many, or -1. */
static ssize_t slurp(const char *path, char *buffer, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < size - 1) {
        ssize_t n = read(fd, buffer + got, size - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buffer[got] = '\0';
    return (ssize_t)got;
}

/* Waits up to seconds, or less once fd (a pidfd, or -1) is readable. */
static void pause_for(double seconds, int fd) {
    struct timespec t = span(seconds);
    if (fd < 0) {
        nanosleep(&t, NULL); /* interrupted: the caller looks at the clock again */
        return;
    }
    struct pollfd wanted = {.fd = fd, .events = POLLIN};
    ppoll(&wanted, 1, &t, NULL);
}

/* Reaps every ended descendant for up to timeout seconds; 1 and the child's wait status
 * once it has ended (at once when ended, its pidfd, says so; else within 20 ms), else 0.
 * With child -1, it returns as soon as no child is left. */
static int reap(pid_t child, double timeout, int ended, int *status) {
    double deadline = now() + timeout;
    for (;;) {
        int got = 0;
        pid_t pid = waitpid(-1, &got, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0) { /* none left (the sandbox's first process, orphaned) */
            if (child == -1)
                return 0;
            pid = 0;
        }
        if (pid == child) {
            *status = got;
            return 1;
        }
        if (pid == 0) {
            double left = deadline - now();
            if (left <= 0)
                return 0;
            pause_for(left < 0.02 ? left : 0.02, ended);
        }
    }
}

static int by_parent(const void *a, const void *b) {
    const struct link *x = a, *y = b;
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The process and parent named by /proc entry name; 0, or -1 when it is no process. */
static int process_link(const char *name, struct link *found) {
    size_t length = strlen(name);
    if (length == 0 || length > 9 || strspn(name, "0123456789") != length)
        return -1;
    char path[32], data[4096]; /* a stat line is under 1,500 bytes */
    found->pid = (pid_t)atoi(name);
    snprintf(path, sizeof path, "/proc/%d/stat", (int)found->pid);
    ssize_t n = slurp(path, data, sizeof data);
    if (n <= 0)
        return -1;
    const char *paren = memrchr(data, ')', (size_t)n); /* the name may hold ')' */
    if (paren == NULL)
        return -1;
    const char *field = paren + 1;
    while (*field == ' ')
        field++;
    while (*field != '\0' && *field != ' ') /* the state */
        field++;
    char *end;
    errno = 0;
    long parent = strtol(field, &end, 10);
    if (end == field || errno != 0 || parent < 0 || parent > 999999999)
        return -1;
    found->parent = (pid_t)parent;
    return 0;
}

/* Lists into found the pids of every process below the guard (from each process's parent
 * in /proc); without /proc, none. Short of memory, those listed so far. */
static void scanned(struct pids *found) {
    found->count = 0;
    DIR *proc = opendir("/proc");
    if (proc == NULL)
        return;
    struct link *links = NULL;
    size_t count = 0, size = 0;
    struct dirent *entry;
    while ((entry = readdir(proc)) != NULL) {
        struct link link;
        if (process_link(entry->d_name, &link) != 0)
            continue;
        struct link *moved = grown(links, &size, count, sizeof *moved);
        if (moved == NULL)
            break;
        links = moved;
        links[count++] = link;
    }
    closedir(proc);
    if (count > 0)
        qsort(links, count, sizeof *links, by_parent);
    pid_t parent = getpid();
    size_t next = 0;
    /* a snapshot taken while pids are reused might hold a loop: none is listed twice over */
    while (found->count <= count) {
        size_t low = 0, high = count; /* the first link whose parent is parent */
        while (low < high) {
            size_t middle = low + (high - low) / 2;
            if (links[middle].parent < parent)
                low = middle + 1;
            else
                high = middle;
        }
        for (; low < count && links[low].parent == parent; low++)
            if (add(found, links[low].pid) != 0)
                break;
        if (next == found->count)
            break;
        parent = found->pid[next++];
    }
    free(links);
}

/* Adds to found the children of every thread of process pid (its task/TID/children
 * files: the kernel's own lists); 0, or -1 short of memory. */
static int children(struct pids *found, pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (tasks == NULL) /* ended meanwhile */
        return 0;
    int status = 0;
    struct dirent *entry;
    while (status == 0 && (entry = readdir(tasks)) != NULL) {
        if (strspn(entry->d_name, "0123456789") != strlen(entry->d_name))
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%.20s/children", (int)pid, entry->d_name);
        FILE *list = fopen(path, "re");
        long child;
        while (list != NULL && status == 0 && fscanf(list, "%ld", &child) == 1)
            status = add(found, (pid_t)child);
        if (list != NULL)
            fclose(list);
    }
    closedir(tasks);
    return status;
}

/* Lists into found the pids of every process below the guard, from the children the
 * kernel lists for each process: only the guard's own tree is read, not every process of
 * the machine. Short of memory, those listed so far. */
static void descendants(struct pids *found) {
    static int listed = -1; /* whether this kernel keeps those lists (CONFIG_PROC_CHILDREN) */
    if (listed < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
        listed = access(path, R_OK) == 0;
    }
    if (!listed) {
        scanned(found);
        return;
    }
    found->count = 0;
    pid_t parent = getpid();
    /* a list read while pids are reused might hold a loop: no more than pids can exist */
    for (size_t next = 0; found->count <= PID_LIMIT; parent = found->pid[next++])
        if (children(found, parent) != 0 || next == found->count)
            break;
}

/* The private resident memory of pids (resident minus shared), in bytes. */
static long long memory(const struct pids *pids) {
    long page = sysconf(_SC_PAGESIZE);
    long long total = 0;
    for (size_t i = 0; i < pids->count; i++) {
        char path[32], data[256];
        snprintf(path, sizeof path, "/proc/%d/statm", (int)pids->pid[i]);
        if (slurp(path, data, sizeof data) <= 0)
            continue;
        char *field = data, *end;
        errno = 0;
        strtoull(field, &end, 10); /* size */
        unsigned long long resident = strtoull(field = end, &end, 10);
        unsigned long long shared = strtoull(field = end, &end, 10);
        if (end == field || errno != 0)
            continue;
        if (resident > shared && resident - shared < (unsigned long long)(1LL << 40))
            total += (long long)(resident - shared) * page;
    }
    return total;
}

static char *joined(const char *folder, const char *name) {
    size_t length = strlen(folder) + strlen(name) + 2;
    char *path = malloc(length);
    if (path != NULL)
        snprintf(path, length, "%s/%s", folder, name);
    return path;
}

/* Bytes allocated and entries under the watched folders, links not followed; the count
 * stops a little past most entries. */
static void measure(const struct spec *spec, long long most, long long *bytes, long long *entries) {
    struct paths pending = {NULL, 0, 0};
    *bytes = *entries = 0;
    for (size_t i = 0; i < spec->nwatched; i++) /* the last is measured first */
        push(&pending, strdup(spec->watched[i]));
    while (pending.count > 0) {
        char *folder = pending.path[--pending.count];
        int fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *dir = fd < 0 ? NULL : fdopendir(fd);
        if (dir == NULL && fd >= 0)
            close(fd);
        struct dirent *entry;
        while (dir != NULL && (entry = readdir(dir)) != NULL) {
            const char *name = entry->d_name;
            if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                continue;
            *entries += 1;
            if (*entries > most)
                break;
            struct stat info;
            if (fstatat(dirfd(dir), name, &info, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            *bytes += (long long)info.st_blocks * 512;
            if (S_ISDIR(info.st_mode))
                push(&pending, joined(folder, name));
        }
        if (dir != NULL)
            closedir(dir);
        free(folder);
        if (*entries > most)
            break;
    }
    while (pending.count > 0)
        free(pending.path[--pending.count]);
    free(pending.path);
}

static struct breach over(const struct spec *spec, int limit, long long used) {
    struct breach breach = {NULL, used, spec->limits[limit]};
    if (used > spec->limits[limit])
        breach.limit = NAMES[limit];
    return breach;
}

static struct breach disk(const struct spec *spec, long long base_bytes, long long base_entries) {
    long long files = spec->limits[FILES], bytes, entries;
    long long most = files > 0 && base_entries > LLONG_MAX - files ? LLONG_MAX
                                                                   : base_entries + files;
    measure(spec, most, &bytes, &entries);
    struct breach breach = over(spec, FILES, entries - base_entries);
    return breach.limit != NULL ? breach : over(spec, DISK, bytes - base_bytes);
}

/* Writes breach to report, whole or not at all (through a temporary file renamed). */
static void write_report(const char *report, const struct breach *breach) {
    char text[160], *temporary = NULL;
    int length = snprintf(text, sizeof text, "{\"limit\": \"%s\", \"used\": %lld, "
                          "\"allowed\": %lld}", breach->limit, breach->used, breach->allowed);
    size_t room = strlen(report) + 24;
    int fd = -1, failed = length < 0 || (size_t)length >= sizeof text;
    if (!failed && (temporary = malloc(room)) != NULL) {
        snprintf(temporary, room, "%s.%d", report, (int)getpid());
        fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
    }
    for (ssize_t done = 0; fd >= 0 && !failed && done < length;) {
        ssize_t n = write(fd, text + done, (size_t)(length - done));
        if (n < 0 && errno != EINTR)
            failed = 1;
        else if (n > 0)
            done += n;
    }
    if (fd < 0 || close(fd) != 0 || failed || rename(temporary, report) != 0) {
        fprintf(stderr, "bugbout guard: cannot write %s: %s\n", report, strerror(errno));
        if (fd >= 0)
            unlink(temporary);
    }
    free(temporary);
}

/* Waits until pids have ended (the first WATCHED, each through a pidfd, so at once) or
 * timeout seconds have passed; then reaps whichever ended. */
static void await_end(const struct pids *pids, double timeout) {
    struct pollfd watched[WATCHED];
    int descriptors[WATCHED], count = 0, unused;
    for (size_t i = 0; i < pids->count && count < WATCHED; i++) {
        int fd = ending(pids->pid[i]);
        if (fd >= 0) {
            descriptors[count] = fd;
            watched[count++] = (struct pollfd){.fd = fd, .events = POLLIN};
        }
    }
    double deadline = now() + timeout;
    for (int left = count; left > 0;) {
        double remaining = deadline - now();
        if (remaining <= 0)
            break;
        struct timespec t = span(remaining);
        int ready = ppoll(watched, (nfds_t)count, &t, NULL);
        if (ready < 0 && errno != EINTR)
            break;
        for (int i = 0; ready > 0 && i < count; i++)
            if (watched[i].fd >= 0 && watched[i].revents != 0) {
                watched[i].fd = -1; /* ended: poll skips it */
                left--;
            }
    }
    for (int i = 0; i < count; i++)
        close(descriptors[i]);
    reap(-1, count > 0 ? 0 : timeout, -1, &unused);
}

/* Whether bugbout has ended: the write end of its lifeline (fd), which only bugbout
 * held, is closed, however bugbout ended (the pipe reads end of file). */
static int orphaned(int fd) {
    struct pollfd line = {.fd = fd, .events = POLLIN};
    return fd >= 0 && poll(&line, 1, 0) > 0 && (line.revents & (POLLHUP | POLLERR | POLLIN));
}

/* Kills pids (the descendants, just listed) and every descendant, again until none is
 * left (a fork bomb forks meanwhile), and reaps them. */
static void kill_all(struct pids *pids) {
    for (int round = 0; round < 1000 && pids->count > 0; round++) {
        for (size_t i = 0; i < pids->count; i++)
            kill(pids->pid[i], SIGKILL); /* fails only for one already gone */
        await_end(pids, 0.01);
        descendants(pids);
    }
}

static int number(const char *text, long long *value) {
    char *end;
    errno = 0;
    *value = strtoll(text, &end, 10);
    while (end != text && isspace((unsigned char)*end))
        end++;
    return end == text || *end != '\0' || errno != 0 ? -1 : 0;
}

/* Reads the command line into spec; 0, or -1 once it has said what is wrong. */
static int parse(int argc, char **argv, struct spec *spec) {
    int given[LIMITS] = {0}, position = 1;
    spec->lifeline = -1;
    spec->watched = calloc((size_t)argc, sizeof *spec->watched);
    if (spec->watched == NULL) {
        fprintf(stderr, "bugbout guard: out of memory\n");
        return -1;
    }
    for (; position < argc && strcmp(argv[position], "--") != 0; position++) {
        const char *option = argv[position], *equals = strchr(option, '=');
        option += strncmp(option, "--", 2) == 0 ? 2 : 0;
        size_t length = equals == NULL ? 0 : (size_t)(equals - option);
        int known = -1;
        for (int limit = 0; limit < LIMITS; limit++)
            if (length == strlen(NAMES[limit]) && strncmp(option, NAMES[limit], length) == 0)
                known = limit;
        if (equals != NULL && length == 6 && strncmp(option, "report", 6) == 0)
            spec->report = equals + 1;
        else if (equals != NULL && length == 8 && strncmp(option, "lifeline", 8) == 0) {
            long long fd;
            if (number(equals + 1, &fd) != 0 || fd < 0 || fd > INT_MAX ||
                fcntl((int)fd, F_SETFD, FD_CLOEXEC) != 0) { /* the command never holds it */
                fprintf(stderr, "bugbout guard: not an open descriptor: '%s'\n", argv[position]);
                return -1;
            }
            spec->lifeline = (int)fd;
        } else if (equals != NULL && length == 5 && strncmp(option, "watch", 5) == 0) {
            struct stat info;
            if (stat(equals + 1, &info) == 0 && S_ISDIR(info.st_mode))
                spec->watched[spec->nwatched++] = equals + 1;
        } else if (equals == NULL || known < 0) {
            fprintf(stderr, "bugbout guard: unknown option or no value: '%s'\n", argv[position]);
            return -1;
        } else if (number(equals + 1, &spec->limits[known]) != 0) {
            fprintf(stderr, "bugbout guard: not a whole number: '%s'\n", argv[position]);
            return -1;
        } else
            given[known] = 1;
    }
    spec->argv = position + 1 < argc ? argv + position + 1 : NULL;
    char missing[64] = "";
    for (int limit = 0; limit < LIMITS; limit++)
        if (!given[limit])
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", NAMES[limit]);
    if (missing[0] || spec->report == NULL || spec->report[0] == '\0' || spec->argv == NULL) {
        fprintf(stderr, "bugbout guard: missing %s\n",
                missing[0] ? missing : "--report or the command");
        return -1;
    }
    return 0;
}

/* Starts the command, its SIGPIPE and SIGXFSZ back to their default actions; its pid, or
 * -1 once it has said why it cannot run. */
static pid_t start(char **argv) {
    posix_spawnattr_t attributes;
    sigset_t defaults;
    pid_t child = -1;
    int error = posix_spawnattr_init(&attributes);
    if (error == 0) {
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGPIPE);
        sigaddset(&defaults, SIGXFSZ);
        error = posix_spawnattr_setsigdefault(&attributes, &defaults);
        if (error == 0)
            error = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
        if (error == 0)
            error = posix_spawnp(&child, argv[0], NULL, &attributes, argv, environ);
        posix_spawnattr_destroy(&attributes);
    }
    if (error != 0) {
        fprintf(stderr, "bugbout: cannot run %s: %s\n", argv[0], strerror(error));
        return -1;
    }
    return child;
}

int main(int argc, char **argv) {
    struct spec spec = {0};
    signal(SIGPIPE, SIG_IGN); /* as Python does: the guard sees EPIPE and EFBIG instead */
    signal(SIGXFSZ, SIG_IGN);
    if (parse(argc, argv, &spec) != 0)
        return USAGE;
    long long base_bytes, base_entries;
    measure(&spec, LLONG_MAX, &base_bytes, &base_entries);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); /* without it, orphans escape the count */
    struct rlimit size;
    if (getrlimit(RLIMIT_FSIZE, &size) != 0) {
        fprintf(stderr, "bugbout guard: cannot read the file size limit: %s\n", strerror(errno));
        return 1;
    }
    rlim_t largest = spec.limits[DISK] < 0 ? 0 : (rlim_t)spec.limits[DISK] + 1;
    if (size.rlim_max != RLIM_INFINITY && size.rlim_max < largest)
        largest = size.rlim_max;
    size.rlim_cur = size.rlim_max = largest;
    if (setrlimit(RLIMIT_FSIZE, &size) != 0) {
        fprintf(stderr, "bugbout guard: cannot limit file sizes: %s\n", strerror(errno));
        return 1;
    }
    pid_t child = start(spec.argv);
    if (child < 0)
        return NOT_RUN;
    int ended = ending(child), status = 0, done = 0;
    double next_disk = now() + DISK_EVERY;
    struct breach breach = {NULL, 0, 0};
    struct pids found = {NULL, 0, 0};
    while (!done) {
        done = reap(child, INTERVAL, ended, &status);
        descendants(&found);
        if (orphaned(spec.lifeline)) { /* bugbout is gone: nothing of the run outlives it */
            kill_all(&found);
            return KILLED;
        }
        breach = over(&spec, PROCESSES, (long long)found.count);
        if (breach.limit == NULL)
            breach = over(&spec, MEMORY, memory(&found));
        if (breach.limit == NULL && (done || now() >= next_disk)) {
            double started = now();
            breach = disk(&spec, base_bytes, base_entries);
            double took = 10 * (now() - started);
            next_disk = now() + (took > DISK_EVERY ? took : DISK_EVERY);
        }
        if (breach.limit != NULL) {
            write_report(spec.report, &breach);
            break;
        }
    }
    kill_all(&found);
    if (breach.limit != NULL)
        return KILLED;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
