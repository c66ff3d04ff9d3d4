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
#ifdef __cplusplus
typedef const wchar_t *LPCWSTR;
#else
typedef const __WCHAR_TYPE__ *LPCWSTR;
#endif
typedef unsigned int UINT;
typedef char *LPSTR;
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
UINT WINAPI GetSystemDirectoryA(LPSTR buffer, UINT size);
#define LOAD_LIBRARY_SEARCH_SYSTEM32 0x00000800
#define MAX_PATH 260
#ifndef TRUE
#define TRUE 1
#define FALSE 0
#endif
#ifdef __cplusplus
}
/* the generic names take narrow or wide strings, as with or without UNICODE */
inline HMODULE LoadLibrary(LPCSTR name) { return LoadLibraryA(name); }
inline HMODULE LoadLibrary(LPCWSTR name) { return LoadLibraryW(name); }
inline HMODULE LoadLibraryEx(LPCSTR name, HANDLE file, DWORD flags) { return LoadLibraryExA(name, file, flags); }
inline HMODULE LoadLibraryEx(LPCWSTR name, HANDLE file, DWORD flags) { return LoadLibraryExW(name, file, flags); }
inline HMODULE GetModuleHandle(LPCSTR name) { return GetModuleHandleA(name); }
inline HMODULE GetModuleHandle(LPCWSTR name) { return GetModuleHandleW(name); }
#else
HMODULE WINAPI LoadLibrary(const void *name);
HMODULE WINAPI LoadLibraryEx(const void *name, HANDLE file, DWORD flags);
HMODULE WINAPI GetModuleHandle(const void *name);
#endif
#endif
