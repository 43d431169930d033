// The daemon's side of card profiles (PipeWireHelper with CardProfiles and CardProfileFollower)
// against a stand-in helper (a shell script speaking the helper's protocol): the HDA card's
// profile "off" under a route on its speaker is asked once for the highest-priority profile with
// an output, and the defaults follow once the speaker's node appears; a server that sets the card
// back (a session manager's rule) is asked twice, then no more.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteTestKit
import Foundation
import Logging
import Testing

@testable import AudioRouteDaemon

@Suite(.serialized, .timeLimit(.minutes(1))) struct PipeWireCardProfileTests {
    static let profiles = [
        #"{"index": 0, "name": "off", "description": "Off", "priority": 0, "available": "yes", "sinks": 0, "sources": 0}"#,
        #"{"index": 1, "name": "output:analog-stereo+input:analog-stereo", "description": "Duplex", "priority": 6565, "available": "yes", "sinks": 1, "sources": 1}"#,
        #"{"index": 2, "name": "output:analog-stereo", "description": "Output", "priority": 6500, "available": "yes", "sinks": 1, "sources": 0}"#,
        #"{"index": 3, "name": "pro-audio", "description": "Pro Audio", "priority": 9000, "available": "yes", "sinks": 1, "sources": 1}"#,
    ].joined(separator: ", ")

    static func device(active: Int, added: Bool = false) -> String {
        #"{"device": 40, "change": "\#(added ? "added" : "changed")", "properties": {"device.name": "alsa_card.pci-0000_00_1b.0", "api.alsa.card": "0"}, "profiles": [\#(profiles)], "active": \#(active)}"#
    }
    static let speakerNode = #"{"node": 50, "change": "added", "properties": {"node.name": "speaker", "media.class": "Audio/Sink", "alsa.card": "0", "alsa.device": "0"}}"#
    static let speaker = Port(uid: "pci-0000:00:1b.0/speaker", type: .builtInSpeaker, device: "pci-0000:00:1b.0", alsa: "dmix:CARD=Intel,DEV=0")

    /// A stand-in helper: hello, the card with profile off; each profile request answered ok and
    /// the card reported at the profile asked, then `afterSet` (shell) for the `n`th request ($n).
    static func helper(in directory: String, afterSet: String) throws -> String {
        let path = directory + "/audioroute-pipewire"
        try """
            #!/bin/sh
            printf '%s\\n' '{"hello": "0.3.65"}' '\(device(active: 0, added: true))'
            n=0
            while IFS= read -r line; do
              printf '%s\\n' "$line" >> "\(directory)/lines"
              case "$line" in
                '{"profile": '*)
                  n=$((n + 1))
                  printf '%s\\n' '{"profile": {"device": 40, "index": 1}, "ok": true}' '\(device(active: 1))'
                  \(afterSet) ;;
              esac
            done
            """.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    /// Runs the daemon's helper side with the stand-in until the lines it wrote satisfy `done`; its lines.
    func run(_ afterSet: String, until done: @escaping ([String]) -> Bool) throws -> [String] {
        let directory = try makeTemporaryDirectory()
        defer { removeTree(directory) }
        let executable = try Self.helper(in: directory, afterSet: afterSet)
        let loop = try PollThread(name: "profile-test")
        let helper = PipeWireHelper(
            executable: executable, runtimeDirectory: directory, loop: loop, logger: Logger(label: "test"), readCards: { ["Intel": 0] })
        defer {
            helper.stop()
            loop.stop()
        }
        helper.routeChanged(RoutePorts(outputs: [Self.speaker]))
        helper.engineChanged(SoundEngine(server: .pipewire, pulseProtocol: true, heldCards: [0], rule: .pipewireAnswers, signal: "test"))
        var lines: [String] = []
        for _ in 0..<1000 {
            lines = ((try? String(contentsOfFile: directory + "/lines", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if done(lines) { break }
            usleep(10_000)
        }
        return lines
    }

    @Test func aCardSetOffGetsAProfileWithAnOutputOnceAndTheDefaultFollows() throws {
        // The server keeps the profile asked, and the speaker's node appears.
        let lines = try run("printf '%s\\n' '\(Self.speakerNode)'") { lines in lines.contains { $0.hasPrefix(#"{"defaults""#) } }
        #expect(lines == [#"{"profile": {"device": 40, "index": 1}}"#, #"{"defaults": {"sink": "speaker", "source": null}}"#], "\(lines)")
    }

    @Test func aServerThatSetsTheCardBackIsAskedTwiceThenNoMore() throws {
        // Each time, the server sets the card back to off at once; after the second, the speaker's
        // node comes by another way (its defaults line says the daemon read everything before it).
        let afterSet = """
            printf '%s\\n' '\(Self.device(active: 0))'
                  [ $n -ge 2 ] && printf '%s\\n' '\(Self.speakerNode)'
            """
        let lines = try run(afterSet) { lines in lines.contains { $0.hasPrefix(#"{"defaults""#) } }
        #expect(lines.filter { $0.hasPrefix(#"{"profile""#) } == Array(repeating: #"{"profile": {"device": 40, "index": 1}}"#, count: 2), "\(lines)")
        #expect(lines.last == #"{"defaults": {"sink": "speaker", "source": null}}"#, "\(lines)")
    }
}
