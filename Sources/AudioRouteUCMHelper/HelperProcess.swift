// A helper process the daemon speaks to in JSON lines: the UCM helper (`audioroute-ucm`) and the
// PipeWire helper (`audioroute-pipewire`). Its stdin takes requests, its stdout gives its lines;
// both ends nonblocking, so that a helper that stops reading or writing never blocks the daemon.

import AudioRouteCore
import AudioRouteSystem
import Logging
import Synchronization

/// One helper process: its stdin for lines to it, its stdout read on a poll loop.
public final class HelperProcess: Sendable {
    /// What the log calls it ("UCM helper").
    public let name: String
    let process: SpawnedProcess
    let logger: Logger
    private let input: Mutex<FileDescriptor?>
    private let output: FileDescriptor
    private let lines = Mutex(UCMLineSplitter())

    private init(name: String, process: SpawnedProcess, input: consuming FileDescriptor, output: consuming FileDescriptor, logger: Logger) {
        self.name = name
        self.process = process
        self.input = Mutex(Optional(input))
        self.output = output
        self.logger = logger
    }

    /// Starts `executable` with `environment`, its stdin and stdout ours.
    public static func start(name: String, executable: String, environment: [String: String], logger: Logger) throws(Errno) -> HelperProcess {
        let toHelper = try PipeEnds()
        let fromHelper = try PipeEnds()
        var options = SpawnOptions()
        options.standardInput = .duplicate(toHelper.readEnd.rawValue)
        options.standardOutput = .duplicate(fromHelper.writeEnd.rawValue)
        options.environment = environment
        options.defaultSignals = [.pipe, .terminate, .interrupt, .hangup]
        let process = try SpawnedProcess.spawn([executable], options)
        let input = toHelper.keepingWriteEnd()
        let output = fromHelper.keepingReadEnd()
        // A helper that stops reading must not block the daemon: a request that does not fit is retried later.
        try input.setNonBlocking()
        try output.setNonBlocking()
        logger.info("\(name) started", metadata: ["pid": "\(process.pid)"])
        return HelperProcess(name: name, process: process, input: input, output: output, logger: logger)
    }

    /// Reads the helper's lines on `loop` and hands each to `handle`; at its end, `handle(nil)`,
    /// and it is reaped. A line over the limit is dropped.
    public func read(on loop: any PollLoop, handle: @escaping @Sendable ([UInt8]?) -> Void) {
        loop.watch(fd: output.rawValue) { [self] in
            let chunk: [UInt8]
            do throws(Errno) {
                chunk = try output.read(upTo: 4096)
            } catch {
                if error.code == .wouldBlock { return true }
                chunk = []
            }
            if chunk.isEmpty {
                ended()
                handle(nil)
                return false
            }
            for line in lines.withLock({ $0.feed(chunk) }) {
                guard case .line(let bytes) = line else {
                    logger.warning("\(name) line over \(UCMLineSplitter.maximumLineLength) bytes: dropped")
                    continue
                }
                handle(bytes)
            }
            return true
        }
    }

    private func ended() {
        let (process, logger, name) = (self.process, self.logger, self.name)
        _ = startThread {
            let termination = try? process.wait()
            logger.notice("\(name) ended", metadata: ["termination": "\(termination.map { "\($0)" } ?? "unknown")"])
        }
    }

    /// Writes one line; false when it could not (the helper is not reading, or is stopped).
    @discardableResult
    public func send(_ line: JSON) -> Bool {
        let bytes = line.bytes + [UInt8(ascii: "\n")]
        return input.withLock { input in
            do throws(Errno) {
                // Borrowed: nil once stopped.
                guard try input?.writeAll(bytes) != nil else { return false }
                logger.debug("\(name) request", metadata: ["line": "\(String(decoding: line.bytes, as: UTF8.self))"])
                return true
            } catch {
                logger.warning("\(name) not reading: line not sent", metadata: ["error": "\(error)"])
                return false
            }
        }
    }

    public func kill() { _ = process.send(.kill) }

    /// Waits for the helper to exit (a second at most, then it is killed) and reaps it: for a
    /// helper whose reader no longer runs, after `stop()`.
    public func reap() {
        for _ in 0..<100 {
            if (try? process.tryWait()) != nil { return }
            MonotonicClock.sleep(nanoseconds: 10_000_000)
        }
        kill()
        _ = try? process.wait()
    }

    /// Closes its stdin: it finishes its line and exits; the reader reaps it.
    public func stop() {
        input.withLock { $0 = nil }
    }
}
