/* The few Win32 declarations a generated header's Windows branch uses, with their SDK types, so that
 * tests/test_generate.py can type-check that branch (-D_WIN32) on a machine without the Windows SDK. */
#ifndef CUENTRY_TEST_WINDOWS_H
#define CUENTRY_TEST_WINDOWS_H
#include <stddef.h> /* wchar_t */
#if !defined(WIN32_LEAN_AND_MEAN) || !defined(NOMINMAX)
#error "the generated header includes <windows.h> with WIN32_LEAN_AND_MEAN and NOMINMAX"
#endif
typedef int BOOL;
typedef void *PVOID;
typedef const char *LPCSTR;
typedef char *LPSTR;
typedef const wchar_t *LPCWSTR;
typedef void *HANDLE;
typedef const void *LPCVOID;
typedef unsigned long DWORD;
typedef char *va_list_stub;
typedef struct HINSTANCE__ *HMODULE;
typedef long long (*FARPROC)(void);
typedef union _RTL_RUN_ONCE { PVOID Ptr; } INIT_ONCE, *PINIT_ONCE;
#define INIT_ONCE_STATIC_INIT {0}
#define TRUE 1
#define FORMAT_MESSAGE_IGNORE_INSERTS 0x00000200
#define FORMAT_MESSAGE_FROM_SYSTEM 0x00001000
#define CALLBACK
#define WINAPI
typedef BOOL (CALLBACK *PINIT_ONCE_FN)(PINIT_ONCE InitOnce, PVOID Parameter, PVOID *Context);
#ifdef __cplusplus
extern "C" {
#endif
HMODULE WINAPI LoadLibraryExW(LPCWSTR lpLibFileName, HANDLE hFile, DWORD dwFlags);
DWORD WINAPI GetLastError(void);
DWORD WINAPI FormatMessageA(DWORD dwFlags, LPCVOID lpSource, DWORD dwMessageId, DWORD dwLanguageId, LPSTR lpBuffer,
                            DWORD nSize, va_list_stub *Arguments);
FARPROC WINAPI GetProcAddress(HMODULE hModule, LPCSTR lpProcName);
BOOL WINAPI InitOnceExecuteOnce(PINIT_ONCE InitOnce, PINIT_ONCE_FN InitFn, PVOID Parameter, PVOID *Context);
#ifdef __cplusplus
}
#endif
#endif
