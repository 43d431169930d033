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

/// A datagram socket standing in for systemd's notification socket.
public final class NotifySocket {
    public let fd: Int32
    /// The NOTIFY_SOCKET value: a path, or "@name" for an abstract socket.
    public let name: String

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        name = path
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (index, byte) in bytes.enumerated() { buffer[index] = byte } }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else {
            close(fd)
            throw TestFailure("bind \(path): errno \(errno)")
        }
    }

    /// The next datagram within `seconds`, or nil.
    public func receive(seconds: Double) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    deinit {
        close(fd)
        if !name.hasPrefix("@") { unlink(name) }
    }
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
