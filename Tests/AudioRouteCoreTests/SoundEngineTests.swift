// Which sound server plays the user's audio, from what the watcher saw: each rule, the words
// `status` and the log show, and the reservation names.
import AudioRouteCore
import Testing

@Suite struct SoundEngineTests {
    @Test func nothingAnsweringMeansALSADirectly() {
        for (pipewire, pulse) in [(SocketAnswer.absent, SocketAnswer.absent), (.refused, .refused), (.absent, .refused)] {
            let engine = SoundEngine.decide(SoundServerObservation(pipewire: pipewire, pulse: pulse, reservedCards: [0]))
            #expect(engine.server == nil && engine.rule == .noServer && !engine.pulseProtocol)
            // A reservation without a server answering is not a card held (a stale name).
            #expect(engine.heldCards.isEmpty)
            #expect(engine.summary == "no sound server: AudioRoute drives ALSA directly")
        }
    }

    @Test func pipewireWithItsPulseServer() {
        let engine = SoundEngine.decide(
            SoundServerObservation(pipewire: .live(program: "pipewire"), pulse: .live(program: "pipewire-pulse"), reservedCards: [1, 0]))
        #expect(engine.server == .pipewire && engine.pulseProtocol && engine.rule == .pipewireAnswers)
        #expect(engine.heldCards == [0, 1])
        #expect(engine.summary == "PipeWire with its PulseAudio server, holding cards 0, 1")
        #expect(engine.signal == "pipewire-0 answered (pipewire); pulse/native answered (pipewire-pulse); reserved: Audio0, Audio1")
    }

    @Test func pipewireAloneAndAKilledPulseSocket() {
        let engine = SoundEngine.decide(SoundServerObservation(pipewire: .live(program: nil), pulse: .refused))
        #expect(engine.server == .pipewire && !engine.pulseProtocol)
        #expect(engine.summary == "PipeWire without a PulseAudio server, holding no card")
        #expect(engine.signal == "pipewire-0 answered; pulse/native refused the connection; no card reserved")
    }

    @Test func pulseaudioWinsOverAPipewireBesideIt() {
        // PipeWire for screen sharing, PulseAudio for sound: the pulse socket's program decides.
        let engine = SoundEngine.decide(
            SoundServerObservation(pipewire: .live(program: "pipewire"), pulse: .live(program: "pulseaudio"), reservedCards: [0]))
        #expect(engine.server == .pulseaudio && engine.rule == .pulseaudioServesPulse)
        #expect(engine.summary == "PulseAudio, holding card 0")
    }

    @Test func aPulseSocketAloneIsPulseAudio() {
        // systemd's activation socket, or a peer whose name could not be read.
        for program in [nil, "systemd"] as [String?] {
            let engine = SoundEngine.decide(SoundServerObservation(pipewire: .absent, pulse: .live(program: program), busSeen: false))
            #expect(engine.server == .pulseaudio && engine.rule == .pulseAnswers)
            #expect(engine.signal.hasSuffix("no session bus, reservations unknown"))
        }
    }

    @Test func reservationNames() {
        #expect(SoundEngine.reservedCard(busName: "org.freedesktop.ReserveDevice1.Audio0") == 0)
        #expect(SoundEngine.reservedCard(busName: "org.freedesktop.ReserveDevice1.Audio12") == 12)
        for name in [
            "org.freedesktop.ReserveDevice1.Audio", "org.freedesktop.ReserveDevice1.AudioX", "org.freedesktop.ReserveDevice1.Video0",
            "org.freedesktop.ReserveDevice1.Audio-1", "org.freedesktop.ReserveDevice1.Audio99999", "org.freedesktop.ReserveDevice1.Audio٣",
            ":1.4", "",
        ] {
            #expect(SoundEngine.reservedCard(busName: name) == nil, "\(name)")
        }
    }

    @Test func theJSONStatusShows() {
        let engine = SoundEngine.decide(SoundServerObservation(pipewire: .absent, pulse: .live(program: "pulseaudio"), reservedCards: [2]))
        #expect(engine.json["server"] == .string("pulseaudio"))
        #expect(engine.json["heldCards"] == .array([.integer(2)]))
        #expect(engine.json["summary"] == .string("PulseAudio, holding card 2"))
        #expect(SoundEngine.none.json["server"] == .null)
    }
}
