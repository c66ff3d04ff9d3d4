/* Both ports in one process: linked (static or shared) or dlopen'ed (RTLD_LOCAL / RTLD_GLOBAL). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*probe_fn)(char *, size_t);
#ifdef LINKED
int torchish_probe(char *buf, size_t n);
int ncclish_probe(char *buf, size_t n);
#endif

int main(int argc, char **argv) {
    static char buf[8192];
    probe_fn probes[2] = {NULL, NULL};
    const char *names[2] = {"A", "B"};
    int i;
#ifdef LINKED
    (void)argc;
    (void)argv;
    probes[0] = torchish_probe;
    probes[1] = ncclish_probe;
#else
    int mode = argc > 1 && strcmp(argv[1], "global") == 0 ? RTLD_GLOBAL : RTLD_LOCAL;
    const char *syms[2] = {"torchish_probe", "ncclish_probe"};
    for (i = 0; i < 2; i++) {
        void *lib = argc > 2 + i ? dlopen(argv[2 + i], RTLD_NOW | mode) : NULL;
        void *sym = lib != NULL ? dlsym(lib, syms[i]) : NULL;
        if (sym == NULL) {
            fprintf(stderr, "cannot load %s: %s\n", argc > 2 + i ? argv[2 + i] : "?", dlerror());
            return 3;
        }
        memcpy(&probes[i], &sym, sizeof sym);
    }
#endif
    for (i = 0; i < 2; i++) {
        buf[0] = '\0';
        (void)probes[i](buf, sizeof buf);
        printf("%s %s\n", names[i], buf);
    }
    return 0;
}
