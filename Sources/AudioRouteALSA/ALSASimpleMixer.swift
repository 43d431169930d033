// A card's simple mixer (snd_mixer_selem_*): the elements a UCM device names in
// PlaybackMixerElem / PlaybackMasterElem ("Speaker", "Headphone", "Master"), whose
// controls libasound groups by its naming rules ("Speaker Playback Switch",
// "Speaker Switch"...). The UCM helper turns their switches on as a sound server would;
// libasound's grouping is used rather than guessing the controls' names.
import AudioRouteSystem
import CALSA

/// A simple mixer attached to one control device, loaded, closed when it goes away.
public struct ALSASimpleMixer: ~Copyable {
    let handle: OpaquePointer
    /// The control device it was attached to.
    public let name: String

    /// Opens a simple mixer on control device `name` (`hw:0`, a helper's `_ucm0001.hw:0`) and
    /// loads its elements. Throws libasound's error, naming the step.
    public init(name: String) throws(ALSAError) {
        var mixer: OpaquePointer?
        try ALSAError.check(snd_mixer_open(&mixer, 0), "snd_mixer_open")
        do throws(ALSAError) {
            try ALSAError.check(snd_mixer_attach(mixer, name), "snd_mixer_attach \(name)")
            try ALSAError.check(snd_mixer_selem_register(mixer, nil, nil), "snd_mixer_selem_register \(name)")
            try ALSAError.check(snd_mixer_load(mixer), "snd_mixer_load \(name)")
        } catch {
            snd_mixer_close(mixer)
            throw error
        }
        handle = mixer!
        self.name = name
    }

    deinit { snd_mixer_close(handle) }

    /// Which switches `switchOn` found and set.
    public enum Switched: Equatable, Sendable {
        /// The element has a switch for the direction and it is now on.
        case on
        /// The element has no switch for the direction (a volume only): nothing to do.
        case noSwitch
    }

    /// Turns every channel of the element's playback (or capture) switch on. `element` is a
    /// simple element's name as UCM gives it, with an optional index (`"Speaker"`,
    /// `"Headphone,1"`). Throws when the card has no such element.
    @discardableResult
    public func switchOn(_ element: String, capture: Bool) throws(ALSAError) -> Switched {
        var id: OpaquePointer?
        try ALSAError.check(snd_mixer_selem_id_malloc(&id), "snd_mixer_selem_id_malloc")
        defer { snd_mixer_selem_id_free(id) }
        let (elementName, index) = Self.split(element)
        snd_mixer_selem_id_set_name(id, elementName)
        snd_mixer_selem_id_set_index(id, index)
        guard let elem = snd_mixer_find_selem(handle, id) else {
            throw ALSAError(code: -Errno.Code.noSuchFileOrDirectory.rawValue, operation: "no mixer element \"\(element)\" on \(name)")
        }
        if capture {
            guard snd_mixer_selem_has_capture_switch(elem) != 0 else { return .noSwitch }
            try ALSAError.check(snd_mixer_selem_set_capture_switch_all(elem, 1), "capture switch of \"\(element)\" on \(name)")
        } else {
            guard snd_mixer_selem_has_playback_switch(elem) != 0 else { return .noSwitch }
            try ALSAError.check(snd_mixer_selem_set_playback_switch_all(elem, 1), "playback switch of \"\(element)\" on \(name)")
        }
        return .on
    }

    /// "Headphone,1" → ("Headphone", 1); a name without a numeric suffix is index 0.
    static func split(_ element: String) -> (String, UInt32) {
        if let comma = element.lastIndex(of: ","), let index = UInt32(element[element.index(after: comma)...].trimmingSpaces()) {
            return (String(element[..<comma]), index)
        }
        return (element, 0)
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
