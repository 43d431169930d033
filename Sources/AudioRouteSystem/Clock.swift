// The clocks, read directly (no Foundation): for timing. (A subset of the CLI branch's file
// of the same name: at the merge, take that one.)
import Glibc

/// CLOCK_MONOTONIC, the clock of the kernel's uevents and of `udevadm monitor`.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary start (boot).
    public static func nanoseconds() -> UInt64 { read(CLOCK_MONOTONIC) }

    static func read(_ clock: clockid_t) -> UInt64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
