// audiorouted's logging under journald: `<N>` priority prefixes when standard error is the
// journal's stream (JOURNAL_STREAM names its device and inode), swift-log's format otherwise.
import AudioRouteDaemon
import AudioRouteTestKit
import Glibc
import Logging
import Testing

@Suite struct JournalLogHandlerTests {
    @Test func aLineIsPriorityLabelMessageAndSortedMetadata() {
        let line = JournalLogHandler.line(
            level: .warning, label: "audiorouted.udev", message: "port event refused\nby the tower", metadata: ["uid": "usb-1", "error": "duplicate"])
        #expect(line == "<4>audiorouted.udev: port event refused by the tower error=duplicate uid=usb-1\n")
    }

    @Test func levelsMapToSyslogPriorities() {
        let levels: [Logger.Level] = [.trace, .debug, .info, .notice, .warning, .error, .critical]
        #expect(levels.map(JournalLogHandler.priority) == [7, 7, 6, 5, 4, 3, 2])
    }

    @Test func onlyTheStreamJournaldNamedCounts() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        var info = stat()
        #expect(fstat(ends[1], &info) == 0)
        let named = "\(info.st_dev):\(info.st_ino)"
        #expect(JournalLogHandler.isJournalStream(environment: ["JOURNAL_STREAM": named], fd: ends[1]))
        // Inherited but redirected: another inode.
        #expect(!JournalLogHandler.isJournalStream(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"], fd: ends[1]))
        #expect(!JournalLogHandler.isJournalStream(environment: ["JOURNAL_STREAM": "garbage"], fd: ends[1]))
        #expect(!JournalLogHandler.isJournalStream(environment: [:], fd: ends[1]))
    }

    @Test func theHandlerWritesOneLinePerMessageAtItsLevel() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        var handler = JournalLogHandler(label: "audiorouted", fd: ends[1])
        handler.logLevel = .notice
        handler[metadataKey: "instance"] = "session"
        let logger = Logger(label: "audiorouted") { _ in handler }
        logger.info("not at notice level")
        logger.notice("ready", metadata: ["alsa": "/run/user/1000/audioroute/asound.conf"])
        close(ends[1])
        ends[1] = -1
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "<5>audiorouted: ready alsa=/run/user/1000/audioroute/asound.conf instance=session\n")
    }

    /// The built daemon, with standard error a pipe that JOURNAL_STREAM names (as systemd
    /// does for a service whose output goes to the journal): every line has a priority prefix.
    /// The same daemon without it logs in swift-log's format (AudioroutedEndToEndTests).
    @Test func theDaemonLogsInJournaldsFormUnderJournald() async throws {
        try await withTemporaryDirectory { dir in
            // A shell names its own standard error, the pipe the test reads, then becomes the daemon.
            let wrapper = dir + "/journald-stderr"
            try writeText(wrapper, "#!/bin/sh\nJOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec '\(AudioroutedEndToEndTests.binary)' \"$@\"\n")
            #expect(chmod(wrapper, 0o755) == 0)
            let (socket, bus, child) = try AudioroutedEndToEndTests.startOnPrivateBus(in: dir, binary: wrapper)
            defer { bus.close() }
            #expect(socket.receive(seconds: 20) == "READY=1", "stderr: \(child.availableStderr())")
            child.signal(SIGTERM)
            #expect(child.wait(seconds: 10) == 0)
            let lines = child.availableStderr().split(separator: "\n")
            #expect(lines.contains { $0.hasPrefix("<5>audiorouted: ready alsa=") }, "\(lines)")
            let unprefixed = lines.filter { line in
                !(line.count > 3 && line.first == "<" && line.dropFirst().first?.isNumber == true && line.dropFirst(2).first == ">")
            }
            #expect(unprefixed.isEmpty, "lines without a priority: \(unprefixed)")
        }
    }
}
