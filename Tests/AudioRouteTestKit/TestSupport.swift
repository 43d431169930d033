// Temporary directories, child processes, a stand-in for systemd's notify
// socket: the harness pieces every test target shares, without Foundation.
import AudioRouteSystem
import Synchronization

#if canImport(Glibc)
import CLinux
import Glibc
#endif

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` with a fresh directory under /tmp, removed afterwards whatever happens.
public func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = try makeTemporaryDirectory()
    defer { removeTree(path) }
    return try await body(path)
}

public func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/audioroute-test-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp: errno \(errno)") }
    return String(cString: made)
}

/// `rm -rf path`.
public func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    guard info.st_mode & S_IFMT == S_IFDIR, let dir = opendir(path) else {
        unlink(path)
        return
    }
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        if name == "." || name == ".." { continue }
        removeTree(path + "/" + name)
    }
    closedir(dir)
    rmdir(path)
}

/// The directory of the running test binary: `swift build` puts the products there.
public let productsDirectory: String = {
    guard let path = Directory.currentExecutable() else { preconditionFailure("cannot read /proc/self/exe") }
    return String(path[..<path.lastIndex(of: "/")!])
}()

/// A datagram socket standing in for systemd's notification socket (AudioRouteSystem's
/// `NotifyReceiver`, which the testbed's daemon launch uses too).
public final class NotifySocket {
    public let receiver: NotifyReceiver
    /// The NOTIFY_SOCKET value: a path, or "@name" for an abstract socket.
    public var name: String { receiver.name }

    public init(path: String) throws {
        do {
            receiver = try NotifyReceiver(path: path)
        } catch {
            throw TestFailure("\(error)")
        }
    }

    public init(_ receiver: NotifyReceiver) { self.receiver = receiver }

    /// The next datagram within `seconds`, or nil.
    public func receive(seconds: Double) -> String? { (try? receiver.receive(milliseconds: Int32(seconds * 1000))) ?? nil }
}

/// A process's resident memory, in KiB: VmRSS and VmHWM from /proc/PID/status, and the RSS
/// counted page by page with its anonymous part from /proc/PID/smaps_rollup (VmRSS comes from
/// counters that proc(5) calls inaccurate, by tens of pages per thread; the rest of the
/// anonymous part is mapped files: code).
public struct ProcessMemory: Sendable, CustomStringConvertible {
    public var rssKiB: Int
    public var peakKiB: Int
    public var exactKiB: Int
    public var anonymousKiB: Int

    /// VmRSS and VmHWM in MiB.
    public var rss: Double { Double(rssKiB) / 1024 }
    public var peak: Double { Double(peakKiB) / 1024 }

    /// Nil when the process is gone or its files cannot be read.
    public init?(pid: Int32) {
        func fields(_ path: String) -> [String: Int]? {
            guard let file = fopen(path, "r") else { return nil }
            defer { fclose(file) }
            var found: [String: Int] = [:]
            var line = [CChar](repeating: 0, count: 256)
            while fgets(&line, Int32(line.count), file) != nil {
                // "VmRSS:\t    8500 kB"
                let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                guard let colon = text.firstIndex(of: ":") else { continue }
                if let value = Int(String(text[colon...].filter(\.isNumber))) { found[String(text[..<colon])] = value }
            }
            return found
        }
        guard let status = fields("/proc/\(pid)/status"), let rollup = fields("/proc/\(pid)/smaps_rollup"),
            let rss = status["VmRSS"], let peak = status["VmHWM"], let exact = rollup["Rss"], let anonymous = rollup["Anonymous"]
        else { return nil }
        (rssKiB, peakKiB, exactKiB, anonymousKiB) = (rss, peak, exact, anonymous)
    }

    public var description: String {
        func mib(_ value: Double) -> String {
            let hundredths = Int((value * 100).rounded())
            return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) MiB"
        }
        return "VmRSS \(mib(rss)) (anonymous \(mib(Double(anonymousKiB) / 1024))), VmHWM \(mib(peak))"
    }
}
