// Which sound server, if any, plays the user's audio, and which cards it holds: decided from
// what the watcher saw (the servers' sockets answering a connect, the device reservation names
// on the session bus) by small ordered rules, each naming the signal that decided.

/// A sound server that can own the user's cards.
public enum SoundServerKind: String, Sendable, Hashable, CaseIterable {
    case pipewire
    case pulseaudio

    /// Its name for people.
    public var displayName: String {
        switch self {
        case .pipewire: "PipeWire"
        case .pulseaudio: "PulseAudio"
        }
    }
}

/// What a connect to a server's socket found.
public enum SocketAnswer: Sendable, Hashable {
    /// No socket at the path.
    case absent
    /// A socket file nobody listens on (a server killed without cleaning up), or not a socket.
    case refused
    /// A server accepted the connection; `program` is its process's name (`/proc/PID/comm`)
    /// when the kernel gave the peer's pid: `pipewire-pulse`, `pulseaudio`, `systemd` for a
    /// socket systemd holds for activation.
    case live(program: String?)

    public var isLive: Bool {
        if case .live = self { return true }
        return false
    }
}

/// What the watcher saw of the servers at one moment.
public struct SoundServerObservation: Sendable, Hashable {
    /// `$XDG_RUNTIME_DIR/pipewire-0`.
    public var pipewire: SocketAnswer
    /// `$XDG_RUNTIME_DIR/pulse/native`.
    public var pulse: SocketAnswer
    /// Cards whose `org.freedesktop.ReserveDevice1.Audio<N>` name is owned on the session bus.
    public var reservedCards: Set<Int>
    /// False without a session bus: reservations cannot be seen.
    public var busSeen: Bool

    public init(pipewire: SocketAnswer, pulse: SocketAnswer, reservedCards: Set<Int> = [], busSeen: Bool = true) {
        self.pipewire = pipewire
        self.pulse = pulse
        self.reservedCards = reservedCards
        self.busSeen = busSeen
    }
}

/// The sound server the daemon found, or none: what `status` and the log say.
public struct SoundEngine: Sendable, Hashable {
    /// The server that plays the user's audio; nil: AudioRoute drives ALSA directly.
    public var server: SoundServerKind?
    /// Whether a PulseAudio protocol server answers (PulseAudio itself, or pipewire-pulse).
    public var pulseProtocol: Bool
    /// Cards the server holds (their reservation names), ascending.
    public var heldCards: [Int]
    /// The rule that decided.
    public var rule: SoundEngineRule
    /// What made it: the sockets' answers and the reservations, in words.
    public var signal: String

    public init(server: SoundServerKind?, pulseProtocol: Bool, heldCards: [Int], rule: SoundEngineRule, signal: String) {
        self.server = server
        self.pulseProtocol = pulseProtocol
        self.heldCards = heldCards
        self.rule = rule
        self.signal = signal
    }

    /// No server: the state before anything was seen, and without one.
    public static let none = SoundEngine(server: nil, pulseProtocol: false, heldCards: [], rule: .noServer, signal: "nothing seen yet")

    /// One line: "PipeWire with its PulseAudio server, holding cards 0, 1" or "no sound server:
    /// AudioRoute drives ALSA directly".
    public var summary: String {
        guard let server else { return "no sound server: AudioRoute drives ALSA directly" }
        var text = server.displayName
        if server == .pipewire { text += pulseProtocol ? " with its PulseAudio server" : " without a PulseAudio server" }
        text += heldCards.isEmpty ? ", holding no card" : ", holding card\(heldCards.count > 1 ? "s" : "") " + heldCards.map(String.init).joined(separator: ", ")
        return text
    }

    /// The `status --json` object.
    public var json: JSON {
        .object([
            .init("server", server.map { .string($0.rawValue) } ?? .null), .init("pulseProtocol", .bool(pulseProtocol)),
            .init("heldCards", .array(heldCards.map { .integer(Int64($0)) })), .init("rule", .string(rule.rawValue)),
            .init("signal", .string(signal)), .init("summary", .string(summary)),
        ])
    }
}

/// The rules, in the order they are tried.
public enum SoundEngineRule: String, Sendable, Hashable, CaseIterable {
    /// pulse/native answers and its process is PulseAudio: PulseAudio plays the audio, even
    /// with a PipeWire beside it (a desktop that runs PipeWire for screen sharing only).
    case pulseaudioServesPulse
    /// pipewire-0 answers: PipeWire (with pipewire-pulse when pulse/native answers too).
    case pipewireAnswers
    /// pulse/native answers and its process is not known to be PipeWire's: PulseAudio.
    case pulseAnswers
    /// Nothing answers.
    case noServer
}

extension SoundEngine {
    /// The engine `observation` shows: the first rule that applies.
    public static func decide(_ observation: SoundServerObservation) -> SoundEngine {
        let cards = observation.reservedCards.sorted()
        let words = Self.signal(observation)
        let pulseProgram: String? = if case .live(let program) = observation.pulse { program } else { nil }
        if observation.pulse.isLive, pulseProgram == "pulseaudio" {
            return SoundEngine(server: .pulseaudio, pulseProtocol: true, heldCards: cards, rule: .pulseaudioServesPulse, signal: words)
        }
        if observation.pipewire.isLive {
            return SoundEngine(server: .pipewire, pulseProtocol: observation.pulse.isLive, heldCards: cards, rule: .pipewireAnswers, signal: words)
        }
        if observation.pulse.isLive {
            return SoundEngine(server: .pulseaudio, pulseProtocol: true, heldCards: cards, rule: .pulseAnswers, signal: words)
        }
        return SoundEngine(server: nil, pulseProtocol: false, heldCards: [], rule: .noServer, signal: words)
    }

    static func signal(_ observation: SoundServerObservation) -> String {
        func words(_ answer: SocketAnswer) -> String {
            switch answer {
            case .absent: "absent"
            case .refused: "refused the connection"
            case .live(let program?): "answered (\(program))"
            case .live(nil): "answered"
            }
        }
        var text = "pipewire-0 \(words(observation.pipewire)); pulse/native \(words(observation.pulse))"
        if !observation.busSeen {
            text += "; no session bus, reservations unknown"
        } else if observation.reservedCards.isEmpty {
            text += "; no card reserved"
        } else {
            text += "; reserved: " + observation.reservedCards.sorted().map { "Audio\($0)" }.joined(separator: ", ")
        }
        return text
    }

    /// The card number of a device reservation name (`org.freedesktop.ReserveDevice1.Audio2` → 2),
    /// nil for any other name.
    public static func reservedCard(busName: String) -> Int? {
        let prefix = "org.freedesktop.ReserveDevice1.Audio"
        guard busName.hasPrefix(prefix) else { return nil }
        let digits = busName.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }
}
