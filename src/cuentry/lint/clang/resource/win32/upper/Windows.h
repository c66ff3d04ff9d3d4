/* cuentry lint: <Windows.h> as some projects spell it (a directory of its own: one name per case-insensitive file system). */
#include <windows.h>
