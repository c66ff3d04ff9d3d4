/* cuentry lint: <limits.h>, the C library's when there is one, the compiler's macros otherwise.
 * _GCC_LIMITS_H_ tells glibc's <limits.h> that the compiler's part is this one (it would
 * #include_next a GCC header that is not on the path). */
#ifndef CUENTRY_LIMITS_H
#define CUENTRY_LIMITS_H
#define _GCC_LIMITS_H_
#if __has_include_next(<limits.h>)
#include_next <limits.h>
#endif
#ifndef CHAR_BIT
#define CHAR_BIT __CHAR_BIT__
#endif
#ifndef SCHAR_MAX
#define SCHAR_MAX __SCHAR_MAX__
#define SCHAR_MIN (-__SCHAR_MAX__ - 1)
#define UCHAR_MAX (__SCHAR_MAX__ * 2 + 1)
#endif
#ifndef CHAR_MAX
#ifdef __CHAR_UNSIGNED__
#define CHAR_MIN 0
#define CHAR_MAX UCHAR_MAX
#else
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX __SCHAR_MAX__
#endif
#endif
#ifndef SHRT_MAX
#define SHRT_MAX __SHRT_MAX__
#define SHRT_MIN (-__SHRT_MAX__ - 1)
#define USHRT_MAX (__SHRT_MAX__ * 2 + 1)
#endif
#ifndef INT_MAX
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define UINT_MAX (__INT_MAX__ * 2U + 1U)
#endif
#ifndef LONG_MAX
#define LONG_MAX __LONG_MAX__
#define LONG_MIN (-__LONG_MAX__ - 1L)
#define ULONG_MAX (__LONG_MAX__ * 2UL + 1UL)
#endif
#ifndef LLONG_MAX
#define LLONG_MAX __LONG_LONG_MAX__
#define LLONG_MIN (-__LONG_LONG_MAX__ - 1LL)
#define ULLONG_MAX (__LONG_LONG_MAX__ * 2ULL + 1ULL)
#endif
#ifndef MB_LEN_MAX
#define MB_LEN_MAX 16
#endif
#endif
