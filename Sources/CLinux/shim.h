// What Swift's Glibc module leaves out, for the runtime.

// mallopt and its parameters (FrameMemory).
#include <malloc.h>

// O_DIRECT is declared only under _GNU_SOURCE, which the Glibc module is built without; its value
// is part of each architecture's ABI (asm-generic/fcntl.h and the x86 and arm overrides).
#if defined(__x86_64__) || defined(__i386__) || defined(__riscv)
#define LIFESYNC_O_DIRECT 040000
#elif defined(__aarch64__) || defined(__arm__)
#define LIFESYNC_O_DIRECT 0200000
#else
#error "LIFESYNC_O_DIRECT: add this architecture's O_DIRECT"
#endif

// eventfd (LoopWaker): a counter that poll sees, written from other threads.
#include <sys/eventfd.h>
