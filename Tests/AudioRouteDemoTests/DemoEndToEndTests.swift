import AudioRouteCore
import Foundation
import Testing

/// `audioroute demo --json`, the built binary end to end: the harness (private buses, the
/// BlueZ mock, a umockdev phone, audiorouted) comes up, every phase's audio lands on the
/// device the story says, and everything it started is gone afterwards, on a signal too.
@Suite(.serialized) struct DemoEndToEndTests {
    /// Runs the demo with stdout and stderr in files; polls (Process.waitUntilExit hangs here).
    final class Demo: @unchecked Sendable {
        let process = Process()
        let out: URL
        let err: URL

        init(_ arguments: [String]) throws {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("demo-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            out = scratch.appendingPathComponent("out")
            err = scratch.appendingPathComponent("err")
            _ = FileManager.default.createFile(atPath: out.path, contents: nil)
            _ = FileManager.default.createFile(atPath: err.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: UmockdevTestbed.binary)
            process.arguments = ["demo"] + arguments
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardError = try FileHandle(forWritingTo: err)
            try process.run()
        }

        var objects: [JSON] {
            ((try? String(contentsOf: out, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { try? JSON.parse(String($0)) }
        }
        var stderr: String { (try? String(contentsOf: err, encoding: .utf8)) ?? "" }

        func wait(timeout: TimeInterval = 120) -> Int32? {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                return nil
            }
            return process.terminationStatus
        }

        func cleanUp() { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
    }

    static func frames(_ json: JSON?) -> [String: Int64] {
        guard case .object(let members)? = json else { return [:] }
        var result: [String: Int64] = [:]
        for member in members { if case .integer(let value) = member.value { result[member.key] = value } }
        return result
    }

    @Test func theStoryPlaysOnTheRightDevicesAndVerifies() throws {
        let demo = try Demo(["--json"])
        defer { demo.cleanUp() }
        let status = demo.wait()
        let objects = demo.objects
        #expect(status == 0, "stdout: \(objects)\nstderr: \(demo.stderr)")
        let verify = objects.filter { $0["event"]?.string == "verify" }
        let byPhase = Dictionary(verify.map { ($0["phase"]?.string ?? "?", $0) }, uniquingKeysWith: { first, _ in first })
        // The story as the spec tells it: which device received audio in each phase. The
        // music (the AudioPlayer) runs freely, so its phases say "at least"; the call's
        // fixed-length audio is exact; a paused player's phases got nothing at all.
        let expected: [String: [String: Int64]] = [
            "speaker": ["demo_builtin": 12_000],
            "wired": ["demo_headphones": 12_000],
            "bluetooth": ["bluealsa_a2dp": 12_000],
            "prompt": ["bluealsa_a2dp": 12_000 + 4_800],
            "call": ["bluealsa_sco": 8_000],
            "override": ["demo_builtin": 8_000],
            "resumed": ["bluealsa_a2dp": 12_000],
            "bluetooth off": [:],
            "call while paused": [:],
            "wired again": ["demo_headphones": 12_000],
            "unplugged": [:],
        ]
        let exact: Set<String> = ["call", "override", "bluetooth off", "call while paused", "unplugged"]
        #expect(verify.map { $0["phase"]?.string ?? "?" } == [
            "speaker", "wired", "bluetooth", "prompt", "call", "override", "resumed", "bluetooth off", "call while paused", "wired again",
            "unplugged", "ducking", "frames", "aplay",
        ])
        Self.expectAplayFollowedThePlug(byPhase["aplay"])
        // The prompt phase's music was written at 0.3 of the undimmed level (read from the samples).
        #expect(byPhase["ducking"]?["ok"] == .bool(true), "\(String(describing: byPhase["ducking"]))")
        for (phase, frames) in expected {
            let got = Self.frames(byPhase[phase]?["got"])
            #expect(Set(got.keys) == Set(frames.keys), "phase \(phase): \(String(describing: byPhase[phase]))")
            for (device, count) in frames {
                if exact.contains(phase) {
                    #expect(got[device] == count, "phase \(phase): \(String(describing: byPhase[phase]))")
                } else {
                    #expect((got[device] ?? 0) >= count, "phase \(phase): \(String(describing: byPhase[phase]))")
                }
            }
            #expect(byPhase[phase]?["ok"] == .bool(true))
        }
        // No frame lost or repeated: the files hold as many frames as the player advanced.
        #expect(byPhase["frames"]?["ok"] == .bool(true), "\(String(describing: byPhase["frames"]))")
        #expect(byPhase["frames"]?["played"] == byPhase["frames"]?["inFiles"])
        #expect(objects.last?["event"]?.string == "result")
        #expect(objects.last?["ok"] == .bool(true))
        // Its temporary directory (buses, testbed, logs, file PCMs) is gone.
        let dir = objects.first { $0["event"]?.string == "harness" }?["dir"]?.string
        #expect(dir != nil)
        if let dir { #expect(!FileManager.default.fileExists(atPath: dir)) }
    }

    /// The plain aplay (a child process through the ALSA plugin): one process, exit 0; its
    /// numbered frames first in the speaker's file (the old port's), then, from the very next
    /// frame, in the wired headset's (the new port's), none lost or repeated.
    static func expectAplayFollowedThePlug(_ verify: JSON?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(verify?["ok"] == .bool(true), "\(String(describing: verify))", sourceLocation: sourceLocation)
        #expect(verify?["exit"] == .integer(0), sourceLocation: sourceLocation)
        guard case .array(let files)? = verify?["files"], files.count == 2, case .integer(let written)? = verify?["written"] else {
            Issue.record("aplay's files: \(String(describing: verify))", sourceLocation: sourceLocation)
            return
        }
        let (old, new) = (files[0], files[1])
        #expect(old["device"] == .string("demo_builtin"), sourceLocation: sourceLocation)
        #expect(new["device"] == .string("demo_headphones"), sourceLocation: sourceLocation)
        guard case .integer(let oldFrames)? = old["frames"], case .integer(let newFrames)? = new["frames"] else { return }
        #expect(old["first"] == .integer(0), sourceLocation: sourceLocation)
        #expect(oldFrames >= 4_800, "too few frames on the speaker before the plug", sourceLocation: sourceLocation)
        #expect(new["first"] == .integer(oldFrames), "the new port's file does not continue where the old one stopped", sourceLocation: sourceLocation)
        #expect(newFrames >= 4_800, sourceLocation: sourceLocation)
        #expect(oldFrames + newFrames == written, sourceLocation: sourceLocation)
    }

    @Test func aSignalStopsEverythingItStarted() throws {
        let demo = try Demo(["--json"])
        defer { demo.cleanUp() }
        // Once audiorouted is up, every kind of child is running.
        let deadline = Date().addingTimeInterval(60)
        var daemonPID: Int32?
        while daemonPID == nil && Date() < deadline && demo.process.isRunning {
            if case .integer(let pid)? = demo.objects.first(where: { $0["event"]?.string == "daemon" })?["pid"] { daemonPID = Int32(pid) }
            usleep(1_000)
        }
        let dir = demo.objects.first { $0["event"]?.string == "harness" }?["dir"]?.string
        kill(demo.process.processIdentifier, SIGTERM)
        let status = demo.wait(timeout: 30)
        // It may have finished before the signal arrived (0); otherwise 128+SIGTERM.
        #expect(status == 128 + SIGTERM || status == 0, "stderr: \(demo.stderr)")
        #expect(daemonPID != nil, "stdout: \(demo.objects)")
        if let daemonPID { #expect(kill(daemonPID, 0) != 0, "audiorouted \(daemonPID) still runs") }
        if let dir { #expect(!FileManager.default.fileExists(atPath: dir)) }
    }
}
