// SocketProbe against real sockets: a listener answers with this process's pid and name; a
// socket file nobody listens on, a regular file and an over-long path are refused, each with
// its fault; nothing at the path is absent.
import AudioRouteSystem
import AudioRouteTestKit
import Glibc
import Testing

@Suite struct SocketProbeTests {
    /// A Unix stream socket bound at `path`, listening or not; its descriptor.
    func bound(_ path: String, listening: Bool) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (index, byte) in path.utf8.enumerated() { buffer[index] = byte } }
        let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard result == 0 else { throw TestFailure("bind \(path): errno \(errno)") }
        if listening { listen(fd, 4) }
        return fd
    }

    @Test func aListenerAnswersWithItsProgram() throws {
        try withSyncTemporaryDirectory { dir in
            let fd = try bound(dir + "/live", listening: true)
            defer { close(fd) }
            let result = SocketProbe.probe(dir + "/live")
            #expect(result == .live(pid: getpid(), program: SocketProbe.programName(getpid())), "\(result)")
            #expect(SocketProbe.programName(getpid())?.isEmpty == false)
        }
    }

    @Test func aSocketNobodyListensOnIsRefused() throws {
        try withSyncTemporaryDirectory { dir in
            // Bound, then closed: the file stays, as a killed server's does.
            close(try bound(dir + "/stale", listening: false))
            guard case .refused(let error) = SocketProbe.probe(dir + "/stale") else {
                Issue.record("a stale socket file answered")
                return
            }
            #expect(error.code == .init(ECONNREFUSED), "\(error)")
        }
    }

    @Test func notASocketAnAbsentPathAndALongOne() throws {
        try withSyncTemporaryDirectory { dir in
            try writeFile(dir + "/file", "not a socket\n")
            guard case .refused = SocketProbe.probe(dir + "/file") else {
                Issue.record("a regular file answered")
                return
            }
            #expect(SocketProbe.probe(dir + "/nothing") == .absent)
            let long = dir + "/" + String(repeating: "d", count: 120)
            try writeFile(long, "")
            guard case .refused(let error) = SocketProbe.probe(long) else {
                Issue.record("a path longer than sun_path was not refused")
                return
            }
            #expect(error.description.contains("socket path of"), "\(error)")
        }
    }
}
