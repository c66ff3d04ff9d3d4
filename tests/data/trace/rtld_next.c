/* RTLD_NEXT under the interposer: libx's value() wraps liby's through dlsym(RTLD_NEXT).
 * Built three ways by tests/test_trace.py: -DLIB_Y, -DLIB_X (shared libraries), -DMAIN. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#if defined(LIB_Y)
int value(void) { return 2; }
#elif defined(LIB_X)
int value(void) {
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "value");
    if (!next || next == value) return -1; /* itself: RTLD_NEXT was resolved from the wrong object */
    return 10 + next();
}
#elif defined(MAIN)
int value(void);
int main(void) { printf("value %d\n", value()); return 0; }
#else
int main(void) { return 0; }
#endif
