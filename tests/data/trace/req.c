/* A test program for cuentry trace/emulate: performs the entry-point requests named on
 * its command line against the driver library given as the first argument, and prints
 * what it got. Built by tests/test_trace.py with the system C compiler.
 *
 * usage: req LIBCUDA CMD...   (each CMD is one argument, fields separated by ':')
 *   gpa2:SYM:VER:FLAGS   cuGetProcAddress_v2 (from dlsym)     gpa1:SYM:VER:FLAGS  the v1 one
 *                        (SYM "@null": a NULL symbol; a fifth field "nopfn": a NULL pfn; "\\e" and "\\n"
 *                        in SYM: ESC and newline; "\\xff": byte 0xff)
 *   self:SYM:VER:FLAGS   through the cuGetProcAddress_v2 that cuGetProcAddress("cuGetProcAddress", 12000) gives
 *   rt:SYM:VER:FLAGS     cudaGetDriverEntryPointByVersion     dlsym:NAME
 *   ver                  cuDriverGetVersion (from dlsym)      verp  (from cuGetProcAddress_v2 at 2020)
 *   loop:N:SYM:VER:FLAGS N requests, prints ns per request     threads:N:M:SYM:VER:FLAGS
 *   closeout             close stdout and stderr              fork  the rest runs in a child that _exits
 *   spawn                the rest runs in a fork+exec'd copy of this program
 *   file:PATH            cuGetProcAddress_v2 for each "SYMBOL VERSION FLAGS" line; prints the export's name
 *   table:PATH:R         time one pass over PATH's queries, then R more (ns per request)
 *   sigstorm:N           N distinct requests while a signal handler makes requests too
 *   exit:N               exit now with status N (default at the end: 7)
 * With -DDIRECT the program links the library and calls cuGetProcAddress_v2 by name.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*gpa2_t)(const char *, void **, int, uint64_t, int *);
typedef int (*gpa1_t)(const char *, void **, int, uint64_t);
typedef int (*ver_t)(int *);
typedef int (*rtbv_t)(const char *, void **, unsigned int, unsigned long long, int *);

#ifdef DIRECT
extern int cuGetProcAddress_v2(const char *, void **, int, uint64_t, int *);
#endif

static void *lib;
static gpa2_t gpa2;

static char *field(char **s) {
    char *start = *s, *c = strchr(start, ':');
    if (c) { *c = 0; *s = c + 1; } else { *s = start + strlen(start); }
    return start;
}

static volatile sig_atomic_t signals;
static void on_alarm(int sig) {
    (void)sig;
    void *p; int st;
    if (gpa2) gpa2("cuDriverGetVersion", &p, 2020, 1, &st);  /* not async-signal-safe: done anyway */
    signals++;
}

struct job { int n; const char *sym; int ver; uint64_t flags; };
static void *worker(void *arg) {
    struct job *j = arg;
    for (int i = 0; i < j->n; i++) { void *p; int st; gpa2(j->sym, &p, j->ver, j->flags, &st); }
    return NULL;
}

/* "\\e" -> ESC, "\\n" -> newline, "\\xff" -> 0xff, in place. */
static void unescape(char *s) {
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] == 'e') { *o++ = 27; s++; }
        else if (s[0] == '\\' && s[1] == 'n') { *o++ = '\n'; s++; }
        else if (s[0] == '\\' && s[1] == 'x' && s[2] && s[3]) { *o++ = (char)strtol((char[3]){s[2], s[3], 0}, NULL, 16); s += 3; }
        else *o++ = *s;
    }
    *o = 0;
}

static void request(const char *kind, char *rest) {
    char *sym = field(&rest);
    int ver = atoi(field(&rest));
    uint64_t flags = strtoull(field(&rest), NULL, 10);
    int nopfn = strcmp(field(&rest), "nopfn") == 0;
    void *p = (void *)1;
    int st = -1, rc;
    const char *shown = sym;
    if (strcmp(sym, "@null") == 0) sym = NULL; else unescape(sym);
    if (strcmp(kind, "gpa2") == 0) {
        rc = gpa2 ? gpa2(sym, nopfn ? NULL : &p, ver, flags, &st) : -100;
    } else if (strcmp(kind, "gpa1") == 0) {
        gpa1_t f = (gpa1_t)dlsym(lib, "cuGetProcAddress");
        rc = f ? f(sym, &p, ver, flags) : -100;
    } else if (strcmp(kind, "self") == 0) {
        void *g = NULL;
        rc = gpa2 ? gpa2("cuGetProcAddress", &g, 12000, 1, &st) : -100;
        if (rc == 0 && g) rc = ((gpa2_t)g)(sym, &p, ver, flags, &st); else rc = -101;
    } else {
        rtbv_t f = (rtbv_t)dlsym(lib, "cudaGetDriverEntryPointByVersion");
        rc = f ? f(sym, &p, (unsigned)ver, flags, &st) : -100;
    }
    printf("%s %s %d %llu rc=%d st=%d p=%d\n", kind, sym ? shown : "@null", ver, (unsigned long long)flags, rc, st,
           p == (void *)1 ? -1 : p != NULL);
}

static int run(int argc, char **argv, int first) {
    for (int i = first; i < argc; i++) {
        char *cmd = argv[i], *rest = strchr(cmd, ':');
        char kind[16] = {0};
        size_t k = rest ? (size_t)(rest - cmd) : strlen(cmd);
        if (k >= sizeof kind) k = sizeof kind - 1;
        memcpy(kind, cmd, k);
        rest = rest ? rest + 1 : cmd + strlen(cmd);
        if (!strcmp(kind, "gpa2") || !strcmp(kind, "gpa1") || !strcmp(kind, "self") || !strcmp(kind, "rt")) {
            request(kind, rest);
        } else if (!strcmp(kind, "dlsym")) {
            printf("dlsym %s %s\n", rest, dlsym(lib, rest) ? "found" : "null");
        } else if (!strcmp(kind, "ver") || !strcmp(kind, "verp")) {
            ver_t f = NULL;
            int v = -1, st = -1;
            if (kind[3] == 'p') { if (gpa2) gpa2("cuDriverGetVersion", (void **)&f, 2020, 1, &st); }
            else f = (ver_t)dlsym(lib, "cuDriverGetVersion");
            int rc = f ? f(&v) : -100;
            printf("%s rc=%d version=%d\n", kind, rc, v);
        } else if (!strcmp(kind, "loop")) {
            int n = atoi(field(&rest));
            char *sym = field(&rest);
            int ver = atoi(field(&rest));
            uint64_t flags = strtoull(field(&rest), NULL, 10);
            struct timespec a, b;
            void *p; int st;
            clock_gettime(CLOCK_MONOTONIC, &a);
            for (int j = 0; j < n; j++) gpa2(sym, &p, ver, flags, &st);
            clock_gettime(CLOCK_MONOTONIC, &b);
            double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (n > 0 ? n : 1);
            printf("loop %d %.2f ns\n", n, ns);
        } else if (!strcmp(kind, "threads")) {
            int n = atoi(field(&rest)), m = atoi(field(&rest));
            struct job j = {m, field(&rest), 0, 0};
            j.ver = atoi(field(&rest));
            j.flags = strtoull(field(&rest), NULL, 10);
            pthread_t t[64];
            if (n > 64) n = 64;
            for (int x = 0; x < n; x++) pthread_create(&t[x], NULL, worker, &j);
            for (int x = 0; x < n; x++) pthread_join(t[x], NULL);
            printf("threads %d x %d done\n", n, m);
        } else if (!strcmp(kind, "file")) {
            FILE *f = fopen(rest, "r");
            char sym[256];
            int ver;
            unsigned long long flags;
            while (f && fscanf(f, "%255s %d %llu", sym, &ver, &flags) == 3) {
                void *p = NULL;
                int st = -1, rc = gpa2 ? gpa2(sym, &p, ver, flags, &st) : -100;
                Dl_info info;
                const char *name = (rc == 0 && p && dladdr(p, &info) && info.dli_sname) ? info.dli_sname : "-";
                printf("%s %d %llu rc=%d st=%d %s\n", sym, ver, flags, rc, st, name);
            }
            if (f) fclose(f);
        } else if (!strcmp(kind, "table")) {
            /* table:PATH:R  time a pass over the queries of PATH, then R more passes (ns per request) */
            char *path = field(&rest);
            int reps = atoi(field(&rest));
            static char syms[4096][64];
            static int vers[4096];
            static unsigned long long fl[4096];
            int n = 0;
            FILE *f = fopen(path, "r");
            while (f && n < 4096 && fscanf(f, "%63s %d %llu", syms[n], &vers[n], &fl[n]) == 3) n++;
            if (f) fclose(f);
            struct timespec a, b, c;
            void *p; int st;
            clock_gettime(CLOCK_MONOTONIC, &a);
            for (int j = 0; j < n; j++) gpa2(syms[j], &p, vers[j], fl[j], &st);
            clock_gettime(CLOCK_MONOTONIC, &b);
            for (int r = 0; r < reps; r++)
                for (int j = 0; j < n; j++) gpa2(syms[j], &p, vers[j], fl[j], &st);
            clock_gettime(CLOCK_MONOTONIC, &c);
            double first = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (n ? n : 1);
            double again = ((c.tv_sec - b.tv_sec) * 1e9 + (c.tv_nsec - b.tv_nsec)) / ((double)(n ? n : 1) * (reps ? reps : 1));
            printf("table %d first %.2f ns again %.2f ns\n", n, first, again);
        } else if (!strcmp(kind, "sigstorm")) {
            /* sigstorm:N  N distinct requests while a 20 us timer's handler makes requests too */
            int n = atoi(rest);
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_alarm;
            sigaction(SIGALRM, &sa, NULL);
            struct itimerval it = {{0, 20}, {0, 20}};
            setitimer(ITIMER_REAL, &it, NULL);
            void *p; int st;
            for (int v = 1; v <= n; v++) gpa2("cuInit", &p, v, 1, &st);
            struct itimerval off = {{0, 0}, {0, 0}};
            setitimer(ITIMER_REAL, &off, NULL);
            printf("sigstorm %d done\n", n);
        } else if (!strcmp(kind, "exit")) {
            fflush(stdout);
            exit(atoi(rest));
        } else if (!strcmp(kind, "closeout")) {
            fflush(stdout);
            close(1); close(2);
        } else if (!strcmp(kind, "fork")) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) { run(argc, argv, i + 1); fflush(stdout); _exit(0); }
            int status = 0;
            waitpid(pid, &status, 0);
            printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
            return 0;
        } else if (!strcmp(kind, "spawn")) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                char **args = calloc((size_t)(argc - i + 2), sizeof *args);
                args[0] = argv[0]; args[1] = argv[1];
                for (int x = i + 1; x < argc; x++) args[x - i + 1] = argv[x];
                execv("/proc/self/exe", args);
                _exit(127);
            }
            int status = 0;
            waitpid(pid, &status, 0);
            printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
            return 0;
        } else {
            printf("unknown command %s\n", cmd);
            return 2;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: req LIBCUDA CMD...\n"); return 2; }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror()); return 3; }
#ifdef DIRECT
    gpa2 = cuGetProcAddress_v2;
#else
    gpa2 = (gpa2_t)dlsym(lib, "cuGetProcAddress_v2");
#endif
    int rc = run(argc, argv, 2);
    fflush(stdout);
    return rc ? rc : 7;  /* a distinctive exit code: the tests check it is passed through */
}
