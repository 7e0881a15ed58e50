/* A fork server for a native command (see native_forkserver.py).

   Preloaded into the command (LD_PRELOAD), it wraps __libc_start_main: the program's own
   initialisation (its static initializers: for upstream pnnx, all of libtorch's operator
   registrations) runs as in any start, then, instead of main, this loop reads one request per
   line on stdin:

       TIMEOUT_MS \t CWD \t OUTPUT_PATH \t ARG1 \t ARG2 ... \n

   forks, and the child runs the program's main(argc, argv) with those arguments in CWD, its
   stdout and stderr in OUTPUT_PATH, stdin from /dev/null, then exits as main's return would.
   The reply, one line on stdout: "RETURNCODE TIMED_OUT" (a negative return code: killed by
   that signal; a child past its time is killed with its process group).
   Without PNNX_NATIVE_FORKSERVER=1 in the environment the program runs as if not preloaded.

   PNNX_NATIVE_FORKSERVER_WARM_UP="CWD \t ARG1 \t ..." runs main once in the server itself before
   the loop (its output to /dev/null), so what the program initialises on first use (libtorch's
   JIT operator tables, for upstream pnnx: most of a small conversion's time) is done once and
   every child starts from it. Should main fail there or leave a thread running (a fork copies
   only the calling thread), the server starts over as a fresh process without the warm-up. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);

static main_fn program_main;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

extern char **environ;

static void child(char *cwd, char *output, int argc, char **argv) {
    /* the environment the program was started with, without this server's preload */
    const char *preload = getenv("PNNX_NATIVE_FORKSERVER_LD_PRELOAD");
    if (preload && *preload)
        setenv("LD_PRELOAD", preload, 1);
    else
        unsetenv("LD_PRELOAD");
    unsetenv("PNNX_NATIVE_FORKSERVER_LD_PRELOAD");
    unsetenv("PNNX_NATIVE_FORKSERVER");
    setpgid(0, 0);
    int out = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = open("/dev/null", O_RDONLY);
    if (out < 0 || in < 0 || chdir(cwd) != 0)
        _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    close(in);
    close(out);
    int code = program_main(argc, argv, environ);
    /* stdio flushed, then _exit: exit() would run the static destructors of the whole program
       (libtorch's operator registry: ~80 ms a conversion, more than upstream's own work on a
       small case) and they write nothing. The artefacts and the output of the smoke tier's
       conversions are byte for byte those of exit() (timestamps in torch's warnings aside). */
    fflush(NULL);
    _exit(code);
}

static void reply(int status, int timed_out) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : 1;
    printf("%d %d\n", code, timed_out);
    fflush(stdout);
}

static int threads(void) {
    int count = 0;
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return -1;
    for (struct dirent *e; (e = readdir(tasks));)
        count += e->d_name[0] != '.';
    closedir(tasks);
    return count;
}

/* main() once, in CWD with the spec's arguments, stdin from and output to /dev/null; 1 when it
   returned 0 and left no thread behind, else 0 (nothing is undone: the caller starts over) */
static int warm_up(const char *spec, char *name) {
    char *copy = strdup(spec), *fields[256], home[4096];
    int n = 0;
    for (char *save, *f = strtok_r(copy, "\t", &save); f && n < 255; f = strtok_r(NULL, "\t", &save))
        fields[n++] = f;
    int null = open("/dev/null", O_RDWR);
    if (n < 1 || null < 0 || !getcwd(home, sizeof home) || chdir(fields[0]) != 0)
        return 0;
    fflush(NULL);
    int saved[3] = {dup(0), dup(1), dup(2)};
    for (int fd = 0; fd < 3; fd++)
        dup2(null, fd);
    fields[0] = name;
    fields[n] = NULL;
    int code = program_main(n, fields, environ);
    fflush(NULL);
    for (int fd = 0; fd < 3; fd++) {
        dup2(saved[fd], fd);
        close(saved[fd]);
    }
    close(null);
    return code == 0 && chdir(home) == 0 && threads() == 1;
}

static int serve(int argc0, char **argv0, char **envp) {
    (void)argc0;
    (void)envp;
    const char *spec = getenv("PNNX_NATIVE_FORKSERVER_WARM_UP");
    if (spec && *spec && !warm_up(spec, argv0[0])) {
        unsetenv("PNNX_NATIVE_FORKSERVER_WARM_UP");
        execv("/proc/self/exe", argv0);
        _exit(127);
    }
    unsetenv("PNNX_NATIVE_FORKSERVER_WARM_UP");  /* not the children's */
    char *line = NULL;
    size_t size = 0;
    while (getline(&line, &size, stdin) > 0) {
        line[strcspn(line, "\n")] = 0;
        char *fields[256];
        int n = 0;
        for (char *save, *f = strtok_r(line, "\t", &save); f && n < 255; f = strtok_r(NULL, "\t", &save))
            fields[n++] = f;
        if (n < 3) {
            printf("126 0\n");
            fflush(stdout);
            continue;
        }
        double deadline = now_ms() + atof(fields[0]);
        char *cwd = fields[1], *output = fields[2];
        fields[2] = argv0[0];  /* the child's argv: the program's own name, then the request's arguments */
        fields[n] = NULL;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0)
            child(cwd, output, n - 2, fields + 2);
        int status = 0, timed_out = 0;
        while (waitpid(pid, &status, WNOHANG) == 0) {
            if (now_ms() > deadline) {
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                timed_out = 1;
                break;
            }
            usleep(2000);
        }
        reply(status, timed_out);
    }
    free(line);
    /* stdin closed: the harness is done with the server. _exit, as a child ends: exit() would
       run the whole program's static destructors (libtorch's: ~80 ms) for nothing. */
    fflush(NULL);
    _exit(0);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end) {
    start_fn next = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    const char *on = getenv("PNNX_NATIVE_FORKSERVER");
    program_main = main;
    return next(on && strcmp(on, "1") == 0 ? serve : main, argc, argv, init, fini, rtld_fini, stack_end);
}
