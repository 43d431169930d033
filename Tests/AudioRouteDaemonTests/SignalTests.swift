// Signals of the built daemon: SIGPIPE, which it ignores (a write to a peer that went
// away fails with EPIPE instead of killing it).
import AudioRouteIPC
import AudioRouteDaemon
import AudioRouteTestbed
import Testing

#if canImport(Glibc)
import CLinux
import Glibc
#endif

@Suite struct AudioroutedSignalTests {
    /// Standard error a pipe whose reader is gone (as under D-Bus activation's Exec= once
    /// the bus daemon's reader goes): every log line is a write that fails with EPIPE. With
    /// SIGPIPE at its default the first one killed the daemon (status 128+13).
    @Test func aStandardErrorWithNoReaderDoesNotKillTheDaemon() async throws {
        try await withTemporaryDirectory { dir in
            let bus = try PrivateBus()
            defer { bus.close() }
            var errPipe: [Int32] = [0, 0]
            #expect(pipe(&errPipe) == 0)
            // Close-on-exec: no other test's child may keep the read end open (dup2 clears it on fd 2).
            for fd in errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            var launch = DaemonLaunch(binary: AudioroutedEndToEndTests.binary, directory: dir, sessionBus: bus.address)
            launch.arguments = ["--log-level", "debug"]
            let result = Result { () throws(LaunchError) in try launch.start(standardError: .duplicate(errPipe[1])) }
            // The reader goes before the daemon writes its first line.
            close(errPipe[0])
            close(errPipe[1])
            let launched = try result.get()
            let pid = launched.process.pid
            let socket = NotifySocket(launched.notify)
            var reaped = false
            defer {
                if !reaped {
                    kill(pid, SIGKILL)
                    var status: Int32 = 0
                    waitpid(pid, &status, 0)
                }
            }
            func exited() -> Int32? {
                var status: Int32 = 0
                guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
                reaped = true
                return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            }
            let ready = socket.receive(seconds: 20)
            #expect(ready == "READY=1", "exit status \(exited().map { "\($0)" } ?? "none: still running")")
            guard ready == "READY=1" else { return }
            // "ready" was logged after READY; each call below logs at debug.
            let client = try APIClient(address: bus.address)
            let session = try client.openSession("org.example.Player", category: "playback")
            #expect(client.session(session, "SetActive", "bb", "[true, false]") == "{\"reply\": null}")
            #expect(client.property(DBusAPI.managerPath, DBusAPI.managerInterface, "SilentMode") == "{\"reply\": false}")
            #expect(exited() == nil, "the daemon died writing to a closed pipe")
            kill(pid, SIGTERM)
            var status: Int32?
            for _ in 0..<5000 where status == nil {
                status = exited()
                if status == nil { usleep(2000) }
            }
            #expect(status == 0)
        }
    }
}
