import AudioRouteCore
import Testing

@testable import AudioRouteWatchers

/// A phone card whose ports come from its UCM helper (docs/ucm.md): nothing while the
/// helper starts, its ports once it answers, udev's if it fails, and its jack ports as the
/// card's jack controls (or the helper) say.
@Suite struct UCMPortStateTests {
    static let phone = Cards.pinePhone()

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
            ], jacks: jacks)
    }

    static func state(helpers: Bool = true) -> UdevPortState {
        UdevPortState(logger: LogCapture().logger, earpiece: { $0.attributes["id"] == "PinePhone" }, usesUCMHelpers: helpers)
    }

    static func uids(_ state: UdevPortState) -> [String] { state.ports.map(\.uid).sorted() }

    @Test func nothingWhileTheHelperStartsThenItsPorts() {
        var state = Self.state()
        #expect(state.apply(.card(Self.phone)) == [])
        #expect(state.ucmCandidates == [Self.phone.syspath: "hw:PinePhone"])
        #expect(state.ucmPending == [Self.phone.syspath])
        let events = state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(jacks: ["Headphone Jack": false])))
        // One event: the route changes once.
        #expect(events.count == 1, "\(events)")
        #expect(Self.uids(state) == ["ucm:hw:PinePhone:Earpiece", "ucm:hw:PinePhone:Speaker"])
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
        #expect(Self.uids(state).contains("ucm:hw:PinePhone:Headphone"))
        // The helper says out.
        _ = state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card(jacks: ["Headphone Jack": false])))
        #expect(!Self.uids(state).contains("ucm:hw:PinePhone:Headphone"))
        // The card's own jack control, read by the event loop, says in: it wins.
        let jack = JackRecord(
            syspath: Self.phone.syspath + "/controlC5#Headphone Jack", cardSyspath: Self.phone.syspath, name: "Headphone Jack",
            supported: .headphoneInsert, state: .headphoneInsert, source: .control)
        _ = state.apply(.jack(jack))
        #expect(Self.uids(state).contains("ucm:hw:PinePhone:Headphone"))
        _ = state.apply(.jackState(syspath: jack.syspath, state: []))
        #expect(!Self.uids(state).contains("ucm:hw:PinePhone:Headphone"))
    }

    /// UCM names the card's PCM (`hw:PinePhone,0`); the ports share it as udev's do.
    @Test func theUCMPortsShareTheirPCM() {
        var state = Self.state()
        _ = state.apply(.card(Self.phone))
        _ = state.apply(.ucm(syspath: Self.phone.syspath, card: Self.card()))
        #expect(state.ports.compactMap(\.alsa) == ["dmix:CARD=PinePhone,DEV=0", "dmix:CARD=PinePhone,DEV=0", "dmix:CARD=PinePhone,DEV=0"])
        #expect(UdevPortState.sharedPCM("hw:PinePhone,0", direction: .input, exclusive: false) == "dsnoop:CARD=PinePhone,DEV=0")
        #expect(UdevPortState.sharedPCM("hw:CARD=Intel,DEV=3", direction: .output, exclusive: false) == "dmix:CARD=Intel,DEV=3")
        #expect(UdevPortState.sharedPCM("hw:Intel,0", direction: .output, exclusive: true) == "plughw:CARD=Intel,DEV=0")
        for other in ["default", "hw:Intel", "hw:Intel,x", "hw:,0", "hw:Intel,0,1", "_ucm0001.hw:Intel,0", "plughw:Intel,0"] {
            #expect(UdevPortState.sharedPCM(other, direction: .output, exclusive: false) == other)
        }
    }
}
