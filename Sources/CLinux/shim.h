// What Swift's Glibc module leaves out, for the runtime.

// pthread_setname_np (detachThread) is a GNU extension.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>

// mallopt and its parameters (FrameMemory), malloc_trim and mallinfo2 (NodeServer+Budget).
#include <malloc.h>

// eventfd (LoopWaker): a counter that poll sees, written from other threads.
#include <sys/eventfd.h>
