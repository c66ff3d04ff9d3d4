/* cuentry lint: <float.h> (only what declarations need). */
#ifndef CUENTRY_FLOAT_H
#define CUENTRY_FLOAT_H
#define FLT_MAX __FLT_MAX__
#define DBL_MAX __DBL_MAX__
#endif
