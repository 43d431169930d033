// Giving up the processor for a moment: a spin that waits for another thread's short step.
import Glibc

/// sched_yield(2): lets another runnable thread go first.
public func yieldThread() {
    _ = sched_yield()
}
