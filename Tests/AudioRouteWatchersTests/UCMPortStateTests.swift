import AudioRouteCore
import Testing

@testable import AudioRouteUCMHelper
@testable import AudioRouteWatchers

/// Cards whose ports come from the UCM helper (docs/ucm.md): every card is asked about;
/// nothing while the helper answers, its profile's ports once it does, udev's if it has no
/// profile or fails, and its jack ports as the card's jack controls (or the helper) say.
@Suite struct UCMPortStateTests {
    /// The PinePhone's record as udev-rules/70-audioroute.rules leaves it (AUDIOROUTE_RECEIVER=1):
    /// udev's ports when its profile cannot be read are a phone's.
    static let phone: CardRecord = {
        var card = Cards.pinePhone()
        card.properties["AUDIOROUTE_RECEIVER"] = "1"
        return card
    }()

    static func card(jacks: [String: Bool] = [:]) -> UCMCard {
        func port(_ device: String, _ type: PortType, _ direction: PortDirection, jack: String? = nil) -> UCMCardPort {
            UCMCardPort(
                port: Port(uid: "ucm:hw:PinePhone:\(device)", type: type, device: "ucm:hw:PinePhone", direction: direction, alsa: "hw:PinePhone,0"),
                devices: ["HiFi": [device]], jackControl: jack)
        }
        return UCMCard(
            card: "hw:PinePhone", verbs: ["HiFi"],
            ports: [
                port("Speaker", .builtInSpeaker, .output), port("Earpiece", .builtInReceiver, .output),
                port("Headphone", .headphones, .output, jack: "Headphone Jack"),
            ], jacks: jacks
        ).withPublicUIDs(base: "platform-sound")
    }

    static func state(helpers: Bool = true) -> UdevPortState {
        UdevPortState(logger: LogCapture().logger, usesUCMHelpers: helpers)
    }

    /// The ports a route may use.
    static func uids(_ state: UdevPortState) -> [String] { state.usablePorts.map(\.uid).sorted() }

    /// The ports listed as unavailable (a jack with nothing plugged).
    static func unavailable(_ state: UdevPortState) -> [String] { state.ports.filter { $0.availability == .unavailable }.map(\.uid).sorted() }

    @Test func nothingWhileTheHelperStartsThenItsPorts() {
        var state = Self.state()
        #expect(state.apply(.card(Self.phone)) == [])
        #expect(state.ucmCandidates == [Self.phone.syspath: UCMCardRequest(name: "hw:5", base: "platform-sound")])
        #expect(state.ucmPending == [Self.phone.syspath])
        let events = state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(jacks: ["Headphone Jack": false])))
        // One event: the route changes once.
        #expect(events.count == 1, "\(events)")
        #expect(Self.uids(state) == ["platform-sound/receiver", "platform-sound/speaker"])
        // The headphones' jack is read and out: listed, unavailable.
        #expect(Self.unavailable(state) == ["platform-sound/headphones"])
        #expect(state.ucmPending.isEmpty)
    }

    @Test func aFailedHelperGivesUdevsPortsUntilTheCardGoes() {
        var state = Self.state()
        _ = state.apply(.card(Self.phone))
        _ = state.apply(.ucm(syspath: Self.phone.syspath, card: nil))
        #expect(Self.uids(state) == ["platform-sound/mic", "platform-sound/receiver", "platform-sound/speaker"])
        #expect(state.ucmPending.isEmpty)
        // The card goes and comes back: its helper is awaited again.
        _ = state.apply(.cardRemoved(syspath: Self.phone.syspath, action: "remove"))
        _ = state.apply(.card(Self.phone))
        #expect(state.ucmPending == [Self.phone.syspath])
        #expect(Self.uids(state).isEmpty)
    }

    @Test func aHelperThatEndsAfterItsHelloGivesTheCardBackToUdev() {
        var state = Self.state()
        _ = state.apply(.card(Self.phone))
        _ = state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card()))
        _ = state.apply(.ucm(syspath: Self.phone.syspath, card: nil))
        #expect(Self.uids(state) == ["platform-sound/mic", "platform-sound/receiver", "platform-sound/speaker"])
    }

    @Test func withoutHelpersTheCardKeepsUdevsPorts() {
        var state = Self.state(helpers: false)
        _ = state.apply(.card(Self.phone))
        #expect(state.ucmPending.isEmpty)
        #expect(Self.uids(state) == ["platform-sound/mic", "platform-sound/receiver", "platform-sound/speaker"])
    }

    @Test func aLateAnswerForAGoneCardIsIgnored() {
        var state = Self.state()
        _ = state.apply(.card(Self.phone))
        _ = state.apply(.cardRemoved(syspath: Self.phone.syspath, action: "remove"))
        #expect(state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card())) == [])
        #expect(state.ports.isEmpty)
    }

    @Test func theHeadphonesFollowTheCardsJackControlFirstThenTheHelpers() {
        var state = Self.state()
        _ = state.apply(.card(Self.phone))
        // Unknown to both: offered.
        _ = state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card()))
        #expect(Self.uids(state).contains("platform-sound/headphones"))
        // The helper says out.
        _ = state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(jacks: ["Headphone Jack": false])))
        #expect(!Self.uids(state).contains("platform-sound/headphones"))
        // The card's own jack control, read by the event loop, says in: it wins.
        let jack = JackRecord(
            syspath: Self.phone.syspath + "/controlC5#Headphone Jack", cardSyspath: Self.phone.syspath, name: "Headphone Jack",
            supported: .headphoneInsert, state: .headphoneInsert, source: .control)
        _ = state.apply(.jack(jack))
        #expect(Self.uids(state).contains("platform-sound/headphones"))
        _ = state.apply(.jackState(syspath: jack.syspath, state: []))
        #expect(!Self.uids(state).contains("platform-sound/headphones"))
    }

    /// UCM names the card's PCM (`hw:PinePhone,0`); the ports share it as udev's do.
    @Test func theUCMPortsShareTheirPCM() throws {
        var state = Self.state()
        _ = state.apply(.card(Self.phone))
        _ = state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card()))
        #expect(state.ports.compactMap(\.alsa) == ["dmix:CARD=PinePhone,DEV=0", "dmix:CARD=PinePhone,DEV=0", "dmix:CARD=PinePhone,DEV=0"])
        #expect(UdevPortState.sharedPCM("hw:PinePhone,0", direction: .input, exclusive: false) == "dsnoop:CARD=PinePhone,DEV=0")
        #expect(UdevPortState.sharedPCM("hw:CARD=Intel,DEV=3", direction: .output, exclusive: false) == "dmix:CARD=Intel,DEV=3")
        #expect(UdevPortState.sharedPCM("hw:Intel,0", direction: .output, exclusive: true) == "plughw:CARD=Intel,DEV=0")
        #expect(UdevPortState.sharedPCM("hw:Intel", direction: .output, exclusive: false) == "dmix:CARD=Intel,DEV=0")
        for other in ["default", "hw:Intel,x", "hw:,0", "hw:Intel,0,1", "hw:Intel,-1", "_ucm0001.hw:Intel,0", "plughw:Intel,0"] {
            #expect(UdevPortState.sharedPCM(try ALSADevice(parsing: other), direction: .output, exclusive: false).description == other)
        }
    }

    /// Every card is asked about, not only phones: whether it has a profile is alsa-lib's to
    /// say. The properties that leave a card to udev's classification are honoured.
    @Test func everyCompleteCardIsACandidateUnlessItsPropertiesSayOtherwise() {
        var state = Self.state()
        for card in [Cards.usbHeadset(), Cards.hdaLaptop(), Cards.gpuHDMI(), Self.phone] { _ = state.apply(.card(card)) }
        // By card number, as PipeWire opens them (docs/ucm.md: alsa-lib crashes on one card under two names).
        #expect(state.ucmCandidates.mapValues(\.name) == [
            Cards.usbHeadset().syspath: "hw:2", Cards.hdaLaptop().syspath: "hw:0", Cards.gpuHDMI().syspath: "hw:1",
            Self.phone.syspath: "hw:5",
        ])
        #expect(state.ucmCandidates[Cards.usbHeadset().syspath]?.base == "pci-0000:00:14.0-usb-0:11.4:1.0")
        #expect(state.ports.isEmpty, "nothing while the helper answers")
        func excluded(_ properties: [String: String], _ change: (inout CardRecord) -> Void = { _ in }) -> Bool {
            var card = Cards.hdaLaptop()
            card.properties.merge(properties) { _, new in new }
            change(&card)
            return UdevPortState.ucmRequest(card) == nil
        }
        #expect(!excluded([:]))
        #expect(excluded(["AUDIOROUTE_UCM": "0"]))
        #expect(!excluded(["AUDIOROUTE_UCM": "1"]))
        #expect(excluded(["AUDIOROUTE_PORT_TYPE": "lineOut"]))
        #expect(excluded(["AUDIOROUTE_IGNORE": "1"]))
        #expect(excluded([:]) { $0.hasControl = false })
        #expect(excluded([:]) { $0.attributes["id"] = "not an id" })
        #expect(excluded([:]) { $0.parent.driver = "snd_aloop" })
        #expect(!excluded(["AUDIOROUTE_IGNORE": "0"]) { $0.parent.driver = "snd_aloop" })
    }

    /// A card without a profile (the helper answers nil) keeps udev's ports; one with a profile
    /// has only the profile's, and `--explain` says so, with each port's UCM device and PCM.
    @Test func aProfileReplacesUdevsPortsAndExplainsThem() {
        var state = Self.state()
        let laptop = Cards.hdaLaptop()
        _ = state.apply(.card(laptop))
        _ = state.apply(.card(Cards.usbHeadset()))
        _ = state.apply(.ucm(syspath: Cards.usbHeadset().syspath, card: nil))
        #expect(Self.uids(state) == ["pci-0000:00:14.0-usb-0:11.4:1.0/input", "pci-0000:00:14.0-usb-0:11.4:1.0/output"])
        let ucm = UCMCard(
            card: "hw:Intel", verbs: ["HiFi"],
            ports: [
                UCMCardPort(
                    port: Port(uid: "ucm:hw:Intel:Speaker:output", type: .builtInSpeaker, device: "ucm:hw:Intel", direction: .output, alsa: "hw:Intel,2"),
                    devices: ["HiFi": ["Speaker"]], profilePriority: 100),
                UCMCardPort(
                    port: Port(uid: "ucm:hw:Intel:HDMI1:output", type: .HDMI, device: "ucm:hw:Intel", direction: .output, alsa: "hw:Intel,5"),
                    devices: ["HiFi": ["HDMI1"]], jackControl: "HDMI/DP,pcm=5 Jack", profilePriority: 500),
            ], jacks: ["HDMI/DP,pcm=5 Jack": true], notes: ["HiFi/Bluetooth: no port type for this device"]
        ).withPublicUIDs(base: "pci-0000:00:1b.0")
        _ = state.apply(.ucm(syspath: laptop.syspath, card: ucm))
        let mine = state.ports.filter { $0.uid.hasPrefix("pci-0000:00:1b.0") }
        #expect(summary(mine) == [
            "pci-0000:00:1b.0/speaker builtInSpeaker output pci-0000:00:1b.0 dmix:CARD=Intel,DEV=2",
            "pci-0000:00:1b.0/hdmi-5 HDMI output pci-0000:00:1b.0/hdmi-5 dmix:CARD=Intel,DEV=5",
        ])
        let explanation = state.explanations().first { $0.card.syspath == laptop.syspath }!
        #expect(explanation.classification.availability == ["pci-0000:00:1b.0/speaker": .present, "pci-0000:00:1b.0/hdmi-5": .connected])
        let decisions = explanation.classification.decisions.map { "\($0.subject): \($0.outcome) <- \($0.signal)" }
        #expect(decisions == [
            "card: ports from its UCM profile (verbs HiFi) <- alsa-lib's UCM opened hw:Intel",
            "card: no port <- UCM: HiFi/Bluetooth: no port type for this device",
            "pci-0000:00:1b.0/speaker: builtInSpeaker output on dmix:CARD=Intel,DEV=2, availability present <- UCM device HiFi: Speaker, PCM hw:Intel,2, priority 100",
            "pci-0000:00:1b.0/hdmi-5: HDMI output on dmix:CARD=Intel,DEV=5, availability connected <- UCM device HiFi: HDMI1, PCM hw:Intel,5, priority 500; jack \"HDMI/DP,pcm=5 Jack\" on (read by the UCM helper)",
        ])
    }

    /// The admin's word on a card holds for its UCM ports as for udev's (docs/ports.md, "What
    /// decides a port"): exclusive PCMs for every port; a PCM, a priority, a name for the card's
    /// own ports, not its jack's, which take their jack device's; unusable values noted.
    @Test func theCardsPropertiesApplyToItsUCMPorts() {
        let card = Self.card(jacks: ["Headphone Jack": true])
        func classify(_ properties: [String: String], jacks: [JackRecord] = []) -> CardClassification {
            var record = Self.phone
            record.properties.merge(properties) { _, new in new }
            return UdevPortState.ucmClassification(card, record: record, jacks: jacks)
        }
        func summary(_ result: CardClassification) -> [String] { result.usablePorts.map { "\($0.type.rawValue) \($0.alsa ?? "-") \($0.priority) \($0.name)" } }
        let plain = classify([:])
        #expect(summary(plain) == [
            "builtInSpeaker dmix:CARD=PinePhone,DEV=0 0 Speaker", "builtInReceiver dmix:CARD=PinePhone,DEV=0 0 Receiver",
            "headphones dmix:CARD=PinePhone,DEV=0 100 Headphones",
        ])
        let exclusive = classify(["AUDIOROUTE_ALSA_EXCLUSIVE": "1"])
        #expect(exclusive.usablePorts.map(\.alsa) == Array(repeating: "plughw:CARD=PinePhone,DEV=0", count: 3))
        let admin = classify(["AUDIOROUTE_ALSA_PCM": "equalizer", "AUDIOROUTE_PRIORITY": "40", "AUDIOROUTE_NAME": "Phone"])
        #expect(summary(admin) == [
            "builtInSpeaker equalizer 40 Phone", "builtInReceiver equalizer 40 Phone", "headphones dmix:CARD=PinePhone,DEV=0 100 Headphones",
        ])
        // The headphones' jack device speaks for them.
        let jack = JackRecord(
            syspath: Self.phone.syspath + "/input5/event5", cardSyspath: Self.phone.syspath, name: "Headphone Jack",
            properties: ["AUDIOROUTE_NAME": "Earbuds", "AUDIOROUTE_PRIORITY": "70"], supported: [.headphoneInsert], state: [.headphoneInsert])
        #expect(summary(classify([:], jacks: [jack])).last == "headphones dmix:CARD=PinePhone,DEV=0 70 Earbuds")
        let garbage = classify(["AUDIOROUTE_PRIORITY": "loud", "AUDIOROUTE_NAME": "\u{7}", "AUDIOROUTE_ALSA_PCM": "\u{7}"])
        #expect(summary(garbage) == summary(plain))
        #expect(garbage.notes.map(\.key).sorted() == ["\(Self.phone.syspath)#bad-alsa", "\(Self.phone.syspath)#bad-priority"])
    }
}
