// The clocks, read directly (no Foundation): for timing and for stamping lines.
import Glibc

/// CLOCK_MONOTONIC, the clock of the kernel's uevents and of `udevadm monitor`.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary start (boot).
    public static func nanoseconds() -> UInt64 { read(CLOCK_MONOTONIC) }

    public static func milliseconds() -> Int64 { Int64(nanoseconds() / 1_000_000) }

    /// Sleeps the calling thread (not a task: only for threads of our own).
    public static func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && Errno.Code.current == .interrupted { request = remaining }
    }

    static func read(_ clock: clockid_t) -> UInt64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// CLOCK_REALTIME: wall-clock time, for stamps a person reads.
public enum RealtimeClock {
    /// Nanoseconds since 1970-01-01 00:00 UTC.
    public static func nanoseconds() -> UInt64 { MonotonicClock.read(CLOCK_REALTIME) }
}
