// A private D-Bus bus and audiorouted on it, set up once for the tests (AudioRouteTestKit) and
// the demo (`audioroute demo`). The demo ships in the CLI: no Foundation here, and no libc but
// through AudioRouteSystem. scripts/testbed.py is the same set-up for the scripts.
import AudioRouteSystem
import Synchronization

/// A testbed process that did not start or did not get ready, named.
public struct LaunchError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// dbus-daemon listening on a socket of its own, ready once it has printed its address.
/// Not stopped when it goes (a caller may have its own way of stopping it): call `stop()`.
public final class PrivateBusDaemon: Sendable {
    /// The stock session configuration.
    public static let sessionConfiguration = "/usr/share/dbus-1/session.conf"

    /// What it printed: `unix:path=…,guid=…`.
    public let address: String
    public let process: SpawnedProcess
    // Held open for its life: it was given a pipe as its standard output.
    private let output: FileDescriptor
    private let stopped = Mutex(false)

    /// Starts dbus-daemon with `configuration` on `unix:path=socket`.
    /// - Parameters:
    ///   - log: its standard error.
    ///   - started: called with the process as soon as it exists, before it is ready (the demo
    ///     registers it, so that a signal meanwhile still stops it).
    public init(
        socket: String, configuration: String = sessionConfiguration, log: SpawnStream = .inherit, seconds: Double = 20,
        started: (SpawnedProcess) -> Void = { _ in }
    ) throws(LaunchError) {
        let ends: PipeEnds
        do throws(Errno) { ends = try PipeEnds() } catch { throw LaunchError("dbus-daemon: pipe: \(error)") }
        var options = testbedSpawnOptions()
        options.standardOutput = .duplicate(ends.writeEnd.rawValue)
        options.standardError = log
        let arguments = [
            "dbus-daemon", "--config-file=\(configuration)", "--nofork", "--nopidfile", "--print-address=1", "--address=unix:path=\(socket)",
        ]
        let spawned: SpawnedProcess
        do throws(Errno) { spawned = try SpawnedProcess.spawn(arguments, options) } catch {
            throw LaunchError("cannot start dbus-daemon: \(error)")
        }
        started(spawned)
        // Our copy of the write end closes here, so that its exit ends our read.
        let readEnd = ends.keepingReadEnd()
        // The address line is the readiness line: the socket listens once it is printed.
        let line = readLine(readEnd, milliseconds: Int64(seconds * 1000))
        guard let line, line.hasPrefix("unix:") else {
            spawned.send(.kill)
            _ = try? spawned.wait()
            throw LaunchError("dbus-daemon did not print its address within \(seconds) s (it said \(line ?? "nothing"))")
        }
        process = spawned
        output = readEnd
        address = line
    }

    /// Sends `signal` (SIGSTOP and SIGCONT suspend and resume it).
    public func send(_ signal: ProcessSignal) {
        if !stopped.withLock({ $0 }) { process.send(signal) }
    }

    /// Kills and reaps it (a bus has nothing to save), once.
    public func stop() {
        guard !stopped.withLock({ was in defer { was = true }; return was }) else { return }
        process.send(.kill)
        _ = try? process.wait()
    }
}

/// audiorouted as a testbed runs it: state and runtime directories under `directory`, the
/// private bus as its session bus, a system bus where nothing listens unless one is named (no
/// BlueZ), and readiness (READY=1) on a notification socket of its own.
public struct DaemonLaunch: Sendable {
    public var binary: String
    /// Holds `state/`, `run/` and the notification socket.
    public var directory: String
    public var sessionBus: String
    /// Nil: `unix:path=<directory>/no-system-bus`, where nothing listens.
    public var systemBus: String?
    /// After the directories: a later `--state-dir` or `--runtime-dir` overrides them.
    public var arguments: [String] = []
    /// What runs the daemon (umockdev-wrapper), before its path.
    public var wrapper: [String] = []
    /// Variables set over this process's.
    public var environment: [String: String] = [:]

    public init(binary: String, directory: String, sessionBus: String) {
        self.binary = binary
        self.directory = directory
        self.sessionBus = sessionBus
    }

    /// What is executed.
    public var commandLine: [String] {
        wrapper + [binary, "--state-dir", directory + "/state", "--runtime-dir", directory + "/run"] + arguments
    }

    /// Starts it with a fresh notification socket in `directory`.
    /// - Parameter started: called with the process as soon as it exists (see `PrivateBusDaemon`).
    public func start(
        standardInput: SpawnStream = .inherit, standardOutput: SpawnStream = .inherit, standardError: SpawnStream = .inherit,
        started: (SpawnedProcess) -> Void = { _ in }
    ) throws(LaunchError) -> LaunchedDaemon {
        let notify: NotifyReceiver
        // Random: a test may start a daemon again in the same directory while the last one's socket is still there.
        let path = directory + "/notify-\(UInt32.random(in: 0...UInt32.max))"
        do throws(Errno) { notify = try NotifyReceiver(path: path) } catch { throw LaunchError("notification socket: \(error)") }
        var options = testbedSpawnOptions()
        (options.standardInput, options.standardOutput, options.standardError) = (standardInput, standardOutput, standardError)
        options.environment = environment
        options.environment["DBUS_SESSION_BUS_ADDRESS"] = sessionBus
        options.environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus ?? "unix:path=\(directory)/no-system-bus"
        options.environment["NOTIFY_SOCKET"] = notify.name
        let process: SpawnedProcess
        do throws(Errno) { process = try SpawnedProcess.spawn(commandLine, options) } catch {
            throw LaunchError("cannot start \(commandLine[0]): \(error)")
        }
        started(process)
        return LaunchedDaemon(process: process, notify: notify)
    }
}

/// A started audiorouted and its notification socket.
public struct LaunchedDaemon: Sendable {
    public let process: SpawnedProcess
    /// Where it says READY=1, then STOPPING=1 when it stops.
    public let notify: NotifyReceiver

    /// Waits up to `seconds` for READY=1.
    public func waitUntilReady(seconds: Double) throws(LaunchError) {
        let said: String?
        do throws(Errno) { said = try notify.receive(milliseconds: Int32(seconds * 1000)) } catch {
            throw LaunchError("audiorouted's notification socket: \(error)")
        }
        guard said == "READY=1" else {
            throw LaunchError(said.map { "audiorouted said \($0), not READY=1" } ?? "audiorouted did not say READY=1 within \(seconds) s")
        }
    }
}

/// A testbed's children start as from a shell: the signals a test runner or the demo catches or
/// ignores reset, none blocked, no descriptor of ours but the three standard ones.
private func testbedSpawnOptions() -> SpawnOptions {
    var options = SpawnOptions()
    options.defaultSignals = [.interrupt, .terminate, .hangup, .pipe]
    return options
}

/// One line from `descriptor` (without its newline), read a byte at a time so that nothing
/// after it is taken; nil at the end, on an error, or after `milliseconds`.
private func readLine(_ descriptor: borrowing FileDescriptor, milliseconds: Int64) -> String? {
    let deadline = MonotonicClock.milliseconds() + milliseconds
    var line: [UInt8] = []
    while true {
        let left = deadline - MonotonicClock.milliseconds()
        guard left > 0, (try? descriptor.waitReadable(milliseconds: Int32(left))) == true else { return nil }
        guard let byte = try? descriptor.read(upTo: 1), let first = byte.first else { return nil }
        if first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
        line.append(first)
        // An address is a line of a few hundred bytes; more is not dbus-daemon's.
        if line.count > 4096 { return nil }
    }
}
