import AudioRouteSystem
import Synchronization

/// Everything the demo started (processes, temporary directories), so that one cleanup
/// stops and removes all of it: at the normal end, on failure, and from the signal thread
/// on SIGINT, SIGTERM or SIGHUP.
final class DemoRegistry: Sendable {
    private struct State {
        var processes: [SpawnedProcess] = []
        var dirs: [String] = []
        var cleaned = false
        var keep = false
        var signalNumber: Int32 = 0
    }

    private let state = Mutex(State())
    /// Held for the whole of a cleanup: a second caller (the main flow failing because the
    /// signal thread is stopping its children) waits until everything is gone.
    private let cleaning = Mutex(())

    func add(_ process: SpawnedProcess) { state.withLock { $0.processes.append(process) } }
    /// A child the demo has reaped itself: cleanup must not signal its pid, which may be reused.
    func forget(_ process: SpawnedProcess) { state.withLock { $0.processes.removeAll { $0 == process } } }
    func add(dir: String) { state.withLock { $0.dirs.append(dir) } }
    /// A signal arrived: whoever finishes cleaning up exits with 128+signal.
    func noteSignal(_ number: Int32) { state.withLock { $0.signalNumber = number } }
    var signalled: Int32 { state.withLock { $0.signalNumber } }

    /// --keep: cleanup stops the processes but leaves the directories.
    func keepDirectories() { state.withLock { $0.keep = true } }

    /// Stops the processes, newest first (SIGTERM, then SIGKILL after 3 s), and removes the
    /// directories. Runs once.
    func cleanup() {
        cleaning.withLock { _ in
            let (processes, dirs) = state.withLock { state -> ([SpawnedProcess], [String]) in
                if state.cleaned { return ([], []) }
                state.cleaned = true
                return (state.processes, state.keep ? [] : state.dirs)
            }
            for process in processes.reversed() {
                process.send(.terminate)
                if !DemoRegistry.reap(process, milliseconds: 3000) {
                    process.send(.kill)
                    _ = DemoRegistry.reap(process, milliseconds: 1000)
                }
            }
            for dir in dirs.reversed() { DemoRegistry.remove(dir) }
            // The main flow may fail because a signal is stopping its children: the exit
            // status is still the signal's.
            let number = signalled
            if number != 0 { Environment.exitImmediately(128 + number) }
        }
    }

    /// rm -rf, again while the directory is still there: the player in this process may go
    /// on for a moment, and a device's sink (started by libasound, not registered here) then
    /// creates a file in it while the first removal runs.
    static func remove(_ dir: String) {
        for _ in 0..<20 {
            _ = try? DemoChild.run(["/bin/rm", "-rf", "--", dir])
            if FileInfo.size(dir) == nil { return }
            MonotonicClock.sleep(nanoseconds: 50_000_000)
        }
    }

    /// Waits for `process` to exit, polling; true once it has been reaped (or is not ours).
    static func reap(_ process: SpawnedProcess, milliseconds: Int) -> Bool {
        for _ in 0..<(milliseconds / 10) {
            do throws(Errno) {
                if try process.tryWait() != nil { return true }
            } catch {
                if error.code == .noChildProcess { return true }
            }
            MonotonicClock.sleep(nanoseconds: 10_000_000)
        }
        return false
    }
}

/// The one registry of the demo process (the signal thread cannot capture state).
let demoRegistry = DemoRegistry()

enum DemoSignals {
    /// SIGINT, SIGTERM and SIGHUP: the signal thread cleans up and exits 128+signal. SIGPIPE
    /// is ignored: a dead child's stdin is an error.
    static func install() -> SignalForward {
        ProcessSignal.pipe.ignore()
        return SignalForward([.interrupt, .terminate, .hangup]) { received in
            StandardStream.error.write("audioroute demo: signal \(received), stopping everything it started\n")
            demoRegistry.noteSignal(received)
            demoRegistry.cleanup()
            Environment.exitImmediately(128 + received)
        }
    }
}

/// A failure of the demo's harness, named.
public struct DemoError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// A child process of the demo: stdin and stdout are pipes (read line by line with a
/// timeout), stderr goes to a log file. Registered for cleanup as soon as it exists.
final class DemoChild {
    let pid: Int32
    let name: String
    private let input: FileDescriptor
    private let output: FileDescriptor
    private var buffer: [UInt8] = []

    init(_ name: String, _ argv: [String], environment: [String: String] = [:], log: String) throws {
        self.name = name
        let toChild = try Self.pipe(name)
        let fromChild = try Self.pipe(name)
        var options = Self.options(environment)
        options.standardInput = .duplicate(toChild.readEnd.rawValue)
        options.standardOutput = .duplicate(fromChild.writeEnd.rawValue)
        options.standardError = .open(log, [.writeOnly, .create, .append])
        let process = try Self.spawn(argv, options)
        pid = process.pid
        // The child's ends are its own now: closed here, so that its exit ends our reads.
        input = toChild.keepingWriteEnd()
        output = fromChild.keepingReadEnd()
        demoRegistry.add(process)
    }

    static func pipe(_ name: String) throws -> PipeEnds {
        do throws(Errno) {
            return try PipeEnds()
        } catch {
            throw DemoError("\(name): pipe: \(error.code)")
        }
    }

    /// The demo's children: the signals the demo catches or ignores reset, and no descriptor
    /// of ours but the three standard ones.
    static func options(_ environment: [String: String]) -> SpawnOptions {
        var options = SpawnOptions()
        options.environment = environment
        options.defaultSignals = [.interrupt, .terminate, .hangup, .pipe]
        return options
    }

    static func spawn(_ argv: [String], _ options: SpawnOptions) throws -> SpawnedProcess {
        do throws(Errno) {
            return try SpawnedProcess.spawn(argv, options)
        } catch {
            throw DemoError("cannot start \(argv[0]): \(error.code)")
        }
    }

    /// Runs a command to its end with stdout and stderr to /dev/null; its exit status.
    @discardableResult
    static func run(_ argv: [String], environment: [String: String] = [:]) throws -> Int32 {
        var options = options(environment)
        options.standardOutput = .open("/dev/null", .writeOnly)
        options.standardError = .open("/dev/null", .writeOnly)
        return try spawn(argv, options).wait().shellStatus
    }

    /// Writes one line to the child's stdin.
    func send(_ line: String) {
        _ = try? input.writeAll(Array((line + "\n").utf8))
    }

    /// The next line of the child's stdout; throws on end of output or after `seconds`.
    func readLine(seconds: Double = 20) throws -> String {
        var remaining = Int32(seconds * 1000)
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            guard remaining > 0 else { throw DemoError("\(name): no answer within \(seconds) s") }
            let before = MonotonicClock.milliseconds()
            let ready: Bool
            do throws(Errno) {
                ready = try output.waitReadable(milliseconds: remaining)
            } catch {
                throw DemoError("\(name): poll: \(error.code)")
            }
            remaining -= Int32(MonotonicClock.milliseconds() - before)
            if !ready { continue }
            // A failed read is tried again; none at all is the child's end.
            guard let chunk = try? output.read(upTo: 4096) else { continue }
            if chunk.isEmpty { throw DemoError("\(name) exited (see its log)") }
            buffer += chunk
        }
    }

    /// Sends a command and returns the answer line.
    func ask(_ line: String) throws -> String {
        send(line)
        return try readLine()
    }

    /// Sends a command whose answer must start with "ok" (any case).
    func expectOK(_ command: String) throws {
        let answer = try ask(command)
        guard answer.lowercased().hasPrefix("ok") else { throw DemoError("\(name): \(command): \(answer)") }
    }
}

/// Polls `condition` every millisecond for up to `seconds`. Sleeps as a task: it never blocks
/// a thread of the cooperative pool (the player's follow task needs one); what is timed is
/// stamped elsewhere (the reader threads), not here.
func waitUntil(_ what: String, seconds: Double = 10, _ condition: () -> Bool) async throws {
    let deadline = MonotonicClock.milliseconds() + Int64(seconds * 1000)
    while !condition() {
        guard MonotonicClock.milliseconds() < deadline else { throw DemoError("waited \(seconds) s for \(what)") }
        try await Task.sleep(for: .milliseconds(1))
    }
}
