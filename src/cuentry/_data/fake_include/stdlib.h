/* Minimal stand-in used only when parsing the CUDA typedef headers with pycparser. */
#ifndef CUENTRY_FAKE_STDLIB_H
#define CUENTRY_FAKE_STDLIB_H
#include <stddef.h>
#endif
