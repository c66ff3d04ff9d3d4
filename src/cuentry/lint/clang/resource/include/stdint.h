/* cuentry lint: <stdint.h> from the C library when there is one, the compiler's types otherwise. */
#ifndef CUENTRY_STDINT_H
#define CUENTRY_STDINT_H
#if __has_include_next(<stdint.h>)
#include_next <stdint.h>
#else
typedef __INT8_TYPE__ int8_t;
typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
#endif
#endif
