/* The few Win32 declarations a generated header's Windows branch uses, with their SDK types, so that
 * tests/test_generate.py can type-check that branch (-D_WIN32) on a machine without the Windows SDK. */
#ifndef CUENTRY_TEST_WINDOWS_H
#define CUENTRY_TEST_WINDOWS_H
typedef int BOOL;
typedef void *PVOID;
typedef const char *LPCSTR;
typedef struct HINSTANCE__ *HMODULE;
typedef long long (*FARPROC)(void);
typedef union _RTL_RUN_ONCE { PVOID Ptr; } INIT_ONCE, *PINIT_ONCE;
#define INIT_ONCE_STATIC_INIT {0}
#define TRUE 1
#define CALLBACK
#define WINAPI
typedef BOOL (CALLBACK *PINIT_ONCE_FN)(PINIT_ONCE InitOnce, PVOID Parameter, PVOID *Context);
#ifdef __cplusplus
extern "C" {
#endif
HMODULE WINAPI LoadLibraryA(LPCSTR lpLibFileName);
FARPROC WINAPI GetProcAddress(HMODULE hModule, LPCSTR lpProcName);
BOOL WINAPI InitOnceExecuteOnce(PINIT_ONCE InitOnce, PINIT_ONCE_FN InitFn, PVOID Parameter, PVOID *Context);
#ifdef __cplusplus
}
#endif
#endif
