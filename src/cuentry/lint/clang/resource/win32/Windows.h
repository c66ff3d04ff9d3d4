/* cuentry lint: <Windows.h> as some projects spell it. */
#include "windows.h"
