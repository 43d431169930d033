import AudioRouteCore
import AudioRouteSystem
import Testing

@testable import AudioRouteWatchers

/// The built-in mic's card's `Capture Switch` (the capture mute that PipeWire's and PulseAudio's
/// mic mute turn off, and HDA's mic-mute LED follows) reaches the tower as `inputMuted` of the
/// mic port's device, and the tower raises `builtInMicMuted` from it.
@Suite struct CaptureSwitchTests {
    @Test func onlyTheMixersCaptureSwitchCounts() {
        func info(_ name: String, interface: ALSAControlElementID.Interface = .mixer, index: UInt32 = 0,
                  type: ALSAControlElementInfo.ElementType = .boolean) -> ALSAControlElementInfo {
            ALSAControlElementInfo(id: ALSAControlElementID(numid: 1, interface: interface, name: name, index: index), type: type, access: [.read, .write], count: 2)
        }
        #expect(ControlJacks.isCaptureSwitch(info("Capture Switch")))
        #expect(!ControlJacks.isCaptureSwitch(info("Capture Switch", index: 1)), "a second ADC's")
        #expect(!ControlJacks.isCaptureSwitch(info("Capture Switch", interface: .card)))
        #expect(!ControlJacks.isCaptureSwitch(info("Capture Volume", type: .init(rawValue: 2))))
        #expect(!ControlJacks.isCaptureSwitch(info("Mic Mute-LED Mode", type: .init(rawValue: 3))), "what the LED follows, not a mute")
        #expect(!ControlJacks.isCaptureSwitch(info("Headphone Playback Switch")))
    }

    @Test func theCaptureSwitchOfTheBuiltInMicsCardMutesItsDevice() throws {
        var h = Harness(logger: LogCapture().logger)
        _ = try h.tower.openSession(Session(id: "rec"))
        _ = try h.tower.setCategory(.record, session: "rec")
        var card = Cards.hdaLaptop()
        card.captureSwitch = true
        try h.apply(.card(card))
        _ = try h.tower.setActive(true, session: "rec")
        let device = try #require(h.tower.ports.first { $0.type == .builtInMic }?.device)
        #expect(!h.events.contains { if case .inputMuted = $0 { true } else { false } })

        card.captureSwitch = false
        h.events = []
        try h.apply(.card(card))
        #expect(h.events == [.inputMuted(device: device, muted: true)])
        #expect(h.tower.builtInMicMuted)
        #expect(h.tower.session("rec")?.isActive == false)

        // The same record again says nothing; the switch back on unmutes.
        h.events = []
        try h.apply(.card(card))
        #expect(h.events == [])
        card.captureSwitch = true
        try h.apply(.card(card))
        #expect(h.events == [.inputMuted(device: device, muted: false)])
        #expect(!h.tower.builtInMicMuted)

        // A card that goes while muted unmutes what it had muted.
        card.captureSwitch = false
        try h.apply(.card(card))
        h.events = []
        try h.apply(.cardRemoved(syspath: card.syspath, action: "remove"))
        #expect(h.events.last == .inputMuted(device: device, muted: false))
    }

    /// A SOF card's DMIC (PCM 6 beside the HDA codec's PCM 0): the codec's `Capture Switch` is the
    /// ADC of PCM 0 (the headset mic), not the DMIC's.
    @Test func aBuiltInMicOnAnotherPCMThanTheFirstADCsIsNotMutedByIt() throws {
        var h = Harness(logger: LogCapture().logger)
        var card = Cards.hdaLaptop()
        card.pcms = card.pcms.map { pcm in
            var moved = pcm
            if !pcm.playback { moved.device = 6 }
            return moved
        }
        card.captureSwitch = false
        try h.apply(.card(card))
        let mic = try #require(h.tower.ports.first { $0.type == .builtInMic })
        #expect(mic.alsa?.cardPCM?.deviceNumber == 6, "\(mic)")
        #expect(!h.events.contains { if case .inputMuted = $0 { true } else { false } })
    }

    @Test func aCardWithoutABuiltInMicOrWithoutTheSwitchMutesNothing() throws {
        var h = Harness(logger: LogCapture().logger)
        var webcam = Cards.webcam()
        webcam.captureSwitch = false
        try h.apply(.card(webcam))
        var laptop = Cards.hdaLaptop()
        laptop.captureSwitch = nil
        try h.apply(.card(laptop))
        #expect(!h.events.contains { if case .inputMuted = $0 { true } else { false } })
        #expect(!h.tower.builtInMicMuted)
    }
}
