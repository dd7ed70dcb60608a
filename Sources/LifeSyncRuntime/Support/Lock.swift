import Glibc

/// A pthread mutex, for the few places the runtime shares state between threads.
package final class Lock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()

    package init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}
