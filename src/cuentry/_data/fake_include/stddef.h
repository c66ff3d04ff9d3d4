#ifndef CUENTRY_FAKE_STDDEF_H
#define CUENTRY_FAKE_STDDEF_H
typedef int size_t;
typedef int ptrdiff_t;
typedef int wchar_t;
#define NULL 0
#endif
