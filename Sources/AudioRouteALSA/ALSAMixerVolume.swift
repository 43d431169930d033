// A route's volume and gain from its card's simple mixer: the element that carries the side's
// volume, read and set as a 0...1 value on the perceptual scale alsamixer shows (the cube root
// of the amplitude over the control's dB range; its raw steps where it has no dB scale).
// docs/decisions.md, "The session's hardware values".
import AudioRouteSystem
import CALSA

extension ALSASimpleMixer {
    /// Opens a simple mixer on control device `name` defined in `configuration` (the route
    /// file's own cards, a test's fake card), and loads its elements.
    public init(name: String, configuration: borrowing ALSAConfiguration) throws(ALSAError) {
        var ctl: OpaquePointer?
        try ALSAError.check(snd_ctl_open_lconf(&ctl, name, SND_CTL_NONBLOCK, configuration.handle), "snd_ctl_open \(name)")
        var hctl: OpaquePointer?
        do throws(ALSAError) {
            try ALSAError.check(snd_hctl_open_ctl(&hctl, ctl), "snd_hctl_open_ctl \(name)")
        } catch {
            snd_ctl_close(ctl)
            throw error
        }
        var mixer: OpaquePointer?
        do throws(ALSAError) {
            try ALSAError.check(snd_mixer_open(&mixer, 0), "snd_mixer_open")
            // The mixer owns the hctl once attached (snd_mixer_close closes it).
            let attached = snd_mixer_attach_hctl(mixer, hctl)
            if attached < 0 { snd_hctl_close(hctl) }
            try ALSAError.check(attached, "snd_mixer_attach_hctl \(name)")
            try ALSAError.check(snd_mixer_selem_register(mixer, nil, nil), "snd_mixer_selem_register \(name)")
            try ALSAError.check(snd_mixer_load(mixer), "snd_mixer_load \(name)")
        } catch {
            if let mixer { snd_mixer_close(mixer) } else { snd_hctl_close(hctl) }
            throw error
        }
        handle = mixer!
        self.name = name
    }

    /// The elements tried first for a side's volume, in order; then the first element with a
    /// volume for the direction, in the card's order.
    public static let playbackVolumeElements = ["Master", "PCM", "Speaker", "Headphone"]
    public static let captureVolumeElements = ["Capture", "Mic", "Internal Mic", "Headset Mic"]

    /// The element that carries the side's volume (see `playbackVolumeElements`), or nil when
    /// the card has none.
    public func volumeElement(capture: Bool) -> String? {
        for name in capture ? Self.captureVolumeElements : Self.playbackVolumeElements {
            if let elem = find(name), hasVolume(elem, capture: capture) { return name }
        }
        var elem = snd_mixer_first_elem(handle)
        while let current = elem {
            if snd_mixer_elem_get_type(current) == SND_MIXER_ELEM_SIMPLE, hasVolume(current, capture: capture) {
                let name = String(cString: snd_mixer_selem_get_name(current))
                let index = snd_mixer_selem_get_index(current)
                return index == 0 ? name : "\(name),\(index)"
            }
            elem = snd_mixer_elem_next(current)
        }
        return nil
    }

    /// The element's volume, 0...1 on the perceptual scale, from its first channel.
    public func volume(_ element: String, capture: Bool) throws(ALSAError) -> Float {
        let elem = try existing(element)
        guard hasVolume(elem, capture: capture) else { throw noVolume(element, capture: capture) }
        let channel = SND_MIXER_SCHN_FRONT_LEFT
        var minimum = 0, maximum = 0, value = 0
        var low = 0, high = 0, dB = 0
        if capture {
            try ALSAError.check(snd_mixer_selem_get_capture_volume_range(elem, &minimum, &maximum), "capture range of \"\(element)\" on \(name)")
            try ALSAError.check(snd_mixer_selem_get_capture_volume(elem, channel, &value), "capture volume of \"\(element)\" on \(name)")
            if snd_mixer_selem_get_capture_dB_range(elem, &low, &high) >= 0, snd_mixer_selem_get_capture_dB(elem, channel, &dB) >= 0,
                let normalized = Self.perceptual(dB: dB, low: low, high: high)
            {
                return normalized
            }
        } else {
            try ALSAError.check(snd_mixer_selem_get_playback_volume_range(elem, &minimum, &maximum), "playback range of \"\(element)\" on \(name)")
            try ALSAError.check(snd_mixer_selem_get_playback_volume(elem, channel, &value), "playback volume of \"\(element)\" on \(name)")
            if snd_mixer_selem_get_playback_dB_range(elem, &low, &high) >= 0, snd_mixer_selem_get_playback_dB(elem, channel, &dB) >= 0,
                let normalized = Self.perceptual(dB: dB, low: low, high: high)
            {
                return normalized
            }
        }
        guard maximum > minimum else { return 1 }
        return Float(value - minimum) / Float(maximum - minimum)
    }

    /// Sets every channel of the element's volume to `volume` (0...1, perceptual scale).
    public func setVolume(_ element: String, capture: Bool, to volume: Float) throws(ALSAError) {
        let elem = try existing(element)
        guard hasVolume(elem, capture: capture) else { throw noVolume(element, capture: capture) }
        let volume = Double(min(max(volume, 0), 1))
        var minimum = 0, maximum = 0, low = 0, high = 0
        if capture {
            if snd_mixer_selem_get_capture_dB_range(elem, &low, &high) >= 0, let dB = Self.dB(perceptual: volume, low: low, high: high) {
                try ALSAError.check(snd_mixer_selem_set_capture_dB_all(elem, dB, 1), "capture dB of \"\(element)\" on \(name)")
                return
            }
            try ALSAError.check(snd_mixer_selem_get_capture_volume_range(elem, &minimum, &maximum), "capture range of \"\(element)\" on \(name)")
            let raw = minimum + Int((Double(maximum - minimum) * volume).rounded())
            try ALSAError.check(snd_mixer_selem_set_capture_volume_all(elem, raw), "capture volume of \"\(element)\" on \(name)")
        } else {
            if snd_mixer_selem_get_playback_dB_range(elem, &low, &high) >= 0, let dB = Self.dB(perceptual: volume, low: low, high: high) {
                try ALSAError.check(snd_mixer_selem_set_playback_dB_all(elem, dB, 1), "playback dB of \"\(element)\" on \(name)")
                return
            }
            try ALSAError.check(snd_mixer_selem_get_playback_volume_range(elem, &minimum, &maximum), "playback range of \"\(element)\" on \(name)")
            let raw = minimum + Int((Double(maximum - minimum) * volume).rounded())
            try ALSAError.check(snd_mixer_selem_set_playback_volume_all(elem, raw), "playback volume of \"\(element)\" on \(name)")
        }
    }

    /// A dB value (hundredths of a dB) on a control's range as 0...1: the cube root of the
    /// amplitude relative to the top, stretched so that the bottom is 0. Nil for a range too
    /// small to be a volume (under 1 dB), where the raw steps are used.
    public static func perceptual(dB: Int, low: Int, high: Int) -> Float? {
        guard high - low >= 100 else { return nil }
        let value = Double(min(max(dB, low), high))
        let bottom = cubeRootAmplitude(Double(low - high))
        let level = cubeRootAmplitude(value - Double(high))
        return Float((level - bottom) / (1 - bottom))
    }

    /// The inverse of `perceptual`: the dB value (hundredths) for `volume`, nil where it is.
    public static func dB(perceptual volume: Double, low: Int, high: Int) -> Int? {
        guard high - low >= 100 else { return nil }
        let bottom = cubeRootAmplitude(Double(low - high))
        let level = bottom + volume * (1 - bottom)
        guard level > 0 else { return low }
        // level = 10^(dB / 6000): amplitude^(1/3) with dB in hundredths.
        let dB = audioroute_hundredths_of_cube_root_amplitude(level) + Double(high)
        return min(max(Int(dB.rounded()), low), high)
    }

    /// 10^(hundredths / 6000): the cube root of the amplitude of a gain in hundredths of a dB.
    private static func cubeRootAmplitude(_ hundredths: Double) -> Double { audioroute_cube_root_amplitude(hundredths) }

    private func find(_ element: String) -> OpaquePointer? {
        var id: OpaquePointer?
        guard snd_mixer_selem_id_malloc(&id) >= 0 else { return nil }
        defer { snd_mixer_selem_id_free(id) }
        let (elementName, index) = Self.split(element)
        snd_mixer_selem_id_set_name(id, elementName)
        snd_mixer_selem_id_set_index(id, index)
        return snd_mixer_find_selem(handle, id)
    }

    private func existing(_ element: String) throws(ALSAError) -> OpaquePointer {
        guard let elem = find(element) else {
            throw ALSAError(code: -Errno.Code.noSuchFileOrDirectory.rawValue, operation: "no mixer element \"\(element)\" on \(name)")
        }
        return elem
    }

    private func hasVolume(_ elem: OpaquePointer, capture: Bool) -> Bool {
        capture ? snd_mixer_selem_has_capture_volume(elem) != 0 : snd_mixer_selem_has_playback_volume(elem) != 0
    }

    private func noVolume(_ element: String, capture: Bool) -> ALSAError {
        ALSAError(code: -Errno.Code.invalidArgument.rawValue, operation: "mixer element \"\(element)\" on \(name) has no \(capture ? "capture" : "playback") volume")
    }
}
