#ifndef CUENTRY_FAKE_EGLEXT_H
#define CUENTRY_FAKE_EGLEXT_H
typedef void *EGLImageKHR;
typedef void *EGLStreamKHR;
typedef void *EGLSyncKHR;
#endif
