import AudioRouteCore
import Testing

/// A card's profile follows the route (docs/decisions.md, "Card profiles"): the chooser's rules
/// and the follower that asks once. The profiles are shaped as `pactl list cards` prints an Intel
/// HDA card with an analog codec and HDMI outputs under PipeWire 0.3 (ACP's names and priorities).
@Suite struct CardProfilesTests {
    static func profile(_ index: Int, _ name: String, _ priority: Int, sinks: Int, sources: Int, _ available: PipeWireProfile.Availability = .yes) -> PipeWireProfile {
        PipeWireProfile(index: index, name: name, description: name, priority: priority, available: available, sinks: sinks, sources: sources)
    }

    static let hdaProfiles = [
        profile(0, "off", 0, sinks: 0, sources: 0),
        profile(1, "output:analog-stereo+input:analog-stereo", 6565, sinks: 1, sources: 1),
        profile(2, "output:analog-stereo", 6500, sinks: 1, sources: 0),
        profile(3, "output:hdmi-stereo+input:analog-stereo", 5965, sinks: 1, sources: 1),
        profile(4, "output:hdmi-stereo", 5900, sinks: 1, sources: 0),
        profile(5, "output:hdmi-stereo-extra1+input:analog-stereo", 5765, sinks: 1, sources: 1, .no),
        profile(6, "output:hdmi-stereo-extra1", 5700, sinks: 1, sources: 0, .no),
        profile(7, "input:analog-stereo", 65, sinks: 0, sources: 1),
        profile(8, "pro-audio", 1, sinks: 4, sources: 1),
    ]

    static func card(active: Int?, profiles: [PipeWireProfile] = hdaProfiles) -> PipeWireDevice {
        PipeWireDevice(id: 40, properties: ["device.name": "alsa_card.pci-0000_00_1b.0", "api.alsa.card": "0"], profiles: profiles, active: active)
    }

    static let speaker = Port(uid: "pci-0000:00:1b.0/speaker", type: .builtInSpeaker, device: "pci-0000:00:1b.0", alsa: "dmix:CARD=Intel,DEV=0")
    static let mic = Port(uid: "pci-0000:00:1b.0/mic", type: .builtInMic, device: "pci-0000:00:1b.0", alsa: "dsnoop:CARD=Intel,DEV=0")
    static let hdmi = Port(uid: "pci-0000:00:1b.0/hdmi3", type: .HDMI, device: "pci-0000:00:1b.0", alsa: "hdmi:CARD=Intel,DEV=0")
    static let usb = Port(uid: "usb-Headset/output", type: .usbAudio, device: "usb-Headset", direction: .output, alsa: "dmix:CARD=Headset,DEV=0")
    static let cards = ["Intel": 0, "Headset": 1]

    func choose(_ device: PipeWireDevice, outputs: [Port] = [], inputs: [Port] = [], nodesPresent: Bool = false) -> CardProfileChoice {
        CardProfiles.choose(for: device, route: RoutePorts(outputs: outputs, inputs: inputs), cards: Self.cards, nodesPresent: nodesPresent)
    }

    @Test func aCardSetOffGetsTheHighestPriorityProfileWithAnOutput() {
        let choice = choose(Self.card(active: 0), outputs: [Self.speaker])
        #expect(choice.rule == .bestProfile && choice.profile?.name == "output:analog-stereo+input:analog-stereo", "\(choice)")
    }

    @Test func aRouteThatRecordsGetsAProfileWithAnInput() {
        // Output only, the route now records from the card's mic.
        let choice = choose(Self.card(active: 2), outputs: [Self.speaker], inputs: [Self.mic])
        #expect(choice.rule == .bestProfile && choice.profile?.index == 1, "\(choice)")
        // The mic alone: the duplex profile still ranks first among those with a source.
        #expect(choose(Self.card(active: 2), inputs: [Self.mic]).profile?.index == 1)
    }

    @Test func anHDMIPortGetsAnHDMIProfileAndAnAnalogPortAnAnalogOne() {
        let hdmi = choose(Self.card(active: 1), outputs: [Self.hdmi])
        #expect(hdmi.rule == .bestProfile && hdmi.profile?.name == "output:hdmi-stereo+input:analog-stereo", "\(hdmi)")
        let hdmiRecording = choose(Self.card(active: 4), outputs: [Self.hdmi], inputs: [Self.mic])
        #expect(hdmiRecording.profile?.index == 3, "\(hdmiRecording)")
        let analog = choose(Self.card(active: 4), outputs: [Self.speaker])
        #expect(analog.profile?.index == 1, "\(analog)")
    }

    @Test func theActiveProfileIsKeptWhenItServes() {
        let choice = choose(Self.card(active: 2), outputs: [Self.speaker])
        #expect(choice.profile == nil && choice.rule == .activeServes, "\(choice)")
        #expect(choose(Self.card(active: 3), outputs: [Self.hdmi], inputs: [Self.mic]).rule == .activeServes)
    }

    @Test func nodesThereForTheRouteKeepAnyProfile() {
        // The user's pro-audio profile, whose nodes the mapping found: left alone.
        let choice = choose(Self.card(active: 8), outputs: [Self.speaker], nodesPresent: true)
        #expect(choice.profile == nil && choice.rule == .nodesPresent, "\(choice)")
    }

    @Test func anUnavailableHDMIProfileIsNotSetAndNoAnalogOneStandsForIt() {
        let unplugged = Self.hdaProfiles.map { p in p.name.hasPrefix("output:hdmi") ? Self.profile(p.index, p.name, p.priority, sinks: p.sinks, sources: p.sources, .no) : p }
        let choice = choose(Self.card(active: 1, profiles: unplugged), outputs: [Self.hdmi])
        #expect(choice.profile == nil && choice.rule == .noProfileServes, "\(choice)")
    }

    @Test func aUCMCardsProfileIsLeftAlone() {
        let ucm = [Self.profile(0, "off", 0, sinks: 0, sources: 0), Self.profile(1, "HiFi", 8000, sinks: 2, sources: 1), Self.profile(2, "pro-audio", 1, sinks: 2, sources: 1)]
        let choice = choose(Self.card(active: 0, profiles: ucm), outputs: [Self.speaker])
        #expect(choice.profile == nil && choice.rule == .notACP, "\(choice)")
    }

    @Test func aCardTheRouteDoesNotUseIsLeftAlone() {
        let choice = choose(Self.card(active: 0), outputs: [Self.usb])
        #expect(choice.profile == nil && choice.rule == .cardNotInRoute, "\(choice)")
        #expect(CardProfiles.needs(of: RoutePorts(outputs: [Self.usb, Self.hdmi], inputs: [Self.mic]), card: 0, cards: Self.cards).description
            == "an hdmi output and an input")
    }

    @Test func aUSBCardWithoutAnalogPartsGetsAnyProfileWithASink() {
        let usb = [Self.profile(0, "off", 0, sinks: 0, sources: 0), Self.profile(1, "output:iec958-stereo", 5500, sinks: 1, sources: 0)]
        let device = PipeWireDevice(id: 41, properties: ["api.alsa.card": "1"], profiles: usb, active: 0)
        let choice = CardProfiles.choose(for: device, route: RoutePorts(outputs: [Self.usb]), cards: Self.cards, nodesPresent: false)
        #expect(choice.profile?.index == 1, "\(choice)")
    }

    /// Whatever the profiles and the route: never off or pro-audio, never an unavailable one,
    /// always one that serves; nothing when the active one serves. Seeded, so a failure repeats.
    @Test func propertiesOfEveryChoice() {
        var generator = SplitMix64(seed: 0x5EED)
        let names = ["off", "pro-audio", "output:analog-stereo", "output:analog-stereo+input:analog-stereo", "output:hdmi-stereo",
                     "output:hdmi-stereo-extra1+input:analog-stereo", "input:analog-stereo", "output:iec958-stereo", "output:analog-surround-51"]
        let availabilities: [PipeWireProfile.Availability] = [.yes, .no, .unknown]
        let ports = [Self.speaker, Self.hdmi, Self.usb]
        for _ in 0..<2000 {
            let count = Int(generator.next() % 8) + 1
            let profiles = (0..<count).map { index in
                let name = names[Int(generator.next() % UInt64(names.count))]
                let outputs = name.split(separator: "+").filter { $0.hasPrefix("output:") }.count + (name == "pro-audio" ? 2 : 0)
                let inputs = name.split(separator: "+").filter { $0.hasPrefix("input:") }.count + (name == "pro-audio" ? 1 : 0)
                return Self.profile(index, name, Int(generator.next() % 7000), sinks: outputs, sources: inputs, availabilities[Int(generator.next() % 3)])
            }
            let active = generator.next() % 4 == 0 ? nil : Int(generator.next() % UInt64(count))
            let device = Self.card(active: active, profiles: profiles)
            let outputs = ports.filter { _ in generator.next() % 2 == 0 }
            let inputs = generator.next() % 2 == 0 ? [Self.mic] : []
            let choice = choose(device, outputs: outputs, inputs: inputs)
            let needs = CardProfiles.needs(of: RoutePorts(outputs: outputs, inputs: inputs), card: 0, cards: Self.cards)
            if let chosen = choice.profile {
                #expect(!chosen.isNeverChosen && chosen.available != .no, "\(choice)")
                #expect(CardProfiles.serves(chosen, needs, strictKinds: false), "\(choice) for \(needs)")
                #expect(chosen.index != active, "\(choice): the active one chosen again")
                let better = profiles.filter { $0.priority > chosen.priority && !$0.isNeverChosen && $0.available != .no && CardProfiles.serves($0, needs) }
                #expect(better.isEmpty || !CardProfiles.serves(chosen, needs), "\(choice): \(better.map(\.summary)) rank higher")
            }
            if let activeProfile = device.activeProfile, !activeProfile.isNeverChosen, activeProfile.available != .no, CardProfiles.serves(activeProfile, needs) {
                #expect(choice.profile == nil, "\(choice): the active \(activeProfile.summary) serves \(needs)")
            }
            if needs.isEmpty { #expect(choice.rule == .cardNotInRoute) }
        }
    }

    // MARK: The follower

    @Test func aProfileIsAskedOnceUntilTheServerAnswers() {
        var follower = CardProfileFollower()
        let off = Self.card(active: 0), set = Self.card(active: 1)
        follower.deviceChanged(off)
        let choice = choose(off, outputs: [Self.speaker])
        do { let result = follower.ask(choice, device: off); #expect(result == .ask) }
        do { let result = follower.ask(choice, device: off); #expect(result == .wait, "asked again before the server's answer") }
        // The same device reported again, its profile unchanged (a node's availability), or with
        // none (the server between two): still waiting.
        follower.deviceChanged(off)
        follower.deviceChanged(Self.card(active: nil))
        do { let result = follower.ask(choice, device: off); #expect(result == .wait) }
        follower.deviceChanged(set)
        do { let result = follower.ask(choose(set, outputs: [Self.speaker]), device: set); #expect(result == .wait) }
    }

    @Test func theServerSettingItBackTwiceStopsTheAsking() {
        var follower = CardProfileFollower()
        let off = Self.card(active: 0), set = Self.card(active: 1)
        follower.deviceChanged(off)
        let choice = choose(off, outputs: [Self.speaker])
        do { let result = follower.ask(choice, device: off); #expect(result == .ask) }
        follower.deviceChanged(set)
        follower.deviceChanged(off)
        do { let result = follower.ask(choice, device: off); #expect(result == .ask, "set back once: asked again") }
        follower.deviceChanged(set)
        follower.deviceChanged(off)
        do { let result = follower.ask(choice, device: off); #expect(result == .gaveUp(setBacks: 2)) }
        #expect(follower.gaveUp(on: 40))
        follower.deviceChanged(set)
        follower.deviceChanged(off)
        do { let result = follower.ask(choice, device: off); #expect(result == .wait, "said once") }
        // Another profile (the route changed) is asked; a device gone and back starts afresh.
        let hdmi = choose(off, outputs: [Self.hdmi])
        do { let result = follower.ask(hdmi, device: off); #expect(result == .ask) }
        follower.deviceRemoved(40)
        do { let result = follower.ask(choice, device: off); #expect(result == .ask) }
    }

    /// The user (or the server) moves the card to another profile that serves: no set-back. A
    /// later need of the profile (the route now records) is asked as a first time.
    @Test func aMoveToAnotherProfileThatServesIsNoSetBack() {
        var follower = CardProfileFollower()
        let off = Self.card(active: 0), duplex = Self.card(active: 1), output = Self.card(active: 2)
        follower.deviceChanged(off)
        let choice = choose(off, outputs: [Self.speaker])
        do { let result = follower.ask(choice, device: off); #expect(result == .ask) }
        follower.deviceChanged(duplex)
        follower.deviceChanged(off)
        do { let result = follower.ask(choice, device: off); #expect(result == .ask, "one set-back") }
        follower.deviceChanged(duplex)
        follower.deviceChanged(output)
        let kept = choose(output, outputs: [Self.speaker])
        #expect(kept.profile == nil)
        follower.settled(output)
        let recording = choose(output, outputs: [Self.speaker], inputs: [Self.mic])
        do { let result = follower.ask(recording, device: output); #expect(result == .ask) }
        follower.deviceChanged(duplex)
        follower.deviceChanged(output)
        do { let result = follower.ask(recording, device: output); #expect(result == .ask, "a first set-back since") }
        // The profile asked, reached, is not forgotten when the chooser keeps it.
        follower.deviceChanged(duplex)
        follower.settled(duplex)
        follower.deviceChanged(output)
        do { let result = follower.ask(recording, device: output); #expect(result == .gaveUp(setBacks: 2)) }
    }

    @Test func refusedRequestsStopTheAskingToo() {
        var follower = CardProfileFollower()
        let off = Self.card(active: 0)
        let choice = choose(off, outputs: [Self.speaker])
        do { let result = follower.ask(choice, device: off); #expect(result == .ask) }
        follower.requestFailed(device: 40)
        do { let result = follower.ask(choice, device: off); #expect(result == .ask) }
        follower.requestFailed(device: 40)
        do { let result = follower.ask(choice, device: off); #expect(result == .gaveUp(setBacks: 2)) }
        do { let result = follower.ask(choice, device: off); #expect(result == .wait) }
    }

    // MARK: Bluetooth devices

    /// A headset's bluez5 device as PipeWire 0.3 lists it (`pactl list cards`, `pw-cli enum-params
    /// <id> EnumProfile`): off, A2DP sink profiles per codec, hands-free unit profiles per codec,
    /// the A2DP ones ranked first.
    static let headsetProfiles = [
        profile(0, "off", 0, sinks: 0, sources: 0),
        profile(1, "a2dp-sink", 16, sinks: 1, sources: 0),
        profile(2, "headset-head-unit", 1, sinks: 1, sources: 1),
        profile(3, "a2dp-sink-sbc", 15, sinks: 1, sources: 0),
        profile(4, "headset-head-unit-cvsd", 0, sinks: 1, sources: 1),
    ]

    static let headsetAddress = "00:AA:01:00:00:23"

    static func headset(active: Int?, profiles: [PipeWireProfile] = headsetProfiles, address: String = headsetAddress) -> PipeWireDevice {
        PipeWireDevice(id: 57, properties: ["device.api": "bluez5", "device.name": "bluez_card.00_AA_01_00_00_23", "api.bluez5.address": address], profiles: profiles, active: active)
    }

    static func bluetooth(_ profile: BlueALSAPCM.Profile, address: String = headsetAddress) -> Port {
        let a2dp = profile == .a2dp
        return Port(
            uid: "bt:\(address):\(a2dp ? "a2dp" : "hfp")", type: a2dp ? .bluetoothA2DP : .bluetoothHFP, device: "bt:\(address)",
            direction: a2dp ? .output : .duplex, alsa: .bluealsa(BlueALSAPCM(address: address, profile: profile)))
    }

    @Test func aCallOnTheHeadsetGetsTheHandsFreeProfileAndMusicGetsA2DPBack() {
        let hfp = Self.bluetooth(.sco), a2dp = Self.bluetooth(.a2dp)
        let call = choose(Self.headset(active: 1), outputs: [hfp], inputs: [hfp])
        #expect(call.rule == .bestProfile && call.profile?.name == "headset-head-unit", "\(call)")
        // After the call the route is A2DP's again, and the device still on the hands-free profile.
        let music = choose(Self.headset(active: 2), outputs: [a2dp])
        #expect(music.rule == .bestProfile && music.profile?.name == "a2dp-sink", "\(music)")
        // The headset for output, the built-in mic recording: A2DP still serves.
        #expect(choose(Self.headset(active: 2), outputs: [a2dp], inputs: [Self.mic]).profile?.index == 1)
    }

    @Test func aHeadsetOnAProfileOfTheFamilyKeepsIt() {
        // The user's SBC choice (or WirePlumber's) serves an A2DP route: kept.
        let choice = choose(Self.headset(active: 3), outputs: [Self.bluetooth(.a2dp)])
        #expect(choice.profile == nil && choice.rule == .activeServes, "\(choice)")
        let call = choose(Self.headset(active: 4), outputs: [Self.bluetooth(.sco)], inputs: [Self.bluetooth(.sco)])
        #expect(call.profile == nil && call.rule == .activeServes, "\(call)")
        // Its node there already: left alone whatever the profile.
        #expect(choose(Self.headset(active: 2), outputs: [Self.bluetooth(.a2dp)], nodesPresent: true).rule == .nodesPresent)
    }

    @Test func aHeadsetOutsideTheRouteIsLeftAloneWhateverItsAddressSpelling() {
        let elsewhere = choose(Self.headset(active: 2), outputs: [Self.speaker], inputs: [Self.mic])
        #expect(elsewhere.profile == nil && elsewhere.rule == .cardNotInRoute, "\(elsewhere)")
        let other = choose(Self.headset(active: 2), outputs: [Self.bluetooth(.a2dp, address: "00:AA:01:00:00:24")])
        #expect(other.rule == .cardNotInRoute, "\(other)")
        // BlueZ writes addresses upper-case; a lower-case one from the server is the same device.
        let lower = choose(Self.headset(active: 2, address: Self.headsetAddress.lowercased()), outputs: [Self.bluetooth(.a2dp)])
        #expect(lower.profile?.name == "a2dp-sink", "\(lower)")
    }

    @Test func theComputersOwnRolesAndUnavailableProfilesAreNeverChosen() {
        // A phone's profiles: the computer as the A2DP sink and the audio gateway. A route to the
        // phone's A2DP port finds no profile that makes it a sink.
        let phone = [Self.profile(0, "off", 0, sinks: 0, sources: 0), Self.profile(1, "a2dp-source", 16, sinks: 0, sources: 1), Self.profile(2, "audio-gateway", 1, sinks: 1, sources: 1)]
        let choice = choose(Self.headset(active: 1, profiles: phone), outputs: [Self.bluetooth(.a2dp)])
        #expect(choice.profile == nil && choice.rule == .noProfileServes, "\(choice)")
        // The hands-free profiles unavailable (no RFCOMM link yet): nothing is set for a call.
        let noHFP = Self.headsetProfiles.map { $0.name.hasPrefix("headset") ? Self.profile($0.index, $0.name, $0.priority, sinks: 1, sources: 1, .no) : $0 }
        let call = choose(Self.headset(active: 1, profiles: noHFP), outputs: [Self.bluetooth(.sco)], inputs: [Self.bluetooth(.sco)])
        #expect(call.profile == nil && call.rule == .noProfileServes, "\(call)")
    }
}
