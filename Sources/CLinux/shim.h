// What Swift's Glibc module leaves out, for the runtime.

// mallopt and its parameters (FrameMemory).
#include <malloc.h>

// eventfd (LoopWaker): a counter that poll sees, written from other threads.
#include <sys/eventfd.h>
