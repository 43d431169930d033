// Applying a route on the PinePhone's UCM configuration, as installed by alsa-ucm-conf,
// through libasound on the fake card of UCMBench.swift, which records every control
// write: the verbs' and devices' sequences run in UCMPlan's order, and the speaker's and
// the earpiece's switches are never both on. Then the jack controls and their events.
import AudioRouteALSA
import AudioRouteCore
import AudioRouteSystem
import Testing

private let speakerSwitch = "Line Out Playback Switch"
private let earpieceSwitch = "Earpiece Playback Switch"

/// The output switches' writes only, "<control>=<values>".
private func outputSwitches(_ writes: [String]) -> [String] {
    writes.filter { $0.hasPrefix(speakerSwitch + "=") || $0.hasPrefix(earpieceSwitch + "=") }
}

/// Replays writes: the index of the first after which the speaker's and the earpiece's
/// switches are both on, or nil.
private func firstWriteWithBothOn(_ writes: [String]) -> Int? {
    var on: [String: Bool] = [speakerSwitch: false, earpieceSwitch: false]
    for (index, write) in writes.enumerated() {
        let parts = write.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, on[parts[0]] != nil else { continue }
        on[parts[0]] = parts[1].split(separator: ",").contains("on")
        if on[speakerSwitch]! && on[earpieceSwitch]! { return index }
    }
    return nil
}

/// The position of the first write equal to `write` (absent: `Int.max`, which fails the order checks).
private func position(_ write: String, in writes: [String]) -> Int { writes.firstIndex(of: write) ?? Int.max }

@Suite(.serialized) struct UCMApplyTests {
    /// Issue 19's case: music on the speaker, a call on the earpiece, the call moved to the
    /// speaker, then music again, then nothing.
    @Test func callToTheEarpieceThenTheSpeakerAndBack() throws {
        try UCMBench.with {
            try UCMBench.resetPinePhone()
            var manager = try UCMManager(card: "hw:PinePhone")
            #expect(manager.state == UCMState())
            var all: [String] = []

            // HiFi on the speaker: the verb's sequence (both outputs off), then the speaker on: its
            // EnableSequence, then its PlaybackSwitch on (the unmute a sound server would do).
            var steps = try manager.apply(UCMState(verb: "HiFi", devices: ["Speaker"]))
            #expect(steps.map(\.description) == ["verb HiFi", "enable Speaker"])
            var writes = try UCMBench.takeWrites()
            all += writes
            #expect(outputSwitches(writes) == [
                "\(speakerSwitch)=off,off", "\(earpieceSwitch)=off", "\(speakerSwitch)=on,on", "\(speakerSwitch)=on,on",
            ])
            #expect(writes.suffix(4) == [
                "AIF1 DA0 Stereo Playback Route=Mix Mono", "\(speakerSwitch)=on,on", "Line Out Playback Volume=31", "\(speakerSwitch)=on,on",
            ])
            #expect(manager.unmuteFailures.isEmpty)
            #expect(manager.state == UCMState(verb: "HiFi", devices: ["Speaker"]))

            // A call on the earpiece: the speaker off first, then the call verb, then the earpiece and the mic.
            steps = try manager.apply(UCMState(verb: "Voice Call", devices: ["Earpiece", "DigitalMic"]))
            #expect(steps.map(\.description) == ["disable Speaker", "verb Voice Call", "enable Earpiece", "enable DigitalMic"])
            writes = try UCMBench.takeWrites()
            all += writes
            #expect(writes.first == "\(speakerSwitch)=off,off")
            // "AIF2 Digital DAC Playback Switch" on: only Voice Call's EnableSequence writes it so.
            let verbWrite = position("AIF2 Digital DAC Playback Switch=on,on", in: writes)
            #expect(0 < verbWrite && verbWrite < position("\(earpieceSwitch)=on", in: writes))
            #expect(position("\(earpieceSwitch)=on", in: writes) < position("Mic1 Capture Switch=on,on", in: writes))
            #expect(writes.last == "Mic1 Capture Switch=on,on")
            #expect(manager.state == UCMState(verb: "Voice Call", devices: ["Earpiece", "DigitalMic"]))

            // The call moved to the speaker: the earpiece off, then the speaker on; the verb stays.
            steps = try manager.apply(UCMState(verb: "Voice Call", devices: ["Speaker", "DigitalMic"]))
            #expect(steps.map(\.description) == ["disable Earpiece", "enable Speaker"])
            writes = try UCMBench.takeWrites()
            all += writes
            #expect(writes == [
                "\(earpieceSwitch)=off", "AIF1 DA0 Stereo Playback Route=Mix Mono", "\(speakerSwitch)=on,on", "Line Out Playback Volume=31",
                "\(speakerSwitch)=on,on",
            ])
            #expect(manager.state == UCMState(verb: "Voice Call", devices: ["Speaker", "DigitalMic"]))

            // Back to music on the speaker: every device off explicitly, HiFi, the speaker on.
            steps = try manager.apply(UCMState(verb: "HiFi", devices: ["Speaker"]))
            #expect(steps.map(\.description) == ["disable Speaker", "disable DigitalMic", "verb HiFi", "enable Speaker"])
            writes = try UCMBench.takeWrites()
            all += writes
            #expect(Array(writes.prefix(2)) == ["\(speakerSwitch)=off,off", "Mic1 Capture Switch=off,off"])
            #expect(writes.last == "\(speakerSwitch)=on,on")
            #expect(!writes.contains("AIF2 Digital DAC Playback Switch=on,on"))

            // Nothing asked: nothing written.
            #expect(try manager.apply(UCMState(verb: "HiFi", devices: ["Speaker"])).isEmpty)
            #expect(try UCMBench.takeWrites().isEmpty)

            // No route on this card: the speaker off, then no verb ("Inactive").
            steps = try manager.apply(UCMState())
            #expect(steps.map(\.description) == ["disable Speaker", "verb Inactive"])
            writes = try UCMBench.takeWrites()
            all += writes
            #expect(writes == ["\(speakerSwitch)=off,off"])  // HiFi's DisableSequence is empty
            #expect(manager.state == UCMState())
            #expect(manager.current() == UCMState())

            #expect(firstWriteWithBothOn(all) == nil)
            // Each enable: the sequence's write, then the unmute's.
            #expect(outputSwitches(all).filter { $0.hasSuffix("on") || $0.hasSuffix("on,on") } == [
                "\(speakerSwitch)=on,on", "\(speakerSwitch)=on,on", "\(earpieceSwitch)=on", "\(earpieceSwitch)=on",
                "\(speakerSwitch)=on,on", "\(speakerSwitch)=on,on", "\(speakerSwitch)=on,on", "\(speakerSwitch)=on,on",
            ])
        }
    }

    @Test func theReplayFindsBothOutputsOn() {
        #expect(firstWriteWithBothOn(["\(speakerSwitch)=on,on", "Mic1 Capture Switch=on", "\(earpieceSwitch)=on"]) == 2)
        #expect(firstWriteWithBothOn(["\(speakerSwitch)=on,on", "\(speakerSwitch)=off,off", "\(earpieceSwitch)=on"]) == nil)
    }

    @Test func unknownVerbOrDeviceChangesNothing() throws {
        try UCMBench.with {
            try UCMBench.resetPinePhone()
            var manager = try UCMManager(card: "hw:PinePhone")
            try manager.apply(UCMState(verb: "HiFi", devices: ["Speaker"]))
            _ = try UCMBench.takeWrites()
            #expect(throws: UCMApplyError.unknownVerb("Karaoke", known: ["HiFi", "Voice Call"])) {
                try manager.apply(UCMState(verb: "Karaoke", devices: []))
            }
            #expect(throws: UCMApplyError.unknownDevice(
                "Handset", verb: "Voice Call", known: ["Speaker", "Earpiece", "DigitalMic", "HeadsetMic", "Headphone"])
            ) {
                try manager.apply(UCMState(verb: "Voice Call", devices: ["Earpiece", "Handset"]))
            }
            #expect(throws: UCMApplyError.repeatedDevice("Speaker")) {
                try manager.apply(UCMState(verb: "HiFi", devices: ["Speaker", "Speaker"]))
            }
            #expect(throws: UCMApplyError.devicesWithoutVerb(["Speaker"])) { try manager.apply(UCMState(verb: nil, devices: ["Speaker"])) }
            #expect(try UCMBench.takeWrites().isEmpty)
            #expect(manager.state == UCMState(verb: "HiFi", devices: ["Speaker"]))
            #expect(UCMApplyError.unknownVerb("Karaoke", known: ["HiFi"]).description == "unknown verb \"Karaoke\" (the card's verbs: \"HiFi\")")
        }
    }

    /// A control that refuses its write fails the step that writes it: the error names the
    /// step, what went before, and libasound's error; the steps after it are not tried; the
    /// state is libasound's.
    @Test func aFailingStepIsNamedAndStopsThePlan() throws {
        try UCMBench.with {
            try UCMBench.resetPinePhone()
            defer { try? UCMBench.refuseWrites([]) }
            var manager = try UCMManager(card: "hw:PinePhone")
            try manager.apply(UCMState(verb: "HiFi", devices: ["Speaker"]))
            // Written only by the Earpiece's EnableSequence, after its switch.
            try UCMBench.refuseWrites(["Earpiece Playback Volume"])
            _ = try UCMBench.takeWrites()
            do {
                try manager.apply(UCMState(verb: "Voice Call", devices: ["Earpiece", "DigitalMic"]))
                Issue.record("applied despite the refused control")
            } catch let error as UCMApplyError {
                guard case .stepFailed(let step, let alsa, let done) = error else { throw error }
                #expect(step == .enable("Earpiece"))
                #expect(done.map(\.description) == ["disable Speaker", "verb Voice Call"])
                #expect(alsa.code == -Errno.Code.ioError.rawValue)
                #expect(error.description == """
                    "enable Earpiece" failed: snd_use_case_set _enadev Earpiece: Input/output error \
                    (done before it: disable Speaker, verb Voice Call)
                    """)
            }
            // libasound does not count the half-enabled earpiece; the mic was not tried.
            #expect(manager.state == UCMState(verb: "Voice Call", devices: []))
            #expect(!(try UCMBench.takeWrites()).contains("Mic1 Capture Switch=on,on"))

            // The verb itself failing: both verbs' EnableSequences write the headset mic's switch.
            // libasound has left Voice Call before, so no verb is current.
            try UCMBench.refuseWrites(["Mic2 Capture Switch"])
            #expect(throws: UCMApplyError.self) { try manager.apply(UCMState(verb: "HiFi", devices: ["Speaker"])) }
            #expect(manager.state == UCMState())
            try UCMBench.refuseWrites([])
            #expect(try manager.apply(UCMState(verb: "HiFi", devices: ["Speaker"])).map(\.description) == ["verb HiFi", "enable Speaker"])
        }
    }

    // MARK: Jacks

    @Test func jackControlsAreReadAndTheirChangesArrive() throws {
        try UCMBench.with {
            try UCMBench.resetPinePhone()
            try UCMBench.setJack("Headset Microphone Jack", plugged: true)
            var monitor = try UCMJackMonitor(
                controlName: "hw:PinePhone", jacks: ["Headphone Jack", "Headset Microphone Jack", "Dock Jack", "Line Out Playback Switch"])
            #expect(monitor.values == ["Headphone Jack": false, "Headset Microphone Jack": true])
            // No such control; a control that is not on the card interface.
            #expect(Set(monitor.failures.keys) == ["Dock Jack", "Line Out Playback Switch"])

            var descriptors = try monitor.control.pollDescriptors()
            #expect(!descriptors.isEmpty)
            #expect(try Poll.wait(&descriptors, timeoutMilliseconds: 0) == 0)

            try UCMBench.setJack("Headphone Jack", plugged: true)
            #expect(try Poll.wait(&descriptors, timeoutMilliseconds: 5000) > 0)
            var changes = try monitor.changes()
            #expect(changes.map(\.jack) == ["Headphone Jack"] && changes.map(\.plugged) == [true])
            #expect(monitor.values["Headphone Jack"] == true)

            // Written again unchanged: the fake card signals every write; no change.
            try UCMBench.setJack("Headphone Jack", plugged: true)
            #expect(try monitor.changes().isEmpty)

            try UCMBench.setJack("Headphone Jack", plugged: false)
            try UCMBench.setJack("Headset Microphone Jack", plugged: false)
            #expect(try Poll.wait(&descriptors, timeoutMilliseconds: 5000) > 0)
            changes = try monitor.changes()
            #expect(changes.map(\.jack) == ["Headphone Jack", "Headset Microphone Jack"] && changes.map(\.plugged) == [false, false])
        }
    }
}

/// Enabling a device turns its PlaybackSwitch on, as a sound server's mixer path does, whichever
/// form the profile names it in (Debian's Librem 5: `name='Speaker Switch'`, an element id).
@Suite(.serialized) struct UCMUnmuteTests {
    @Test func aDevicesSwitchIsTurnedOnAfterItsSequence() throws {
        try UCMBench.with {
            try UCMBench.reset("L5")
            var manager = try UCMManager(card: "hw:L5")
            try manager.apply(UCMState(verb: "HiFi", devices: ["Speaker"]))
            let writes = try UCMBench.takeWrites("L5")
            #expect(writes.last == "Speaker Switch=on,on", "\(writes)")
            #expect(manager.unmuteFailures.isEmpty, "\(manager.unmuteFailures)")
            try manager.apply(UCMState(verb: "HiFi", devices: ["Headphones"]))
            #expect(try UCMBench.takeWrites("L5").last == "Headphone Switch=on,on")
        }
    }
}
