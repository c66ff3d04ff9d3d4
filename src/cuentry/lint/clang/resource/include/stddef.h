/* cuentry lint: the compiler's own <stddef.h>, for libclang without its resource headers. */
#ifndef CUENTRY_STDDEF_H
#define CUENTRY_STDDEF_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
#ifndef __cplusplus
typedef __WCHAR_TYPE__ wchar_t;
#endif
typedef long double max_align_t;
#ifndef NULL
#ifdef __cplusplus
#define NULL __null
#else
#define NULL ((void *)0)
#endif
#endif
#define offsetof(t, m) __builtin_offsetof(t, m)
#endif
