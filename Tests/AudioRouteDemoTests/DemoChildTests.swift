@testable import AudioRouteDemo
import AudioRouteSystem
import Glibc
import Testing

/// The demo's children (through System's `SpawnedProcess`): nothing of ours past the three
/// standard streams, no signal ignored or blocked because the demo ignores or blocks it, and
/// the exit status as a shell reports it.
@Suite(.serialized) struct DemoChildTests {
    /// The lines a child writes until "end".
    static func lines(of child: DemoChild) throws -> [String] {
        var lines: [String] = []
        while true {
            let line = try child.readLine(seconds: 10)
            if line == "end" { return lines }
            lines.append(line)
        }
    }

    @Test func aChildGetsOnlyTheStandardStreams() throws {
        // A descriptor without O_CLOEXEC (dup2 does not copy it), as libasound's popen leaves one.
        let source = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(source) }
        #expect(dup2(source, 200) == 200)
        defer { close(200) }
        let child = try DemoChild(
            "fds", ["/bin/sh", "-c", "for n in 0 1 2 200; do [ -e /proc/$$/fd/$n ] && echo $n; done; echo end"], log: "/dev/null")
        #expect(try Self.lines(of: child) == ["0", "1", "2"])
    }

    @Test func aChildStartsWithDefaultSignals() throws {
        ProcessSignal.pipe.ignore()
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        defer { pthread_sigmask(SIG_UNBLOCK, &blocked, nil) }
        let child = try DemoChild(
            "signals", ["/bin/grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"], log: "/dev/null")
        let lines = [try child.readLine(seconds: 10), try child.readLine(seconds: 10)]
        for line in lines {
            let fields = line.split(separator: "\t")
            let mask = UInt64(fields.last ?? "", radix: 16) ?? .max
            for signal in [SIGHUP, SIGINT, SIGTERM, SIGPIPE] {
                #expect(mask & (1 << UInt64(signal - 1)) == 0, "\(lines): signal \(signal)")
            }
        }
    }

    @Test func runGivesTheExitStatusAsAShellDoes() throws {
        #expect(try DemoChild.run(["/bin/sh", "-c", "exit 3"]) == 3)
        #expect(try DemoChild.run(["/bin/sh", "-c", "kill -TERM $$"]) == 128 + SIGTERM)
        #expect(throws: DemoError.self) { try DemoChild.run(["/nonexistent/command"]) }
    }

    @Test func aChildsExitEndsItsOutput() throws {
        let child = try DemoChild("quiet", ["/bin/true"], log: "/dev/null")
        #expect(throws: DemoError.self) { try child.readLine(seconds: 10) }
    }
}
