// What Swift's Glibc module leaves out, for the runtime.

// mallopt and its parameters (FrameMemory), malloc_trim and mallinfo2 (NodeServer+Budget).
#include <malloc.h>

// eventfd (LoopWaker): a counter that poll sees, written from other threads.
#include <sys/eventfd.h>
