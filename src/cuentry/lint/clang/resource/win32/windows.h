/* cuentry lint: the part of <windows.h> a CUDA loader uses, for judging its `#ifdef _WIN32` branch on a
 * machine without the Windows SDK (not Microsoft's header). */
#ifndef CUENTRY_WINDOWS_H
#define CUENTRY_WINDOWS_H
#ifdef __cplusplus
extern "C" {
#endif
#define WINAPI __stdcall
typedef struct HINSTANCE__ *HINSTANCE;
typedef HINSTANCE HMODULE;
typedef int (WINAPI *FARPROC)(void);
typedef int BOOL;
typedef unsigned long DWORD;
typedef const char *LPCSTR;
typedef const unsigned short *LPCWSTR;
typedef void *HANDLE;
HMODULE WINAPI LoadLibraryA(LPCSTR name);
HMODULE WINAPI LoadLibraryW(LPCWSTR name);
HMODULE WINAPI LoadLibraryExA(LPCSTR name, HANDLE file, DWORD flags);
HMODULE WINAPI LoadLibraryExW(LPCWSTR name, HANDLE file, DWORD flags);
HMODULE WINAPI GetModuleHandleA(LPCSTR name);
HMODULE WINAPI GetModuleHandleW(LPCWSTR name);
FARPROC WINAPI GetProcAddress(HMODULE module, LPCSTR name);
BOOL WINAPI FreeLibrary(HMODULE module);
DWORD WINAPI GetLastError(void);
#define LoadLibrary LoadLibraryA
#define LoadLibraryEx LoadLibraryExA
#define GetModuleHandle GetModuleHandleA
#define LOAD_LIBRARY_SEARCH_SYSTEM32 0x00000800
#ifdef __cplusplus
}
#endif
#endif
