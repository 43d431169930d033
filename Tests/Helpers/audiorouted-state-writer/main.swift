// Test helper for the crash-safety test: saves state number 1, 2, 3, ... with
// the daemon's StateStore in a loop, printing each number once its save has
// returned, until it is killed.
import AudioRouteDaemon
import AudioRouteSystem
import Logging

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    StandardStream.error.write("usage: audiorouted-state-writer STATE_DIR\n")
    CurrentProcess.exit(2)
}
let store = StateStore(directory: arguments[1])
var number: UInt64 = 1
while true {
    do {
        try store.save(DaemonState.crashTestSample(number))
    } catch {
        StandardStream.error.write("save failed: \(error)\n")
        CurrentProcess.exit(1)
    }
    StandardStream.output.write("\(number)\n")
    number += 1
}
