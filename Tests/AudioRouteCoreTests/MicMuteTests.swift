// The built-in microphone's hardware mute (a capture switch, a mic-mute key): the tower
// interrupts the sessions recording from it with `builtInMicMuted` and ends the interruption
// at the unmute, unless a session set overrideMutedMicrophoneInterruption.
@testable import AudioRouteCore
import Testing

/// The categories that record (spec §5: an input side).
private let recording: Set<Category> = [.record, .playAndRecord, .multiRoute]

@Suite("Built-in mic mute")
struct MicMuteTests {
    @Test("a mute interrupts an active session recording from the built-in mic; the unmute ends it", arguments: Category.allCases)
    func muteAndUnmute(category: Category) throws {
        var tower = try activeTower(laptop, category)
        let muted = tower.setBuiltInMicMuted(true)
        #expect(tower.builtInMicMuted)
        if recording.contains(category) {
            #expect(events(muted) == ["app:interruptionBegan(builtInMicMuted)"])
            #expect(tower.session("app")?.isActive == false)
            #expect(events(tower.setBuiltInMicMuted(false)) == ["app:interruptionEnded(shouldResume: true)"])
        } else {
            #expect(events(muted) == [])
            #expect(tower.session("app")?.isActive == true)
            #expect(events(tower.setBuiltInMicMuted(false)) == [])
        }
    }

    @Test("overrideMutedMicrophoneInterruption keeps the session going", arguments: [Category.record, .playAndRecord])
    func override(category: Category) throws {
        var tower = try activeTower(laptop, category, options: .overrideMutedMicrophoneInterruption)
        #expect(events(tower.setBuiltInMicMuted(true)) == [])
        #expect(tower.session("app")?.isActive == true)
        #expect(events(tower.setBuiltInMicMuted(false)) == [])
    }

    @Test("a session recording from another mic (a headset's) is not interrupted")
    func otherMic() throws {
        var tower = try activeTower(laptop + wiredHeadset(sequence: 0), .playAndRecord)
        #expect(tower.route.inputs == ["hsmic"])
        #expect(events(tower.setBuiltInMicMuted(true)) == [])
        #expect(tower.session("app")?.isActive == true)
    }

    @Test("only the edges count: the same state again, or no session recording, says nothing")
    func edges() throws {
        var tower = try activeTower(laptop, .record)
        _ = tower.setBuiltInMicMuted(true)
        #expect(events(tower.setBuiltInMicMuted(true)) == [])
        // Activated again while muted: no longer interrupted, so the unmute has nothing to end.
        _ = try tower.setActive(true, session: "app")
        #expect(events(tower.setBuiltInMicMuted(false)) == [])
        #expect(events(tower.setBuiltInMicMuted(false)) == [])
    }

    @Test("a session closed while muted is not told at the unmute; another one interrupted is")
    func closedWhileMuted() throws {
        var tower = try makeTower(laptop, sessions: [("a", .record, .default, []), ("b", .playAndRecord, .default, .mixWithOthers)])
        _ = try tower.setActive(true, session: "a")
        _ = try tower.setActive(true, session: "b")
        #expect(events(tower.setBuiltInMicMuted(true)) == ["a:interruptionBegan(builtInMicMuted)", "b:interruptionBegan(builtInMicMuted)"])
        _ = try tower.closeSession("a")
        #expect(events(tower.setBuiltInMicMuted(false)) == ["b:interruptionEnded(shouldResume: true)"])
    }

    @Test("the route follows the next session when the controlling one is interrupted")
    func routeFollows() throws {
        var tower = try makeTower(laptop, sessions: [("music", .playback, .default, .mixWithOthers), ("rec", .record, .default, [])])
        _ = try tower.setActive(true, session: "music")
        _ = try tower.setActive(true, session: "rec")
        #expect(tower.route == Route(inputs: ["mic"], outputs: []))
        let muted = tower.setBuiltInMicMuted(true)
        #expect(muted.change?.reason == .categoryChange)
        #expect(tower.route == Route(inputs: [], outputs: ["spk"]))
    }

    @Test("simulate: a micMuted step interrupts with reason builtInMicMuted")
    func scenario() throws {
        let document = #"""
            {"ports": [{"uid": "spk", "type": "builtInSpeaker", "device": "internal"}, {"uid": "mic", "type": "builtInMic", "device": "internal"}],
             "sessions": [{"id": "rec", "category": "record"}],
             "steps": [{"activate": "rec"}, {"micMuted": true}, {"micMuted": false}]}
            """#
        var raw: [String] = []
        _ = try Simulator.run(try Scenario.parse(Array(document.utf8))) { raw.append($0) }
        let lines = try raw.map { try JSON.parse($0) }
        #expect(lines.count == 4)
        #expect(lines[2]["events"] == (try JSON.parse(#"[{"session": "rec", "type": "interruptionBegan", "reason": "builtInMicMuted"}]"#)))
        #expect(lines[3]["events"] == (try JSON.parse(#"[{"session": "rec", "type": "interruptionEnded", "shouldResume": true}]"#)))
        #expect(throws: ScenarioError.self) { try Scenario.parse(Array(#"{"steps": [{"micMuted": 1}]}"#.utf8)) }
    }

    @Test("a watcher's inputMuted counts for the device of a built-in mic only")
    func inputMutedByDevice() throws {
        var tower = try activeTower(laptop + wiredHeadset(sequence: 0), .record, options: [])
        _ = try tower.setPreferredInput("mic", session: "app")
        #expect(events(try tower.apply(.inputMuted(device: "jack", muted: true))) == [])
        #expect(!tower.builtInMicMuted)
        #expect(events(try tower.apply(.inputMuted(device: "internal", muted: true))) == ["app:interruptionBegan(builtInMicMuted)"])
        #expect(tower.mutedInputDevices == ["jack", "internal"])
        // The headset's switch coming on again leaves the built-in mic muted.
        #expect(events(try tower.apply(.inputMuted(device: "jack", muted: false))) == [])
        #expect(tower.builtInMicMuted)
        #expect(events(try tower.apply(.inputMuted(device: "internal", muted: false))) == ["app:interruptionEnded(shouldResume: true)"])
    }

    @Test("property: after a mute no active session records from the built-in mic unless it opted out; the unmute ends exactly the mute's interruptions")
    func property() throws {
        var rng = SplitMix64(seed: 29)
        let configurations: [(Category, CategoryOptions)] = [
            (.record, []), (.record, .overrideMutedMicrophoneInterruption), (.playAndRecord, []), (.playAndRecord, .mixWithOthers),
            (.playAndRecord, [.mixWithOthers, .overrideMutedMicrophoneInterruption]), (.multiRoute, .mixWithOthers), (.playback, .mixWithOthers),
            (.ambient, []), (.soloAmbient, []),
        ]
        for _ in 0..<300 {
            let count = Int.random(in: 1...4, using: &rng)
            let chosen = (0..<count).map { index in (id: "s\(index)", configuration: configurations.randomElement(using: &rng)!) }
            let ports = Bool.random(using: &rng) ? laptop + wiredHeadset(sequence: 0) : laptop
            var tower = try makeTower(ports, sessions: chosen.map { ($0.id, $0.configuration.0, .default, $0.configuration.1) })
            for entry in chosen.shuffled(using: &rng) { _ = try tower.setActive(true, session: entry.id) }
            let active = Set(tower.sessions.filter(\.isActive).map(\.id))
            let muted = tower.setBuiltInMicMuted(true)
            let interrupted = muted.events.filter { $0.kind == .interruptionBegan(reason: .builtInMicMuted) }.map(\.session)
            for session in tower.sessions where session.isActive {
                let inputs = resolve(session.request, tower.ports)
                #expect(session.configuration.options.contains(.overrideMutedMicrophoneInterruption) || !inputs.inputs.contains("mic"), "\(chosen)")
            }
            // Only sessions that were active are interrupted, and each once.
            #expect(Set(interrupted).isSubset(of: active) && Set(interrupted).count == interrupted.count, "\(chosen)")
            let unmuted = tower.setBuiltInMicMuted(false)
            #expect(unmuted.events.map(\.session) == interrupted, "\(chosen)")
            #expect(unmuted.events.allSatisfy { $0.kind == .interruptionEnded(shouldResume: true) })
        }
    }

    @Test("Apple's raw values")
    func rawNumbers() {
        #expect(InterruptionReason.default.rawNumber == 0)
        #expect(InterruptionReason.builtInMicMuted.rawNumber == 2)
        #expect(InterruptionReason.routeDisconnected.rawNumber == 4)
    }
}
