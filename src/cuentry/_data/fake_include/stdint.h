#ifndef CUENTRY_FAKE_STDINT_H
#define CUENTRY_FAKE_STDINT_H
/* Fixed-width names are terminals for the catalog: declared, never expanded. */
typedef int int8_t; typedef int uint8_t; typedef int int16_t; typedef int uint16_t;
typedef int int32_t; typedef int uint32_t; typedef int int64_t; typedef int uint64_t;
typedef int intptr_t; typedef int uintptr_t;
#endif
