#ifndef CUENTRY_FAKE_GL_H
#define CUENTRY_FAKE_GL_H
typedef unsigned int GLuint;
typedef unsigned int GLenum;
#endif
