// What a card says of its PCMs: the words in each PCM's id and name (`aplay -l`), read through
// the control device. Pure; the rules that use them are in CardClassifier (docs/ports.md,
// "What the card says").

/// What a PCM's id or name says it is for.
public enum PCMRole: String, Sendable, Hashable {
    /// HDMI or DisplayPort: `HDMI 0`, `HDMI1 (*)`, `DP`, or an HDMI transmitter's DAI on an ASoC
    /// link (`MAI PCM i2s-hifi-0`: hdmi-codec's and tda998x's DAIs are `i2s-hifi` and `spdif-hifi`).
    case display
    /// Built-in speakers: `Speaker (*)`, `Speakers (*)`, `SDW1-speakers (*)`, `smart373-spk (*)`,
    /// and a link to a Cirrus CS35Lxx speaker amplifier (`CS35L41 Stereo Playback multicodec-1`).
    case speaker
    /// A jack: `Jack Out (*)`, `Jack In (*)`, `Headphone (*)`, `Headphones (*)`, `Headset (*)`,
    /// `bcm2835 Headphones`.
    case jack
    /// Built-in microphones (capture): `DMIC (*)`, `DMIC16kHz (*)`, `DMIC Raw`, `Microphone (*)`.
    case builtInMic
    /// A second way into another PCM's path, with a larger buffer: `Deepbuffer Jack Out (*)`,
    /// `HDA Analog Deep Buffer (*)`. Never a port of its own.
    case deepBuffer
    /// A capture of what the card plays (for echo cancellation), not a microphone: `EchoRef (*)`,
    /// `Echo Reference`, `Amp feedback`.
    case echoReference
    /// A digital output or input other than HDMI (S/PDIF: `ALC1220 Digital`, `HDA Digital (*)`,
    /// `IEC958`, `S/PDIF PCM snd-soc-dummy-dai-0`): never the speaker or the built-in mic, and no
    /// port of its own.
    case digital
    /// An ASoC link to no codec (`snd-soc-dummy-dai`): an I2S or PCM bus wired to a header, to
    /// whatever the user connected.
    case noCodec
}

/// What a PCM's words say, and which words (for the decision's signal).
public struct PCMNaming: Sendable, Hashable {
    public var role: PCMRole
    /// `PCM 2 id "Speaker (*)"`.
    public var signal: String
}

enum PCMNames {
    /// The role of `pcm` by its id (then its name), or nil when its words say nothing this
    /// watcher uses (`HDA Analog`, `ALC289 Analog`, `USB Audio`, `fe.dai-link-0 (*)`).
    static func naming(_ pcm: PCMDevice) -> PCMNaming? {
        for (label, text) in [("id", pcm.id), ("name", pcm.name)] {
            guard let text, !text.isEmpty, let role = role(of: text, playback: pcm.playback) else { continue }
            return PCMNaming(role: role, signal: "PCM \(pcm.device)\(pcm.playback ? "p" : "c") \(label) \(CardClassifier.quoted(text))")
        }
        return nil
    }

    /// Lower-case words of letters and digits (`SDW1-speakers (*)` → `sdw1`, `speakers`).
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    /// The role the words of one PCM id or name say, in order of how specific they are: a
    /// deep-buffer or echo-reference stream first (`Deepbuffer Jack Out` is not the jack's own
    /// PCM), then display, a DMIC (a PDM microphone interface has no codec either: `x2600 DMIC
    /// snd-soc-dummy-dai-0`), digital (an S/PDIF transmitter neither: `S/PDIF PCM
    /// snd-soc-dummy-dai-0`), no codec, speaker, jack, built-in microphone.
    static func role(of text: String, playback: Bool) -> PCMRole? {
        let words = words(text)
        func adjacent(_ first: String, _ second: String) -> Bool {
            zip(words, words.dropFirst()).contains { $0 == first && $1 == second }
        }
        if words.contains("deepbuffer") || adjacent("deep", "buffer") { return .deepBuffer }
        if !playback, words.contains("echoref") || adjacent("echo", "ref") || adjacent("echo", "reference") || adjacent("amp", "feedback") {
            return .echoReference
        }
        let displayPortWord = words.contains { $0 == "dp" || $0 == "displayport" || ($0.hasPrefix("dp") && $0.count > 2 && $0.dropFirst(2).allSatisfy(\.isNumber)) }
        if words.contains(where: { $0.hasPrefix("hdmi") }) || displayPortWord
            || adjacent("i2s", "hifi") || adjacent("spdif", "hifi")
        {
            return .display
        }
        if !playback, words.contains(where: { $0.hasPrefix("dmic") }) { return .builtInMic }
        // Before "no codec": an S/PDIF transmitter's link has the dummy codec too (imx-spdif).
        if words.contains("digital") || words.contains("iec958") || words.contains("spdif") || adjacent("s", "pdif") { return .digital }
        if adjacent("dummy", "dai") { return .noCodec }
        // Cirrus Logic's CS35Lxx parts are all speaker amplifiers (the Steam Deck's CS35L41 pair).
        if playback, words.contains(where: { $0 == "speaker" || $0 == "speakers" || $0 == "spk" || $0.hasPrefix("cs35l") }) { return .speaker }
        if words.contains(where: { $0 == "headphone" || $0 == "headphones" || $0 == "headset" }) || adjacent("jack", "out") || adjacent("jack", "in") {
            return .jack
        }
        if !playback, words.contains(where: { $0 == "microphone" || $0 == "microphones" || $0 == "mic" }) {
            return .builtInMic
        }
        return nil
    }
}
