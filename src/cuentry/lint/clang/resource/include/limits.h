/* cuentry lint: <limits.h> from the C library when there is one. */
#if __has_include_next(<limits.h>)
#include_next <limits.h>
#endif
#ifndef CHAR_BIT
#define CHAR_BIT __CHAR_BIT__
#endif
#ifndef INT_MAX
#define INT_MAX __INT_MAX__
#endif
