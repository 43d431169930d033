import AudioRouteSystem
import AudioRouteDBus
import AudioRouteCore

// Classification of one sound card (with its jack switch devices) into ports.
// A pure function of udev data: the reasoning is written up in docs/ports.md.

/// Something classification noticed; the watcher logs each key once.
public struct ClassificationNote: Sendable, Hashable {
    public enum Level: Sendable, Hashable { case debug, info, notice, warning }
    public var level: Level
    /// Identifies the fault for log-once purposes (includes the device).
    public var key: String
    public var message: String

    public init(_ level: Level, key: String, _ message: String) {
        self.level = level
        self.key = key
        self.message = message
    }
}

/// The ports a card implies now, what decided each, and what was noticed on the way.
public struct CardClassification: Sendable, Hashable {
    public var ports: [Port] = []
    public var notes: [ClassificationNote] = []
    /// Every decision, in order, with the udev signal that made it (`audioroute ports --direct --explain`).
    public var decisions: [ClassificationDecision] = []
    /// Per port uid: whether it is always there, plugged per its jack, unplugged, or unknown.
    public var availability: [String: PortAvailability] = [:]

    /// The ports a route may use: all but the unavailable ones (a jack with nothing plugged).
    public var usablePorts: [Port] { ports.filter(\.availability.isUsable) }
}

/// One classification decision and the signal that decided it.
public struct ClassificationDecision: Sendable, Hashable {
    /// `card`, `jack`, `pcm <m><p|c>`, or a port uid.
    public var subject: String
    /// What was decided ("builtInSpeaker output on PCM 0", "no port: nothing connected").
    public var outcome: String
    /// The udev signal that decided it (`jack NAME "HDA NVidia HDMI/DP,pcm=3"`, `OF_COMPATIBLE "xlnx,dp-snd-card"`).
    public var signal: String

    public init(subject: String, outcome: String, signal: String) {
        self.subject = subject
        self.outcome = outcome
        self.signal = signal
    }
}

/// Whether a port is there for sure.
public enum PortAvailability: String, Sendable, Hashable {
    /// A card's own port (speaker, mic, USB): there while the card is.
    case present
    /// A jack's port whose switch says something is plugged in.
    case connected
    /// An HDMI/DP output whose jack state cannot be read (no jack device, or not readable):
    /// offered anyway, at the HDMI priority (docs/ports.md, "HDMI/DP availability").
    case unknown
    /// A jack's port whose switch says nothing is plugged in: listed, never a route.
    case unavailable

    /// The port's availability as every client sees it (`Port.availability`).
    public var portAvailability: Port.Availability {
        switch self {
        case .present, .connected: .available
        case .unknown: .unknown
        case .unavailable: .unavailable
        }
    }
}

/// Udev properties the watcher honours (set by udev-rules/70-audioroute.rules or by the admin).
public enum AudioRouteProperty {
    /// `1`: the card is never a route (virtual cards: snd-dummy, snd-aloop...).
    public static let ignore = "AUDIOROUTE_IGNORE"
    /// A port type, or a comma-separated list of them: the card's ports, one per type.
    public static let portType = "AUDIOROUTE_PORT_TYPE"
    /// An integer priority for the card's (or jack's) ports.
    public static let priority = "AUDIOROUTE_PRIORITY"
    /// A human name for the card's (or jack's) ports.
    public static let name = "AUDIOROUTE_NAME"
    /// An ALSA PCM name every port of the card opens instead of its shared device
    /// (`dmix:CARD=<id>,DEV=<m>` for output, `dsnoop:...` for input).
    public static let alsaPCM = "AUDIOROUTE_ALSA_PCM"
    /// `1`: the card's ports open their PCM exclusively (`plughw:CARD=<id>,DEV=<m>`): one
    /// stream at a time, in any format the hardware takes, without dmix's mixing step.
    public static let alsaExclusive = "AUDIOROUTE_ALSA_EXCLUSIVE"
    /// `1`: the card has an earpiece (a phone): it also gets a builtInReceiver.
    public static let receiver = "AUDIOROUTE_RECEIVER"
    /// `0`: the card's ports are udev's even when it has an ALSA UCM profile (docs/ucm.md).
    public static let ucm = "AUDIOROUTE_UCM"
}

public enum CardClassifier {
    /// The ports `card` implies together with its jack switch devices.
    /// A card whose UCM profile applies gets the profile's ports instead (docs/ucm.md):
    /// this is every other card's classification, and the fallback when a profile fails.
    public static func classify(_ card: CardRecord, jacks: [JackRecord] = []) -> CardClassification {
        var result = CardClassification()
        let label = card.sysname.isEmpty ? card.syspath : card.sysname
        func note(_ level: ClassificationNote.Level, _ what: String, _ message: String) {
            result.notes.append(ClassificationNote(level, key: "\(card.syspath)#\(what)", "\(label): \(message)"))
        }
        func decide(_ subject: String, _ outcome: String, _ signal: String) {
            result.decisions.append(ClassificationDecision(subject: subject, outcome: outcome, signal: signal))
        }
        for fault in card.faults { note(.warning, "fault:\(fault)", fault) }
        let props = card.properties

        if let ignore = props[AudioRouteProperty.ignore], isTrue(ignore) {
            note(.info, "ignored", "ignored (\(AudioRouteProperty.ignore)=\(ignore))")
            return result
        }
        // Virtual cards are never routes on their own (spec section 1), even without
        // the udev rules installed; AUDIOROUTE_IGNORE=0 makes one a port anyway.
        if props[AudioRouteProperty.ignore].map({ $0.trimmingASCIIWhitespace() == "0" }) != true, let reason = virtualCard(card) {
            note(.info, "virtual", "ignored: virtual card (\(reason)); set \(AudioRouteProperty.ignore)=0 to use it")
            return result
        }
        guard card.hasControl else {
            note(.debug, "not-ready", "no control device yet: waiting for the card to finish registering")
            return result
        }
        guard !card.pcms.isEmpty else {
            note(.notice, "no-pcm", "card has no PCM devices: it gives no ports")
            return result
        }

        // Identity. ALSA card ids are short ASCII words; anything else is not trusted.
        var cardID: String?
        if let raw = card.attributes["id"] {
            if isALSAIdentifier(raw) { cardID = raw } else { note(.warning, "bad-id", "ignoring malformed card id attribute \(quoted(raw))") }
        } else {
            note(.warning, "no-id", "card has no id attribute")
        }
        var cardNumber: Int?
        if let raw = card.attributes["number"] {
            if let value = Int(raw), (0..<256).contains(value) { cardNumber = value } else { note(.warning, "bad-number", "ignoring malformed card number attribute \(quoted(raw))") }
        }

        let bus = busName(card)
        guard let base = uidBase(card, bus: bus, cardID: cardID, note: note) else {
            note(.warning, "no-uid", "no ID_PATH, ID_SERIAL or card id to derive a stable uid from: no ports")
            return result
        }
        let cardName = displayName(card, cardID: cardID)

        // Overrides.
        let overrides = CardOverrides(card, note: note)
        let priority = overrides.priority
        let nameOverride = overrides.name
        let alsaOverride = overrides.alsaPCM
        let exclusive = overrides.exclusive
        // Shared by default: several sessions play at once on one card (a ducked stream under a
        // prompt), through dmix (playback) or dsnoop (capture) on the port's own PCM
        // (docs/decisions.md, "Shared devices"). Exclusive on request: plughw, as one stream owns it.
        // A card that takes only IEC958 subframes (vc4-hdmi) cannot be shared through dmix,
        // which mixes linear formats: its playback PCMs open alsa-lib's `hdmi:` for it (the
        // card's own configuration, cards/<driver>.conf, packs the subframes), one stream at a
        // time (docs/decisions.md, "Shared devices").
        let subframesOnly = takesOnlyIEC958Subframes(card)
        if let subframesOnly, alsaOverride == nil, card.pcms.contains(where: \.playback) {
            note(.info, "iec958-subframes", "the card takes only IEC958 subframes (\(subframesOnly)): its playback PCMs open hdmi:, not shared through dmix")
        }
        func alsaName(_ pcm: PCMDevice?) -> ALSADevice? {
            if let alsaOverride { return alsaOverride }
            guard let pcm else { return nil }
            let plugin: ALSACardPCM.Plugin = pcm.playback && subframesOnly != nil ? .hdmi : sharedPlugin(output: pcm.playback, exclusive: exclusive)
            if let cardID {
                let channels = plugin == .dmix ? surroundChannels(card, pcm: pcm)?.channels : nil
                return .card(ALSACardPCM(plugin: plugin, card: .id(cardID), device: pcm.device, channels: channels))
            }
            if let cardNumber { return .card(ALSACardPCM(plugin: plugin, card: .index(cardNumber), device: pcm.device, arguments: .positional)) }
            return nil
        }

        // Which PCMs are what, and what says so: pcm_class, the card's own names for its PCMs
        // (`aplay -l`, read through the control device), HDMI/DP jacks and ELD controls, HDA's
        // numbering. A playback PCM no signal claims is analog.
        let cardVideo = videoCardSignal(card, bus: bus, cardID: cardID)
        var pcms: [PCMDevice] = []
        var namings: [PCMKey: PCMNaming] = [:]
        for pcm in card.pcms {
            let subject = "pcm \(pcm.device)\(pcm.playback ? "p" : "c")"
            let naming = PCMNames.naming(pcm)
            if let pcmClass = pcm.pcmClass, pcmClass == "modem" || (pcmClass == "digitizer" && !pcm.playback) {
                decide(subject, "not a port", "pcm_class \(pcmClass)")
            } else if let naming, naming.role == .deepBuffer, cardVideo == nil {
                // The same path as another PCM with a larger buffer: offering it would be a second
                // port for one output.
                decide(subject, "not a port: a deep-buffer alternate of another PCM", naming.signal)
            } else if let naming, naming.role == .echoReference {
                decide(subject, "not a port: an echo reference (what the card plays), not a microphone", naming.signal)
            } else {
                pcms.append(pcm)
                if let naming { namings[PCMKey(pcm)] = naming }
            }
        }
        func role(_ pcm: PCMDevice) -> PCMRole? { namings[PCMKey(pcm)]?.role }
        let playback = pcms.filter { $0.playback }
        let capture = pcms.filter { !$0.playback }
        let hdmiJacks = jacks.filter(\.isVideoJack)
        let hdaNumbering = hdaNumberingDriver(card)
        // An Amlogic card's playback front ends are memory FIFOs that the card's mixer routes to
        // the HDMI encoder, the S/PDIF encoder or an I2S pad. With more than one, the first is the
        // HDMI output (the AIU and AXG cards' configuration, alsa-lib pull request 308: `hdmi` is
        // device 0) and the others have no port of their own; one front end alone is left to the
        // rules below (the Le Potato's feeds both its HDMI and its line out).
        let mesonFrontEnds = cardVideo == nil ? playback.filter { $0.id?.hasPrefix(mesonFrontEndPrefix) == true } : []
        var mesonRouted: Set<Int> = []
        if mesonFrontEnds.count > 1 {
            for pcm in mesonFrontEnds.dropFirst() {
                mesonRouted.insert(pcm.device)
                decide("pcm \(pcm.device)p", "not a port: an Amlogic front end the card's mixer routes (the first one is HDMI)", "PCM \(pcm.device)p id \(quoted(pcm.id ?? ""))")
            }
        }
        var videoSignals: [Int: String] = [:]
        for pcm in playback where !mesonRouted.contains(pcm.device) {
            if let cardVideo {
                videoSignals[pcm.device] = cardVideo.signal
            } else if mesonFrontEnds.count > 1, pcm == mesonFrontEnds.first {
                videoSignals[pcm.device] = "PCM \(pcm.device)p id \(quoted(pcm.id ?? "")): an Amlogic card's first front end, its HDMI output"
            } else if let jack = hdmiJacks.first(where: { $0.hdmiPCM == pcm.device }) {
                videoSignals[pcm.device] = "jack NAME \(quoted(jack.name))"
            } else if let naming = namings[PCMKey(pcm)], naming.role == .display {
                videoSignals[pcm.device] = naming.signal
            } else if card.eldDevices.contains(pcm.device) {
                videoSignals[pcm.device] = "ELD control on PCM \(pcm.device)"
            } else if let hdaNumbering, pcm.device == 3 || pcm.device >= 7 {
                videoSignals[pcm.device] = "driver \(hdaNumbering) numbers HDMI PCMs 3, 7, 8, 9... (PCM \(pcm.device))"
            }
        }
        let analogPlayback = playback.filter { videoSignals[$0.device] == nil && role($0) != .digital && !mesonRouted.contains($0.device) }
        // An hdmi-codec link behind an ASoC front end: the ELD control names the back end's PCM,
        // which user space never sees. With one playback PCM, that PCM feeds the HDMI output too.
        var sharedDisplayPCM: (pcm: PCMDevice, signal: String)?
        if cardVideo == nil, let eld = card.eldDevices.first, !playback.contains(where: { card.eldDevices.contains($0.device) }), analogPlayback.count == 1 {
            sharedDisplayPCM = (analogPlayback[0], "ELD control on PCM \(eld), an HDMI link behind the card's one playback PCM \(analogPlayback[0].device)")
        }
        let analogCapture = capture.filter { role($0) != .display && role($0) != .digital }
        let mainPlayback = analogPlayback.first { role($0) != .jack && role($0) != .noCodec } ?? analogPlayback.first
        let mainCapture = analogCapture.first { role($0) != .jack && role($0) != .noCodec && role($0) != .builtInMic } ?? analogCapture.first
        // Jack ports open the PCM the card names as the jack's, else the main one.
        let jackPlayback = analogPlayback.first { role($0) == .jack } ?? mainPlayback
        let jackCapture = analogCapture.first { role($0) == .jack } ?? mainCapture
        let form = props["SOUND_FORM_FACTOR"]
        let inputOnly = form == "webcam" || form == "microphone"

        var cardPorts: [Port] = []
        func add(_ role: String, _ type: PortType, _ direction: PortDirection, pcm: PCMDevice?, name: String, signal: String, device: String? = nil) {
            let uid = "\(base)/\(role)"
            cardPorts.append(Port(uid: uid, type: type, device: device ?? base, name: name, direction: direction, priority: type.defaultPriority, alsa: alsaName(pcm)))
            decide(uid, "\(type.rawValue) \(direction.rawValue)\(pcm.map { " on PCM \($0.device)" } ?? "")", signal)
            // The name says CHANNELS where the card's stream file made it (not an admin's PCM): said
            // once per PCM, apart from the port's own decision (its signal is what made the port).
            if let pcm, let wide = surroundChannels(card, pcm: pcm), let alsa = cardPorts.last?.alsa, alsa.cardPCM?.channels == wide.channels {
                let subject = "pcm \(pcm.device)p"
                let outcome = "shared at \(wide.channels) channels (\(alsa))"
                if !result.decisions.contains(where: { $0.subject == subject && $0.outcome == outcome }) { decide(subject, outcome, wide.signal) }
            }
            result.availability[uid] = .present
        }

        let declared = declaredTypes(props[AudioRouteProperty.portType], note: note)
        if !declared.isEmpty {
            decide("card", "declared ports", "\(AudioRouteProperty.portType)=\(props[AudioRouteProperty.portType] ?? "")")
            let declaredPlayback = mainPlayback ?? playback.first
            let declaredCapture = capture.first
            for type in declared {
                let name = nameOverride ?? (type.isBuiltIn ? type.defaultName : cardName)
                let allowsOut = type.allowedDirections.contains(.output)
                let allowsIn = type.allowedDirections.contains(.input)
                let suffix = allowsOut && allowsIn
                let signal = "\(AudioRouteProperty.portType)"
                if allowsOut, let pcm = declaredPlayback { add(suffix ? "\(type.rawValue)-output" : type.rawValue, type, .output, pcm: pcm, name: name, signal: signal) }
                if allowsIn, let pcm = declaredCapture { add(suffix ? "\(type.rawValue)-input" : type.rawValue, type, .input, pcm: pcm, name: name, signal: signal) }
            }
        } else if let cardVideo {
            // A display controller's audio: every playback PCM is an HDMI/DP output (below).
            decide("card", "display audio: every playback PCM is \(cardVideo.type.rawValue), never a speaker", cardVideo.signal)
        } else if bus == "usb" {
            let usb = busSignal(card) ?? "bus usb"
            decide("card", "USB audio", usb)
            let usbPlayback = playback.first { videoSignals[$0.device] == nil }
            let usbCapture = capture.first
            if inputOnly {
                if usbPlayback != nil { decide("card", "no output port", "SOUND_FORM_FACTOR=\(form ?? "")") }
            } else if let pcm = usbPlayback {
                add("output", .usbAudio, .output, pcm: pcm, name: cardName, signal: "\(usb), playback PCM \(pcm.device)")
            }
            if let pcm = usbCapture {
                add("input", .usbAudio, .input, pcm: pcm, name: cardName, signal: "\(usb), capture PCM \(pcm.device)\(inputOnly ? ", SOUND_FORM_FACTOR=\(form ?? "")" : "")")
            }
        } else {
            // An internal card (PCI HDA, SOF, ASoC, a board's codec): what it has is what it says.
            let analogJackRecords = jacks.filter { !$0.isVideoJack }
            let phone = props[AudioRouteProperty.receiver].map(isTrue) == true
            let board = boardSignal(card, bus: bus)
            let detection = analogJackRecords.first.map { "jack NAME \(quoted($0.name))" }
            let speakerWord = speakerSignal(card, namings: namings)
            let analogPins = card.hdaPins.filter { $0.isAnalogOutput || $0.isAnalogInput }
            // Without an analog pin read (the codec file unreadable, or its dump empty), HDA's
            // phantom jacks still say which pins are always there: a Speaker, a Mic.
            let phantoms = analogPins.isEmpty ? card.phantomJacks : []
            let noCodecPlayback = analogPlayback.first { role($0) == .noCodec }
            let noCodecCapture = analogCapture.first { role($0) == .noCodec }
            // A board's analog output that nothing names a speaker and no jack detects: what is
            // plugged into it is not known, and it is not built in (docs/decisions.md, "Boards").
            let boardWithoutDetection = board != nil && detection == nil && speakerWord == nil && !phone
            decide("card", boardWithoutDetection ? "board: no jack detection and no speaker named" : "internal codec", boardWithoutDetection
                ? "\(board ?? ""); no analog jack; no card, PCM or device-tree name says Speaker"
                : "bus \(bus ?? "unknown"), no display or USB signal\(detection.map { "; \($0)" } ?? "")\(speakerWord.map { "; \($0)" } ?? "")")

            // Output.
            let speakerPCM = analogPlayback.first { role($0) == .speaker }
            var speaker: (pcm: PCMDevice, signal: String)?
            if inputOnly, !analogPlayback.isEmpty {
                decide("card", "no output port", "SOUND_FORM_FACTOR=\(form ?? "")")
            } else if let speakerPCM, let naming = namings[PCMKey(speakerPCM)] {
                speaker = (speakerPCM, naming.signal)
            } else if boardWithoutDetection, let pcm = mainPlayback {
                let headphoneSignal = headphoneWord(card, pcm: pcm, namings: namings)
                let type: PortType = headphoneSignal != nil ? .headphones : .lineOut
                let signal = headphoneSignal.map { "\($0): headphones" } ?? "analog output of a board, no Headphone name: line out"
                if type == .headphones {
                    add("headphones", .headphones, .output, pcm: pcm, name: nameOverride ?? PortType.headphones.defaultName, signal: signal, device: "\(base)/jack")
                } else {
                    add("line-out", .lineOut, .output, pcm: pcm, name: nameOverride ?? PortType.lineOut.defaultName, signal: signal, device: "\(base)/line")
                }
            } else if let pcm = noCodecPlayback, mainPlayback == pcm {
                // An I2S link with no codec: whatever is wired to the header, at line level.
                let signal = namings[PCMKey(pcm)]?.signal ?? ""
                add("line-out", .lineOut, .output, pcm: pcm, name: nameOverride ?? PortType.lineOut.defaultName, signal: "\(signal): no codec, line out", device: "\(base)/line")
            } else if !analogPins.isEmpty, !phone {
                if let pin = analogPins.first(where: \.isBuiltInSpeaker), let pcm = mainPlayback, role(pcm) != .jack {
                    speaker = (pcm, "HDA pin \(pin.label); first analog playback PCM \(pcm.device)")
                } else if !analogPlayback.isEmpty {
                    let outputs = analogPins.filter(\.isAnalogOutput).map(\.label).joined(separator: ", ")
                    decide("card", "no builtInSpeaker: no HDA pin is a fixed speaker", "HDA pins \(outputs.isEmpty ? "have no analog output" : outputs)")
                }
            } else if !phantoms.isEmpty, !phone {
                // No pin read, but HDA's phantom jacks name the pins that cannot sense a plug.
                if let phantom = phantoms.first(where: { PCMNames.words($0).contains("speaker") }), let pcm = mainPlayback, role(pcm) != .jack {
                    speaker = (pcm, "jack control \(quoted(phantom)): a Speaker pin; first analog playback PCM \(pcm.device)")
                } else if !analogPlayback.isEmpty {
                    decide("card", "no builtInSpeaker: no phantom jack names a speaker", "phantom jacks \(phantoms.map(quoted).joined(separator: ", "))")
                }
            } else if let pcm = mainPlayback, role(pcm) != .jack {
                let named = namings[PCMKey(pcm)].map { " (\($0.signal))" } ?? ""
                let others = playback.count > analogPlayback.count ? " (the other playback PCMs are HDMI/DP or digital)" : ""
                speaker = (pcm, "first analog playback PCM \(pcm.device)\(named)\(others)")
            } else if !analogPlayback.isEmpty {
                decide("card", "no builtInSpeaker: every analog playback PCM is named as a jack",
                    analogPlayback.compactMap { namings[PCMKey($0)]?.signal }.joined(separator: "; "))
            } else if !playback.isEmpty {
                decide("card", "no builtInSpeaker: every playback PCM is HDMI/DP", playback.compactMap { videoSignals[$0.device] }.joined(separator: "; "))
            }
            if let speaker {
                add("speaker", .builtInSpeaker, .output, pcm: speaker.pcm, name: PortType.builtInSpeaker.defaultName, signal: speaker.signal)
                if phone {
                    add("receiver", .builtInReceiver, .output, pcm: speaker.pcm, name: PortType.builtInReceiver.defaultName, signal: "\(AudioRouteProperty.receiver)=1")
                }
            }

            // Input.
            let micPCM = analogCapture.first { role($0) == .builtInMic }
            if let micPCM, let naming = namings[PCMKey(micPCM)] {
                add("mic", .builtInMic, .input, pcm: micPCM, name: PortType.builtInMic.defaultName, signal: naming.signal)
            } else if boardWithoutDetection, let pcm = mainCapture {
                if let word = micWord(card) {
                    add("mic", .builtInMic, .input, pcm: pcm, name: PortType.builtInMic.defaultName, signal: word)
                } else {
                    add("line-in", .lineIn, .input, pcm: pcm, name: nameOverride ?? PortType.lineIn.defaultName, signal: "analog input of a board, no Mic name: line in", device: "\(base)/line")
                }
            } else if let pcm = noCodecCapture, mainCapture == pcm {
                let signal = namings[PCMKey(pcm)]?.signal ?? ""
                add("line-in", .lineIn, .input, pcm: pcm, name: nameOverride ?? PortType.lineIn.defaultName, signal: "\(signal): no codec, line in", device: "\(base)/line")
            } else if !analogPins.isEmpty {
                if let pin = analogPins.first(where: \.isBuiltInMic), let pcm = mainCapture, role(pcm) != .jack {
                    add("mic", .builtInMic, .input, pcm: pcm, name: PortType.builtInMic.defaultName, signal: "HDA pin \(pin.label); first analog capture PCM \(pcm.device)")
                } else if !analogCapture.isEmpty {
                    let inputs = analogPins.filter(\.isAnalogInput).map(\.label).joined(separator: ", ")
                    decide("card", "no builtInMic: no HDA pin is a fixed microphone", "HDA pins \(inputs.isEmpty ? "have no analog input" : inputs)")
                }
            } else if !phantoms.isEmpty {
                // A Mic pin that cannot sense a plug is one that is always there, as read from pins.
                if let phantom = phantoms.first(where: { PCMNames.words($0).contains("mic") }), let pcm = mainCapture, role(pcm) != .jack {
                    add("mic", .builtInMic, .input, pcm: pcm, name: PortType.builtInMic.defaultName, signal: "jack control \(quoted(phantom)): a Mic pin that cannot sense a plug; first analog capture PCM \(pcm.device)")
                } else if !analogCapture.isEmpty {
                    decide("card", "no builtInMic: no phantom jack names a microphone", "phantom jacks \(phantoms.map(quoted).joined(separator: ", "))")
                }
            } else if let pcm = mainCapture, role(pcm) != .jack {
                let named = namings[PCMKey(pcm)].map { " (\($0.signal))" } ?? ""
                add("mic", .builtInMic, .input, pcm: pcm, name: PortType.builtInMic.defaultName, signal: "first capture PCM \(pcm.device)\(named)")
            } else if !analogCapture.isEmpty {
                decide("card", "no builtInMic: every capture PCM is named as a jack", analogCapture.compactMap { namings[PCMKey($0)]?.signal }.joined(separator: "; "))
            }
        }
        for index in cardPorts.indices {
            if let priority { cardPorts[index].priority = priority }
            if let nameOverride { cardPorts[index].name = nameOverride }
        }

        // Jacks: the union of every switch device of the card, so that a headset's
        // headphone and microphone switches (often two evdev devices) give two
        // ports of one device, which move together.
        var jackPorts: [Port] = []
        func jackPort(_ role: String, _ type: PortType, device: String, pcm: PCMDevice?, from jack: JackRecord, plugged: Bool = true) {
            // A card's own line out (a link with no codec) is already that port.
            guard !cardPorts.contains(where: { $0.uid == "\(base)/\(role)" }) else { return }
            var port = Port(uid: "\(base)/\(role)", type: type, device: device, direction: type.defaultDirection, alsa: alsaName(pcm))
            CardOverrides.applyJack(jack, to: &port, note: note)
            jackPorts.append(port)
            let named = pcm.flatMap { namings[PCMKey($0)] }.map { "; \($0.signal)" } ?? ""
            let outcome = "\(type.rawValue) \(port.direction.rawValue)\(pcm.map { " on PCM \($0.device)" } ?? "")\(plugged ? "" : ", unavailable: nothing plugged")"
            decide(port.uid, outcome, "jack NAME \(quoted(jack.name)) switch \(plugged ? "on" : "off")\(named)")
            result.availability[port.uid] = plugged ? .connected : .unavailable
        }
        // One jack may be reported by both sources (an HDA headphone has an evdev switch and a
        // `Headphone Jack` control): ports are made per kind, so it is one port. evdev first,
        // so that its udev properties (AUDIOROUTE_*) name and place the port.
        let analogJacks = jacks.filter { !$0.isVideoJack && $0.source == .evdev } + jacks.filter { !$0.isVideoJack && $0.source != .evdev }
        for jack in analogJacks where !jack.stateKnown {
            decide("jack", "no port: switch state unknown", "jack NAME \(quoted(jack.name)) (device not readable)")
        }
        // A kind is plugged when a jack reporting it says so; a jack that reports it, readable and
        // off, makes the port known and unavailable (listed, never a route).
        func jack(with bit: SwitchSet) -> (jack: JackRecord, plugged: Bool)? {
            if let on = analogJacks.first(where: { $0.state.contains(bit) && $0.supported.contains(bit) }) { return (on, true) }
            return analogJacks.first { $0.stateKnown && $0.supported.contains(bit) }.map { ($0, false) }
        }
        if let (found, plugged) = jack(with: .headphoneInsert) {
            jackPort("headphones", .headphones, device: "\(base)/jack", pcm: jackPlayback, from: found, plugged: plugged)
        }
        if let (found, plugged) = jack(with: .microphoneInsert) {
            jackPort("headset-mic", .headsetMic, device: "\(base)/jack", pcm: jackCapture, from: found, plugged: plugged)
        }
        if let (found, plugged) = jack(with: .lineoutInsert) {
            jackPort("line-out", .lineOut, device: "\(base)/line", pcm: jackPlayback, from: found, plugged: plugged)
        }
        if let (found, plugged) = jack(with: .lineinInsert) {
            jackPort("line-in", .lineIn, device: "\(base)/line", pcm: jackCapture, from: found, plugged: plugged)
        }
        for jack in hdmiJacks {
            if let number = jack.hdmiPCM, !playback.contains(where: { $0.device == number }) {
                note(.notice, "hdmi-jack-\(number)", "HDMI/DP jack \(quoted(jack.name)) names PCM \(number), which the card does not have")
            }
        }

        // HDMI/DP outputs: every video PCM is offered unless a readable jack says nothing is
        // connected; with no jack, or one whose state cannot be read, availability is unknown.
        let videoType = cardVideo?.type ?? .HDMI
        var displayPCMs = playback.filter { videoSignals[$0.device] != nil && !mesonRouted.contains($0.device) }
        if let shared = sharedDisplayPCM {
            videoSignals[shared.pcm.device] = shared.signal
            displayPCMs.append(shared.pcm)
        }
        for pcm in displayPCMs where declared.isEmpty {
            let number = pcm.device
            let role = videoType == .displayPort ? "dp-\(number)" : "hdmi-\(number)"
            let uid = "\(base)/\(role)"
            guard !jackPorts.contains(where: { $0.uid == uid }) else { continue }
            // A display card with one PCM has one jack, which need not name the PCM (`vc4-hdmi-0 HDMI Jack`).
            var candidates = hdmiJacks.filter { $0.hdmiPCM == number }
            if candidates.isEmpty, playback.count == 1 { candidates = hdmiJacks.filter { $0.hdmiPCM == nil } }
            // Both sources may report it: a readable one decides, and one that says connected wins.
            let connected = candidates.first { $0.stateKnown && !$0.state.intersection([.lineoutInsert, .videooutInsert]).isEmpty }
            let jack = connected ?? candidates.first(where: \.stateKnown) ?? candidates.first
            let availability: PortAvailability
            var signal = videoSignals[pcm.device] ?? ""
            if let jack, jack.stateKnown {
                let on = !jack.state.intersection([.lineoutInsert, .videooutInsert]).isEmpty
                availability = on ? .connected : .unavailable
                signal += "; jack \(quoted(jack.name)) switch \(on ? "on" : "off")"
            } else {
                availability = .unknown
                signal += jack.map { "; jack \(quoted($0.name)) state unknown" } ?? "; no jack device"
            }
            let label = videoType == .displayPort ? "DisplayPort" : "HDMI"
            let device = cardVideo != nil ? base : uid
            var port = Port(uid: uid, type: videoType, device: device, name: "\(cardName) \(label) \(number)", direction: .output, alsa: alsaName(pcm))
            if let priority {
                port.priority = priority
            } else if availability == .unknown {
                // Offered, but never over a built-in port: a laptop whose HDMI jack cannot be
                // read keeps its speaker; a desktop with only a GPU's HDMI still plays there.
                port.priority = -1
            }
            jackPorts.append(port)
            decide(uid, "\(videoType.rawValue) output on PCM \(number), availability \(availability.rawValue)", signal)
            result.availability[uid] = availability
        }
        result.ports = cardPorts + jackPorts
        for index in result.ports.indices {
            result.ports[index].availability = result.availability[result.ports[index].uid]?.portAvailability ?? .available
        }
        return result
    }

    // MARK: Helpers

    /// Drivers and card ids of ALSA's virtual cards (snd-aloop, snd-dummy, snd-virmidi).
    static let virtualDrivers: Set<String> = ["snd_aloop", "snd-aloop", "snd_dummy", "snd-dummy", "snd_virmidi", "snd-virmidi"]
    static let virtualIDs: Set<String> = ["Loopback", "Dummy", "VirMIDI"]

    /// Why the card is a virtual one, or nil.
    static func virtualCard(_ card: CardRecord) -> String? {
        if let driver = card.parent.driver, virtualDrivers.contains(driver) { return "driver \(driver)" }
        if let id = card.attributes["id"], virtualIDs.contains(id), card.properties["ID_BUS"] == nil { return "card id \(id)" }
        return nil
    }

    /// Card ids of PCI HDMI-only cards (Intel `HDMI`, NVIDIA `NVidia`, older AMD `AMDHDMI`).
    static let videoCardIDs: Set<String> = ["HDMI", "NVidia", "AMDHDMI"]

    /// Whether udev says the whole card is a display controller's audio (every playback PCM
    /// HDMI/DP), and which signal says so. Checked in order of how directly the signal
    /// names the hardware: PCI topology, hwdb model name, device tree, driver, card id.
    static func videoCardSignal(_ card: CardRecord, bus: String?, cardID: String?) -> (type: PortType, signal: String)? {
        let parent = card.parent
        if let class0 = parent.function0Class, class0.hasPrefix("0x03") {
            return (.HDMI, "PCI function 0 of the same device has display class \(class0)")
        }
        if parent.isGraphicsAudioFunction { return (.HDMI, "PCI function 0 of the same device is a display controller") }
        if bus == "pci", let model = card.properties["ID_MODEL_FROM_DATABASE"], model.contains(text: "HDMI") || model.contains(text: "DisplayPort") || model.contains(text: "DP Audio") {
            return (.HDMI, "hwdb ID_MODEL_FROM_DATABASE \(quoted(model))")
        }
        for compatible in parent.ofCompatible {
            if let type = videoWord(compatible) { return (type, "OF_COMPATIBLE \(quoted(compatible))") }
        }
        if let name = parent.ofName, let type = videoWord(name) { return (type, "OF_NAME \(quoted(name))") }
        if bus != "pci", bus != "usb", let driver = parent.driver, let type = videoWord(driver) { return (type, "driver \(driver)") }
        // Tegra's HDA controller serves the SoC's HDMI/DP outputs and nothing else.
        if let driver = parent.driver ?? card.info?.driver, tegraHDADrivers.contains(driver) {
            return (.HDMI, "driver \(driver): Tegra's HDA controller carries HDMI/DP only")
        }
        if let compatible = parent.ofCompatible.first(where: isTegraHDA) {
            return (.HDMI, "OF_COMPATIBLE \(quoted(compatible)): Tegra's HDA controller carries HDMI/DP only")
        }
        // A card id is a weak word: NVIDIA's chipset HDA is `NVidia` too (a MacBook Air's MCP89 with
        // its CS4206 codec). A playback PCM whose name says something other than HDMI/DP wins.
        let pcmSaysAnalog = card.pcms.contains { $0.playback && !($0.id ?? "").isEmpty && PCMNames.naming($0)?.role != .display }
        if let cardID, !pcmSaysAnalog, (bus == "pci" && videoCardIDs.contains(cardID)) || (bus != "usb" && cardID.lowercased().contains(text: "hdmi")) {
            return (.HDMI, "card id \(cardID)")
        }
        // What the control device says: a card named for its HDMI (`vc4-hdmi-0`, `HDA ATI HDMI`).
        if bus != "usb", let info = card.info {
            for (label, text) in [("name", info.name), ("driver", info.driver)] where videoWord(text) == .HDMI {
                return (.HDMI, "card \(label) \(quoted(text))")
            }
        }
        return nil
    }

    /// Drivers of Tegra's HDA controller (the platform driver `tegra-hda`; the ALSA card's driver
    /// string is the same).
    static let tegraHDADrivers: Set<String> = ["tegra-hda", "snd_hda_tegra"]

    /// `nvidia,tegra30-hda`, `nvidia,tegra210-hda`, `nvidia,tegra194-hda`...
    static func isTegraHDA(_ compatible: String) -> Bool {
        compatible.hasPrefix("nvidia,tegra") && compatible.hasSuffix("-hda")
    }

    /// The driver that numbers its PCMs as HDA does (HDMI on 3, 7, 8...), if the card's is one.
    static func hdaNumberingDriver(_ card: CardRecord) -> String? {
        guard let driver = card.parent.driver, driver == "snd_hda_intel" || tegraHDADrivers.contains(driver) else { return nil }
        return driver
    }

    /// A board's or SoC's own card (not PCI, not USB: a device-tree or platform device with no
    /// PCI bridge above it), and what says so. SOF and AMD ACP cards hang off a PCI device: they
    /// are a laptop's, not a board's. A board is known positively, by a device-tree compatible or
    /// a platform parent: a card whose bus is unknown (a report without its sysfs section) is not
    /// taken for one on no evidence.
    static func boardSignal(_ card: CardRecord, bus: String?) -> String? {
        guard bus != "usb", bus != "pci", !card.syspath.contains(text: "/pci") else { return nil }
        if let path = card.properties["ID_PATH"], path.hasPrefix("pci-") || path.contains(text: "-usb-") { return nil }
        if let compatible = card.parent.ofCompatible.first { return "board card: OF_COMPATIBLE \(quoted(compatible))" }
        if bus == "platform" || card.parent.subsystem == "platform" { return "board card: platform device with no PCI or USB parent" }
        guard bus == nil else { return nil }
        return saidBoard(card).map { "board card: \($0)" }
    }

    /// Where a card that udev places on no bus (a report without its sysfs section) names an SoC's
    /// own audio: a device-tree device by its unit address (the kernel names such a device
    /// `<address>.<node>`: `ff010000.i2s-rk3328-hifi`), an Amlogic card's front end (meson-card-utils
    /// names each `fe.<node>`: `fe.dai-link-0`), or the Raspberry Pi's SoC (`bcm2835` drivers).
    static func saidBoard(_ card: CardRecord) -> String? {
        for pcm in card.pcms {
            let label = "PCM \(pcm.device)\(pcm.playback ? "p" : "c") id \(quoted(pcm.id ?? ""))"
            guard let id = pcm.id else { continue }
            if id.hasPrefix(mesonFrontEndPrefix) { return "\(label): an Amlogic card's front end" }
            for word in id.split(separator: " ") {
                guard let dot = word.firstIndex(of: "."), word.index(after: dot) < word.endIndex else { continue }
                let address = word[..<dot]
                if address.count >= 4, address.allSatisfy(\.isHexDigit), address.contains(where: \.isNumber), word[word.index(after: dot)].isLetter {
                    return "\(label): the device-tree device \(address)"
                }
            }
        }
        func saysPi(_ text: String) -> Bool { PCMNames.words(text).contains { $0.hasPrefix("bcm2835") } }
        if let name = card.info?.name, saysPi(name) { return "card name \(quoted(name)): the Raspberry Pi SoC's audio (bcm2835)" }
        if let pcm = card.pcms.first(where: { saysPi($0.id ?? "") }) {
            return "PCM \(pcm.device)\(pcm.playback ? "p" : "c") id \(quoted(pcm.id ?? "")): the Raspberry Pi SoC's audio (bcm2835)"
        }
        return nil
    }

    /// How meson-card-utils names an Amlogic card's front-end links (`fe.` and the device-tree
    /// node, `dai-link-<n>` in every upstream device tree).
    static let mesonFrontEndPrefix = "fe.dai-link-"

    /// Where the card, one of its PCMs, or its device tree names a speaker (or the SOF
    /// components list a `spk:` amplifier): the signal, or nil.
    static func speakerSignal(_ card: CardRecord, namings: [PCMKey: PCMNaming]) -> String? {
        if let naming = namings.values.sorted(by: { $0.signal < $1.signal }).first(where: { $0.role == .speaker }) { return naming.signal }
        func says(_ text: String) -> Bool {
            PCMNames.words(text).contains { $0 == "speaker" || $0 == "speakers" || $0 == "spk" || $0 == "loudspeaker" }
        }
        if let info = card.info {
            for (label, text) in [("name", info.name), ("long name", info.longName), ("id", info.id), ("driver", info.driver), ("components", info.components)] where says(text) {
                return "card \(label) \(quoted(text))"
            }
        }
        if let id = card.attributes["id"], says(id) { return "card id \(id)" }
        for compatible in card.parent.ofCompatible where says(compatible) { return "OF_COMPATIBLE \(quoted(compatible))" }
        return nil
    }

    /// Where the card or its output PCM says Headphone(s): the signal, or nil.
    static func headphoneWord(_ card: CardRecord, pcm: PCMDevice, namings: [PCMKey: PCMNaming]) -> String? {
        func says(_ text: String) -> Bool { PCMNames.words(text).contains { $0 == "headphone" || $0 == "headphones" } }
        if let naming = namings[PCMKey(pcm)], naming.role == .jack { return naming.signal }
        if let info = card.info {
            for (label, text) in [("name", info.name), ("id", info.id)] where says(text) { return "card \(label) \(quoted(text))" }
        }
        if let id = card.attributes["id"], says(id) { return "card id \(id)" }
        return nil
    }

    /// Where the card's names say microphone (`dmic-sound-card`, `Mic`): the signal, or nil.
    static func micWord(_ card: CardRecord) -> String? {
        func says(_ text: String) -> Bool {
            PCMNames.words(text).contains { $0.hasPrefix("dmic") || $0 == "mic" || $0 == "microphone" || $0 == "microphones" }
        }
        if let info = card.info {
            for (label, text) in [("name", info.name), ("id", info.id)] where says(text) { return "card \(label) \(quoted(text)): a microphone" }
        }
        if let id = card.attributes["id"], says(id) { return "card id \(id): a microphone" }
        return nil
    }

    /// HDMI or DisplayPort when a device-tree name, compatible or driver has such a word
    /// (`brcm,bcm2711-hdmi0`, `vc4_hdmi`, `xlnx,dp-snd-card`, `zynqmp_dp_snd_card`).
    static func videoWord(_ text: String) -> PortType? {
        let words = text.lowercased().split { !($0.isLetter || $0.isNumber) }
        if words.contains(where: { $0.hasPrefix("hdmi") }) { return .HDMI }
        if words.contains(where: { $0 == "dp" || $0 == "displayport" || $0 == "dpsub" }) { return .displayPort }
        return nil
    }


    /// The card's bus: ID_BUS when udev set it, else the parent's subsystem, else what the card
    /// says (`busSignal`).
    static func busName(_ card: CardRecord) -> String? {
        if let bus = card.properties["ID_BUS"], isToken(bus) { return bus.lowercased() }
        if let subsystem = card.parent.subsystem { return subsystem == "usb" ? "usb" : subsystem }
        if card.syspath.contains(text: "/usb") { return "usb" }
        return saidBus(card)?.bus
    }

    /// The card names snd_hda_intel gives its cards (sound/pci/hda/hda_intel.c, driver_short_names):
    /// a PCI controller's.
    static let hdaIntelNames: Set<String> = [
        "HDA Intel", "HDA Intel PCH", "HDA Intel MID", "HDA Intel HDMI", "HDA ATI SB", "HDA ATI HDMI", "HDA VIA VT82xx", "HDA SIS966",
        "HDA ULI M5461", "HDA NVidia", "HDA Teradici", "HDA Creative", "HDA C-Media", "HDA Zhaoxin", "HDA Loongson", "HD-Audio Generic",
    ]

    /// What says the card's bus (`busName`), for decisions: `ID_BUS=usb`, `parent subsystem usb`...
    static func busSignal(_ card: CardRecord) -> String? {
        if let bus = card.properties["ID_BUS"], isToken(bus) { return "ID_BUS=\(bus)" }
        if let subsystem = card.parent.subsystem { return "parent subsystem \(subsystem)" }
        if card.syspath.contains(text: "/usb") { return "syspath below a USB device" }
        return saidBus(card)?.signal
    }

    /// The bus a card's own words imply, where udev says none: a card driver that one bus's
    /// driver registers (`HDA-Intel`: snd_hda_intel, PCI; `USB-Audio`: snd-usb-audio, USB), a card
    /// name only snd_hda_intel gives (`HDA Intel PCH`), or PCMs that only snd-usb-audio names so
    /// (id `USB Audio`, sound/usb/stream.c).
    static func saidBus(_ card: CardRecord) -> (bus: String, signal: String)? {
        if let driver = card.info?.driver {
            if driver == "USB-Audio" { return ("usb", "card driver USB-Audio (snd-usb-audio)") }
            if driver == "HDA-Intel" { return ("pci", "card driver HDA-Intel (snd_hda_intel)") }
        }
        if let name = card.info?.name, hdaIntelNames.contains(name) { return ("pci", "card name \(quoted(name)) (snd_hda_intel's)") }
        if let first = card.pcms.first, card.pcms.allSatisfy({ $0.id == "USB Audio" }) {
            return ("usb", "PCM \(first.device)\(first.playback ? "p" : "c") id \"USB Audio\" (snd-usb-audio's PCM name)")
        }
        return nil
    }

    /// A uid prefix that survives restarts and re-plugs, never from the card index.
    static func uidBase(
        _ card: CardRecord, bus: String?, cardID: String?, note: (ClassificationNote.Level, String, String) -> Void
    ) -> String? {
        let props = card.properties
        let serial = props["ID_SERIAL"].flatMap { isToken($0) ? $0 : nil }
        let path = props["ID_PATH"].flatMap { isToken($0) ? $0 : nil }
        if let raw = props["ID_PATH"], path == nil { note(.warning, "bad-path", "ignoring malformed ID_PATH \(quoted(raw))") }
        // A USB device with a real serial number is the same device on any port.
        if bus == "usb", let serial, let short = props["ID_SERIAL_SHORT"], !short.isEmpty {
            let interface = props["ID_USB_INTERFACE_NUM"].flatMap { isToken($0) ? "-\($0)" : nil } ?? ""
            return "usb-\(serial)\(interface)"
        }
        if let path { return path }
        if let serial { return "\(bus ?? "dev")-\(serial)" }
        if let cardID {
            note(.notice, "uid-from-id", "no ID_PATH or ID_SERIAL: uid derived from the card id \(cardID)")
            return "card-\(cardID)"
        }
        return nil
    }

    /// A human name: AUDIOROUTE_NAME, the USB model, the PCI database model, the card id.
    static func displayName(_ card: CardRecord, cardID: String?) -> String {
        let props = card.properties
        // A device without a product string gets its hex product id as ID_MODEL: not a name.
        func isBareID(_ model: String) -> Bool { model == props["ID_MODEL_ID"] || model.hasPrefix("0x") }
        if let encoded = props["ID_MODEL_ENC"], let decoded = decodeUdevEscapes(encoded), isUsableText(decoded), !isBareID(decoded) {
            return decoded.trimmingASCIIWhitespace()
        }
        if let model = props["ID_MODEL"], isUsableText(model), !isBareID(model) { return model.replacingUnderscores() }
        if let model = props["ID_MODEL_FROM_DATABASE"], isUsableText(model) { return model }
        return cardID ?? card.sysname
    }

    /// Parses AUDIOROUTE_PORT_TYPE: a port type or a comma-separated list of them.
    static func declaredTypes(_ raw: String?, note: (ClassificationNote.Level, String, String) -> Void) -> [PortType] {
        guard let raw else { return [] }
        var types: [PortType] = []
        for item in raw.split(separator: ",") {
            let name = String(item).trimmingASCIIWhitespace()
            if let type = PortType(rawValue: name) {
                if !types.contains(type) { types.append(type) }
            } else {
                note(.warning, "bad-type-\(name)", "ignoring unknown port type \(quoted(name)) in \(AudioRouteProperty.portType)")
            }
        }
        return types
    }

    /// Decodes udev's `\xNN` escapes (ID_MODEL_ENC); nil if the bytes are not UTF-8.
    static func decodeUdevEscapes(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.first {
            if byte == UInt8(ascii: "\\"), utf8.count >= 4, utf8[utf8.startIndex + 1] == UInt8(ascii: "x"),
                let value = UInt8(String(decoding: utf8[(utf8.startIndex + 2)..<(utf8.startIndex + 4)], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(4)
            } else {
                bytes.append(byte)
                utf8 = utf8.dropFirst()
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Drivers whose playback PCMs take only `IEC958_SUBFRAME_LE` (alsa-lib's cards/vc4-hdmi.conf
    /// plays them through its iec958 plugin; dmix cannot mix that format), by the ALSA card's
    /// driver and by the kernel driver of the card's device.
    static let iec958SubframeDrivers: Set<String> = ["vc4-hdmi", "vc4_hdmi"]

    /// What says `card` takes only IEC958 subframes (its driver, or the name vc4 gives its cards:
    /// `vc4-hdmi`, `vc4-hdmi-0`, where a report shows only `aplay -l`), or nil.
    static func takesOnlyIEC958Subframes(_ card: CardRecord) -> String? {
        for driver in [card.info?.driver, card.parent.driver] {
            if let driver, iec958SubframeDrivers.contains(driver) { return "driver \(driver)" }
        }
        if let name = card.info?.name, name == "vc4-hdmi" || name.hasPrefix("vc4-hdmi-") { return "card name \(name)" }
        return nil
    }

    /// The most channels dmix runs a card at: 7.1, the widest layout ALSA's channel maps name
    /// speakers for (and the plugin offers).
    static let maxSharedChannels = 8

    /// How many channels a USB card's playback PCM is shared at, where its stream file says its
    /// endpoint takes more than stereo: its widest format's count, at most `maxSharedChannels`
    /// (a studio interface's 18 outputs are shared as 7.1), with the stream file's words; nil
    /// for stereo, for a capture PCM, and where there is no stream file (not USB, or not read):
    /// dmix then runs alsa-lib's default, 2 (docs/decisions.md, "Surround on a USB card").
    static func surroundChannels(_ card: CardRecord, pcm: PCMDevice) -> (channels: Int, signal: String)? {
        guard pcm.playback, let widest = card.usbPlayback[pcm.device], widest.channels > 2 else { return nil }
        let channels = min(widest.channels, maxSharedChannels)
        let capped = channels < widest.channels ? " (at most \(maxSharedChannels) shared)" : ""
        return (channels, widest.signal(device: pcm.device) + capped)
    }

    /// The ALSA plugin a port opens its card's PCM through: dmix (playback) or dsnoop (capture),
    /// shared by several streams; plughw when the card is exclusive (docs/decisions.md, "Shared devices").
    static func sharedPlugin(output: Bool, exclusive: Bool) -> ALSACardPCM.Plugin {
        exclusive ? .plughw : output ? .dmix : .dsnoop
    }

    /// Whether `AUDIOROUTE_ALSA_EXCLUSIVE` asks for exclusive PCMs on `card`.
    static func isExclusive(_ card: CardRecord) -> Bool {
        card.properties[AudioRouteProperty.alsaExclusive].map(isTrue) ?? false
    }

    static func isTrue(_ value: String) -> Bool {
        ["1", "true", "yes", "on"].contains(value.trimmingASCIIWhitespace().lowercased())
    }

    /// ALSA card ids: 1–16 ASCII letters, digits, `_` or `-`.
    static func isALSAIdentifier(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 16
            && value.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F || $0 == 0x2D }
    }

    /// A printable ASCII word (no spaces or controls), as udev's ID_* values are.
    static func isToken(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 512 && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// Text fit for a name: valid, non-empty, no control characters, not absurdly long.
    static func isUsableText(_ value: String) -> Bool {
        !value.trimmingASCIIWhitespace().isEmpty && value.utf8.count <= 256 && !value.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{7F}" || $0 == "\u{FFFD}" }
    }

    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars.prefix(80) {
            if scalar.value < 0x20 || scalar.value == 0x7F { out += "\\x" + String(scalar.value, radix: 16) } else { out.unicodeScalars.append(scalar) }
        }
        return out + "\""
    }
}

/// A PCM stream: its device number and direction.
struct PCMKey: Hashable {
    var device: Int
    var playback: Bool
    init(_ pcm: PCMDevice) {
        device = pcm.device
        playback = pcm.playback
    }
    init(device: Int, playback: Bool) {
        self.device = device
        self.playback = playback
    }
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { $0 != " " && $0 != "\t" && $0 != "\n" && $0 != "\r" }) else { return "" }
        let end = scalars.lastIndex(where: { $0 != " " && $0 != "\t" && $0 != "\n" && $0 != "\r" })!
        return String(scalars[start...end])
    }

    func replacingUnderscores() -> String {
        String(map { $0 == "_" ? " " : $0 })
    }
}

/// A card's `AUDIOROUTE_*` words on its own ports (the speaker, the mic, HDMI, a USB card's;
/// not its jacks', which take their jack device's): read once, for udev's classification and
/// for a UCM profile's ports alike, with the same notes for values that are not usable.
struct CardOverrides {
    var priority: Int?
    var name: String?
    var alsaPCM: ALSADevice?
    var exclusive = false

    /// No words: a profile's ports as they are.
    static let none = CardOverrides()

    private init() {}

    init(_ card: CardRecord, note: (ClassificationNote.Level, String, String) -> Void) {
        let props = card.properties
        if let raw = props[AudioRouteProperty.priority] {
            if let value = Int(raw.trimmingASCIIWhitespace()), (-100_000...100_000).contains(value) {
                priority = value
            } else {
                note(.warning, "bad-priority", "ignoring \(AudioRouteProperty.priority)=\(CardClassifier.quoted(raw)): not an integer")
            }
        }
        name = props[AudioRouteProperty.name].flatMap { CardClassifier.isUsableText($0) ? $0 : nil }
        if let raw = props[AudioRouteProperty.alsaPCM] {
            if CardClassifier.isUsableText(raw), let device = try? ALSADevice(parsing: raw) {
                alsaPCM = device
            } else {
                note(.warning, "bad-alsa", "ignoring \(AudioRouteProperty.alsaPCM)=\(CardClassifier.quoted(raw))")
            }
        }
        exclusive = CardClassifier.isExclusive(card)
        if !exclusive, let raw = props[AudioRouteProperty.alsaExclusive], raw.trimmingASCIIWhitespace() != "0" {
            note(.warning, "bad-exclusive", "ignoring \(AudioRouteProperty.alsaExclusive)=\(CardClassifier.quoted(raw)): not 1 or 0")
        }
    }

    /// A jack port takes its jack device's words: priority, name, and its own PCM (a headphone
    /// mixer path; the demo's file PCM per device).
    static func applyJack(_ jack: JackRecord, to port: inout Port, note: (ClassificationNote.Level, String, String) -> Void) {
        if let raw = jack.properties[AudioRouteProperty.priority], let value = Int(raw.trimmingASCIIWhitespace()) { port.priority = value }
        if let raw = jack.properties[AudioRouteProperty.name], CardClassifier.isUsableText(raw) { port.name = raw }
        if let raw = jack.properties[AudioRouteProperty.alsaPCM] {
            if CardClassifier.isUsableText(raw), let device = try? ALSADevice(parsing: raw) {
                port.alsa = device
            } else {
                note(.warning, "bad-alsa-jack", "ignoring \(AudioRouteProperty.alsaPCM)=\(CardClassifier.quoted(raw)) on jack \(CardClassifier.quoted(jack.name))")
            }
        }
    }
}
