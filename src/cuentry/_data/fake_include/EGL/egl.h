#ifndef CUENTRY_FAKE_EGL_H
#define CUENTRY_FAKE_EGL_H
typedef int EGLint;
typedef void *EGLDisplay;
#endif
