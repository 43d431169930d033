// Test helper for the crash-safety test: saves state number 1, 2, 3, ... with
// the daemon's StateStore in a loop, printing each number once its save has
// returned, until it is killed.
import AudioRouteDaemon
import Logging

#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    _ = "usage: audiorouted-state-writer STATE_DIR\n".withCString { write(2, $0, strlen($0)) }
    exit(2)
}
let store = StateStore(directory: arguments[1])
var number: UInt64 = 1
while true {
    do {
        try store.save(DaemonState.crashTestSample(number))
    } catch {
        _ = "save failed: \(error)\n".withCString { write(2, $0, strlen($0)) }
        exit(1)
    }
    _ = "\(number)\n".withCString { write(1, $0, strlen($0)) }
    number += 1
}
