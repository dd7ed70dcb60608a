#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift cannot call. Turning memory statistics off spares
/// every allocation SQLite makes a global mutex and two counters (process-wide; it must run
/// before the library initializes, and is harmless to try later: it returns SQLITE_MISUSE).
static inline int lifesync_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
