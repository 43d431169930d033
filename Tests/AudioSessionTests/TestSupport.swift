// The shared harness (temporary directories, child processes, file helpers)
// for every file of this target.
@_exported import AudioRouteTestKit

import AudioSession
import Glibc

/// Waits (up to about a second) until `player` has written its first period: its position
/// leaves 0. Returns at once then; a `for … where` poll would go on polling, and see the
/// position back at 0 once the file ended (a null slave does not pace, the file takes
/// ~250 ms), so the caller would act after the end rather than mid-file.
func untilStarted(_ player: AudioPlayer) {
    var polls = 0
    while player.currentTime == 0 && polls < 10_000 {
        usleep(100)
        polls += 1
    }
}
