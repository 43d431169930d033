import AudioRouteCore
import Testing

@testable import AudioRouteWatchers
import AudioRouteSystem

/// Jacks from a card's ALSA `… Jack` controls: which names count, and how they merge with
/// the evdev switch devices of the same jacks (one jack, one port).
@Suite struct ControlJackTests {
    static func control(_ card: CardRecord, _ name: String, numid: Int, state: SwitchSet? = nil) -> JackRecord {
        let supported = ControlJacks.switches(forName: name) ?? []
        return JackRecord(
            syspath: card.syspath + "/controlC0#\(numid)", cardSyspath: card.syspath, name: name, supported: supported,
            state: state ?? [], stateKnown: state != nil, source: .control)
    }

    @Test func controlNamesMapToTheEvdevJackKinds() {
        let cases: [(String, SwitchSet?)] = [
            ("Headphone Jack", .headphoneInsert),
            ("Front Headphone Jack", .headphoneInsert),
            ("Dock Headphone Jack", .headphoneInsert),
            ("Mic Jack", .microphoneInsert),
            ("Front Mic Jack", .microphoneInsert),
            ("Rear Mic Jack", .microphoneInsert),
            ("Headset Mic Jack", .microphoneInsert),
            ("Headphone Mic Jack", .microphoneInsert),
            ("Headset Jack", [.headphoneInsert, .microphoneInsert]),
            ("Line Out Jack", .lineoutInsert),
            ("Front Line Out Jack", .lineoutInsert),
            ("Line Jack", .lineinInsert),
            ("Line In Jack", .lineinInsert),
            ("HDMI/DP,pcm=3 Jack", .videooutInsert),
            ("HDMI/DP,pcm=10 Jack", .videooutInsert),
            ("HDMI Jack", .videooutInsert),
            ("DP Jack", .videooutInsert),
            // Phantom jacks are always on: a fixed pin, never a port of their own.
            ("Speaker Phantom Jack", nil),
            ("Internal Mic Phantom Jack", nil),
            ("Headphone Phantom Jack", nil),
            // Not jacks, or kinds without a port.
            ("Headphone Playback Switch", nil),
            ("Jack", nil),
            ("SPDIF Jack", nil),
            ("Speaker Jack", nil),
        ]
        for (name, expected) in cases {
            #expect(ControlJacks.switches(forName: name) == expected, "\(name)")
        }
    }

    @Test func onlyReadOnlyBooleanCardControlsAreJacks() {
        func info(_ name: String, type: ALSAControlElementInfo.ElementType = .boolean, interface: ALSAControlElementID.Interface = .card,
                  access: ALSAControlElementInfo.Access = .read) -> ALSAControlElementInfo {
            ALSAControlElementInfo(id: ALSAControlElementID(numid: 1, interface: interface, name: name), type: type, access: access, count: 1)
        }
        #expect(ControlJacks.isJack(info("Headphone Jack")))
        #expect(!ControlJacks.isJack(info("Headphone Jack", access: [.read, .write])), "a driver's writable control is a switch, not a jack")
        #expect(ControlJacks.isJack(info("Headphone Jack", access: [.read, .write, .user])), "a user-space element drives a jack on the bench")
        #expect(!ControlJacks.isJack(info("Headphone Jack", interface: .mixer)))
        #expect(!ControlJacks.isJack(info("Headphone Jack", type: .init(rawValue: 2))))
        #expect(!ControlJacks.isJack(info("Speaker Phantom Jack")))
        #expect(ControlJacks.displayName(ALSAControlElementID(numid: 3, name: "Headphone Jack", index: 1)) == "Headphone Jack,1")
        #expect(ControlJacks.state([false, true], supported: .headphoneInsert) == .headphoneInsert)
        #expect(ControlJacks.state([false], supported: .headphoneInsert) == [])
    }

    @Test func evdevAndControlForOneJackGiveOnePort() {
        let card = Cards.hdaLaptop()
        var evdev = Cards.jack(card, "HDA Intel PCH Headphone", event: 12, supported: .headphoneInsert, state: .headphoneInsert)
        evdev.properties["AUDIOROUTE_NAME"] = "Desk headphones"
        let control = Self.control(card, "Headphone Jack", numid: 20, state: .headphoneInsert)
        let both = CardClassifier.classify(card, jacks: [control, evdev]).ports
        #expect(both.filter { $0.type == .headphones }.count == 1)
        #expect(both.first { $0.type == .headphones }?.name == "Desk headphones", "evdev's udev properties name the port")
        #expect(summary(CardClassifier.classify(card, jacks: [control]).ports) == summary(CardClassifier.classify(card, jacks: [evdev]).ports))
        // The evdev device not readable (no udev rule): the control alone says plugged.
        let unreadable = JackRecord(
            syspath: evdev.syspath, cardSyspath: card.syspath, name: evdev.name, supported: .headphoneInsert, state: [], stateKnown: false)
        #expect(CardClassifier.classify(card, jacks: [unreadable, control]).ports.contains { $0.type == .headphones })
        // The control readable and off: the port is known, and unavailable.
        let unplugged = Self.control(card, "Headphone Jack", numid: 20, state: [])
        let empty = CardClassifier.classify(card, jacks: [unreadable, unplugged])
        #expect(empty.ports.filter { $0.type == .headphones }.map(\.availability) == [.unavailable])
        #expect(!empty.usablePorts.contains { $0.type == .headphones })
        // Neither source readable: no port at all (nothing is known of the jack).
        #expect(!CardClassifier.classify(card, jacks: [unreadable]).ports.contains { $0.type == .headphones })
        // A headset's mic from its own control, beside the evdev headphone.
        let mic = Self.control(card, "Headset Mic Jack", numid: 21, state: .microphoneInsert)
        let ports = CardClassifier.classify(card, jacks: [evdev, mic]).ports.filter { !$0.type.isBuiltIn }
        #expect(ports.map(\.type) == [.headphones, .headsetMic])
        #expect(Set(ports.map(\.device)) == ["pci-0000:00:1b.0/jack"])
    }

    @Test func phantomJacksNeverMakeAHeadphonePort() {
        let card = Cards.hdaLaptop()
        // What the loop would make of it, were it not filtered: still never a port.
        #expect(ControlJacks.switches(forName: "Speaker Phantom Jack") == nil)
        let speaker = Self.control(card, "Speaker Phantom Jack", numid: 5, state: [])
        #expect(CardClassifier.classify(card, jacks: [speaker]).ports.map(\.type) == [.builtInSpeaker, .builtInMic])
    }

    @Test func hdmiControlsGiveThePCMsPortAndMergeWithEvdev() {
        var card = Cards.hdaLaptop()
        card.pcms = [PCMDevice(device: 0, playback: true), PCMDevice(device: 0, playback: false), PCMDevice(device: 3, playback: true), PCMDevice(device: 7, playback: true)].sorted()
        let on = Self.control(card, "HDMI/DP,pcm=3 Jack", numid: 30, state: .videooutInsert)
        let off = Self.control(card, "HDMI/DP,pcm=7 Jack", numid: 31, state: [])
        #expect(on.hdmiPCM == 3 && off.hdmiPCM == 7)
        let result = CardClassifier.classify(card, jacks: [on, off])
        #expect(result.usablePorts.filter { $0.type == .HDMI }.map(\.uid) == ["pci-0000:00:1b.0/hdmi-3"])
        #expect(result.availability["pci-0000:00:1b.0/hdmi-7"] == .unavailable)
        #expect(result.ports.first { $0.uid == "pci-0000:00:1b.0/hdmi-7" }?.availability == .unavailable)
        #expect(result.availability["pci-0000:00:1b.0/hdmi-3"] == .connected)
        #expect(result.ports.first { $0.type == .HDMI }?.priority == PortType.HDMI.defaultPriority)
        // evdev's device for PCM 3 unreadable: the control decides, at the HDMI priority.
        let evdev3 = JackRecord(
            syspath: card.syspath + "/input16/event16", cardSyspath: card.syspath, name: "HDA Intel PCH HDMI/DP,pcm=3",
            supported: [.lineoutInsert, .videooutInsert], state: [], stateKnown: false)
        let merged = CardClassifier.classify(card, jacks: [evdev3, on, off])
        #expect(merged.usablePorts.filter { $0.type == .HDMI }.map(\.uid) == ["pci-0000:00:1b.0/hdmi-3"])
        #expect(merged.ports.filter { $0.type == .HDMI }.map(\.uid) == ["pci-0000:00:1b.0/hdmi-3", "pci-0000:00:1b.0/hdmi-7"])
        #expect(merged.availability["pci-0000:00:1b.0/hdmi-3"] == .connected)
        // Both readable and on: one port.
        let evdev3On = JackRecord(
            syspath: evdev3.syspath, cardSyspath: card.syspath, name: evdev3.name, supported: evdev3.supported, state: .lineoutInsert)
        let bothOn = CardClassifier.classify(card, jacks: [evdev3On, on, off])
        #expect(bothOn.usablePorts.filter { $0.type == .HDMI }.map(\.uid) == ["pci-0000:00:1b.0/hdmi-3"])
        #expect(bothOn.ports.filter { $0.type == .HDMI }.count == 2)
        // evdev readable and off, the control on (never seen: both read one pin): on wins.
        let evdev3Off = JackRecord(syspath: evdev3.syspath, cardSyspath: card.syspath, name: evdev3.name, supported: evdev3.supported, state: [])
        #expect(CardClassifier.classify(card, jacks: [evdev3Off, on, off]).availability["pci-0000:00:1b.0/hdmi-3"] == .connected)
        // Without controls, the unreadable evdev jack leaves PCM 3 unknown (offered at -1).
        let unknown = CardClassifier.classify(card, jacks: [evdev3])
        #expect(unknown.availability["pci-0000:00:1b.0/hdmi-3"] == .unknown)
    }

    @Test func portStateFollowsEitherSourceAsOneJack() {
        let card = Cards.hdaLaptop()
        var state = UdevPortState()
        _ = state.apply(.card(card))
        let evdev = Cards.jack(card, "HDA Intel PCH Headphone", event: 12, supported: .headphoneInsert, state: [])
        let control = Self.control(card, "Headphone Jack", numid: 20, state: [])
        // The first readable jack, off, announces the port as unavailable; the second adds nothing.
        let listed = state.apply(.jack(evdev))
        #expect(listed.count == 1)
        guard case .added(let added)? = listed.first else { Issue.record("not an arrival: \(listed)"); return }
        #expect(added.map { "\($0.uid) \($0.availability.rawValue)" } == ["pci-0000:00:1b.0/headphones unavailable"])
        #expect(state.apply(.jack(control)).isEmpty)
        // The control reports the plug first: the port turns available once.
        let plugged = state.apply(.jackState(syspath: control.syspath, state: .headphoneInsert))
        #expect(plugged.count == 1)
        guard case .updated(let port)? = plugged.first else { Issue.record("not an update: \(plugged)"); return }
        #expect(port.availability == .available)
        #expect(state.apply(.jackState(syspath: evdev.syspath, state: .headphoneInsert)).isEmpty)
        #expect(state.ports.filter { $0.type == .headphones }.count == 1)
        #expect(state.usablePorts.filter { $0.type == .headphones }.count == 1)
        // Both must say unplugged before it turns unavailable (both read the same pin, so they agree).
        #expect(state.apply(.jackState(syspath: evdev.syspath, state: [])).isEmpty)
        let unplugged = state.apply(.jackState(syspath: control.syspath, state: []))
        #expect(unplugged.count == 1)
        guard case .updated(let gone)? = unplugged.first else { Issue.record("not an update: \(unplugged)"); return }
        #expect(gone.availability == .unavailable)
        #expect(!state.usablePorts.contains { $0.type == .headphones })
        #expect(state.ports.filter { $0.type == .headphones }.map(\.availability) == [.unavailable])
        // The control device closing takes its jacks away, not the evdev one.
        _ = state.apply(.jackState(syspath: evdev.syspath, state: .headphoneInsert))
        _ = state.apply(.jackRemoved(syspath: control.syspath))
        #expect(state.usablePorts.contains { $0.type == .headphones })
    }
}
