import AudioRouteCore
import Testing

@testable import AudioRouteWatchers

/// A UCM card's built-in mic is muted by its own profile's `CaptureSwitch` (docs/ucm.md, "The
/// built-in mic's mute"): the control of the data source the helper last said is enabled, off.
@Suite struct UCMMicMuteTests {
    static let phone = UCMPortStateTests.phone
    static let mic = "platform-sound"

    /// The PinePhone's profile with two built-in mics (DigitalMic first, Mic2 second) naming
    /// their own switches, and a speaker.
    static func card(enabled: UCMState?, switches: [String: String] = ["DigitalMic": "Mic1 Capture Switch", "Mic2": "Mic2 Capture Switch"])
        -> UCMCard
    {
        UCMCard(
            card: "hw:PinePhone", verbs: ["HiFi", "Voice Call"],
            ports: [
                UCMCardPort(
                    port: Port(uid: "ucm:hw:PinePhone:Speaker", type: .builtInSpeaker, device: "ucm:hw:PinePhone", direction: .output, alsa: "hw:PinePhone,0"),
                    devices: ["HiFi": ["Speaker"], "Voice Call": ["Speaker"]]),
                UCMCardPort(
                    port: Port(uid: "ucm:hw:PinePhone:builtInMic", type: .builtInMic, device: "ucm:hw:PinePhone", direction: .input, alsa: "hw:PinePhone,0"),
                    devices: ["HiFi": ["DigitalMic", "Mic2"], "Voice Call": ["DigitalMic", "Mic2"]],
                    captureSwitches: ["HiFi": switches, "Voice Call": switches]),
            ], enabled: enabled
        ).withPublicUIDs(base: "platform-sound")
    }

    static func record(_ switches: [String: Bool], cardSwitch: Bool? = false) -> CardRecord {
        var card = phone
        card.namedSwitches = switches
        // The card's own "Capture Switch" (index 0) off: it is no UCM card's mute.
        card.captureSwitch = cardSwitch
        return card
    }

    static func mutes(_ events: [PortEvent]) -> [PortEvent] { events.filter { if case .inputMuted = $0 { true } else { false } } }

    @Test func theEnabledDataSourcesSwitchMutesTheMic() {
        var state = UCMPortStateTests.state()
        _ = state.apply(.card(Self.record(["Mic1 Capture Switch": true, "Mic2 Capture Switch": false])))
        let call = UCMState(verb: "Voice Call", devices: ["Speaker", "DigitalMic"])
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: call)))) == [])
        #expect(state.followedSwitches == [Self.phone.syspath: ["Mic1 Capture Switch", "Mic2 Capture Switch"]])

        // DigitalMic's switch off (all channels): muted; Mic2's, not enabled, counts for nothing.
        #expect(state.apply(.card(Self.record(["Mic1 Capture Switch": false, "Mic2 Capture Switch": false])))
            == [.inputMuted(device: Self.mic, muted: true)])
        #expect(Self.mutes(state.apply(.card(Self.record(["Mic1 Capture Switch": false, "Mic2 Capture Switch": true])))) == [])
        #expect(state.apply(.card(Self.record(["Mic1 Capture Switch": true]))) == [.inputMuted(device: Self.mic, muted: false)])

        // Mic2 enabled instead: its switch counts.
        let second = UCMState(verb: "Voice Call", devices: ["Speaker", "Mic2"])
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: second)))) == [])
        #expect(state.apply(.card(Self.record(["Mic1 Capture Switch": true, "Mic2 Capture Switch": false])))
            == [.inputMuted(device: Self.mic, muted: true)])

        // The helper gone: the card's ports are udev's (whose mute is the card's own Capture
        // Switch, on here), and what UCM muted is unmuted.
        #expect(Self.mutes(state.apply(.card(Self.record(["Mic2 Capture Switch": false], cardSwitch: true)))) == [])
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: nil))) == [.inputMuted(device: Self.mic, muted: false)])
    }

    @Test func aMicNotEnabledIsNotMutedAndARequestOnItsWayHoldsTheState() {
        var state = UCMPortStateTests.state()
        _ = state.apply(.card(Self.record(["Mic1 Capture Switch": false])))
        // The helper's hello: no verb, nothing enabled; the switch off is the sequences', not a mute.
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: UCMState())))) == [])
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: UCMState(verb: "HiFi", devices: ["Speaker"])))))
            == [])
        // A request on its way (the verb's sequence turns the switch off, the device's on): nothing
        // is said until the reply.
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: nil)))) == [])
        #expect(Self.mutes(state.apply(.card(Self.record(["Mic1 Capture Switch": true])))) == [])
        #expect(Self.mutes(state.apply(.card(Self.record(["Mic1 Capture Switch": false])))) == [])
        let call = UCMState(verb: "Voice Call", devices: ["Speaker", "DigitalMic"])
        _ = state.apply(.card(Self.record(["Mic1 Capture Switch": true])))
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: call)))) == [])
        // Muted, then a request on its way: still muted, not a spurious unmute and mute again.
        #expect(state.apply(.card(Self.record(["Mic1 Capture Switch": false]))) == [.inputMuted(device: Self.mic, muted: true)])
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: nil)))) == [])
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: call)))) == [])
        // The mute interrupted the call and the route left the mic: still muted until the user's
        // unmute turns the switch on, though the mic is not enabled.
        let music = UCMState(verb: "HiFi", devices: ["Speaker"])
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: music)))) == [])
        #expect(state.apply(.card(Self.record(["Mic1 Capture Switch": true]))) == [.inputMuted(device: Self.mic, muted: false)])
        // Off again while not enabled: the sequences', no mute.
        #expect(Self.mutes(state.apply(.card(Self.record(["Mic1 Capture Switch": false])))) == [])
        _ = state.apply(.card(Self.record(["Mic1 Capture Switch": true])))
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: call)))) == [])
        #expect(state.apply(.card(Self.record(["Mic1 Capture Switch": false]))) == [.inputMuted(device: Self.mic, muted: true)])
        // The card gone: unmuted.
        #expect(Self.mutes(state.apply(.cardRemoved(syspath: Self.phone.syspath, action: "remove"))) == [.inputMuted(device: Self.mic, muted: false)])
    }

    @Test func aSwitchTheHelperCouldNotFollowIsExplainedAsNoMute() {
        var card = Self.card(enabled: UCMState())
        card.notes = ["HiFi/Mic1: CaptureSwitch \"\" is an empty name: its mute is not followed", "HiFi/Bluetooth: no port type for this device"]
        let decisions = UdevPortState.ucmClassification(card, jacks: []).decisions.filter { $0.subject == "card" }.map { "\($0.outcome): \($0.signal)" }
        #expect(decisions.dropFirst() == [
            "no mute: UCM: HiFi/Mic1: CaptureSwitch \"\" is an empty name: its mute is not followed",
            "no port: UCM: HiFi/Bluetooth: no port type for this device",
        ])
    }

    @Test func noSwitchOrOneTheCardHasNotMutesNothing() {
        var state = UCMPortStateTests.state()
        let call = UCMState(verb: "Voice Call", devices: ["Speaker", "DigitalMic"])
        // The profile names none: the card's own Capture Switch (off here) does not count either.
        _ = state.apply(.card(Self.record([:])))
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: call, switches: [:])))) == [])
        #expect(state.followedSwitches == [:])
        // One the card has not (the watcher found no such control: absent from the record).
        #expect(Self.mutes(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(enabled: call)))) == [])
        #expect(Self.mutes(state.apply(.card(Self.record(["Other Switch": false])))) == [])
    }
}
