// Termination signals as an AsyncSequence, without Dispatch: one thread that sleeps in
// sigwait(3) until a signal comes.
import Glibc

/// Signals taken by a thread waiting in sigwait(3).
public enum SignalStream {
    /// Blocks `signals` in the calling thread, and so in every thread it starts afterwards,
    /// and returns them, as they arrive, as a stream. Call it first thing in `main`, before
    /// any thread exists: a thread started earlier would keep the default action (terminate).
    /// Throws the failed call (pthread_sigmask or the thread's start).
    public static func make(_ signals: [Int32]) throws(SystemError) -> AsyncStream<Int32> {
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in signals { sigaddset(&mask, number) }
        let status = pthread_sigmask(SIG_BLOCK, &mask, nil)
        guard status == 0 else { throw SystemError(errno: status, operation: "pthread_sigmask", path: "signals") }
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let blocked = mask
        let failed = startThread {
            var waiting = blocked
            var number: Int32 = 0
            // sigwait takes a pending blocked signal; nothing else runs on this thread.
            while sigwait(&waiting, &number) == 0 { continuation.yield(number) }
            continuation.finish()
        }
        if let failed { throw SystemError(errno: failed, operation: "pthread_create", path: "signals") }
        return stream
    }
}
