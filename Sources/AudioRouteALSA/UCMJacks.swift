// A UCM card's jack controls through libasound's control API (snd_ctl_*): the boolean
// "… Jack" controls that the devices' JackControl values name, read by name, and their
// changes from the card's control events. The UCM helper (audioroute-ucm) already links
// libasound for UCM, so it reads them this way rather than through the ioctls that the
// daemon uses (AudioRouteSystem's ALSAControlDevice).
import AudioRouteSystem
import CALSA

/// A card's control device opened through libasound (snd_ctl_t), non-blocking, closed when
/// it goes away. Works with any control name: "hw:PinePhone", or a plugin's.
public struct ALSACardControl: ~Copyable {
    let handle: OpaquePointer
    /// The name it was opened with.
    public let name: String

    public init(name: String) throws(ALSAError) {
        var control: OpaquePointer?
        try ALSAError.check(snd_ctl_open(&control, name, SND_CTL_NONBLOCK), "snd_ctl_open \(name)")
        handle = control!
        self.name = name
    }

    deinit { snd_ctl_close(handle) }

    /// What the card says of itself (snd_ctl_card_info): what UCM's lookup matches.
    public func cardInfo() throws(ALSAError) -> (id: String, driver: String, name: String, longName: String, components: String) {
        var info: OpaquePointer?
        try ALSAError.check(snd_ctl_card_info_malloc(&info), "snd_ctl_card_info_malloc")
        defer { snd_ctl_card_info_free(info) }
        try ALSAError.check(snd_ctl_card_info(handle, info), "snd_ctl_card_info \(name)")
        func text(_ value: UnsafePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }
        return (
            text(snd_ctl_card_info_get_id(info)), text(snd_ctl_card_info_get_driver(info)), text(snd_ctl_card_info_get_name(info)),
            text(snd_ctl_card_info_get_longname(info)), text(snd_ctl_card_info_get_components(info))
        )
    }

    /// The first value of the boolean control `element` on the card interface (where
    /// drivers put jacks). Throws when there is no such control, or it is not boolean.
    public func boolean(_ element: String) throws(ALSAError) -> Bool {
        var info: OpaquePointer?
        var value: OpaquePointer?
        try ALSAError.check(snd_ctl_elem_info_malloc(&info), "snd_ctl_elem_info_malloc")
        defer { snd_ctl_elem_info_free(info) }
        try ALSAError.check(snd_ctl_elem_value_malloc(&value), "snd_ctl_elem_value_malloc")
        defer { snd_ctl_elem_value_free(value) }
        snd_ctl_elem_info_set_interface(info, SND_CTL_ELEM_IFACE_CARD)
        snd_ctl_elem_info_set_name(info, element)
        try ALSAError.check(snd_ctl_elem_info(handle, info), "snd_ctl_elem_info \"\(element)\" on \(name)")
        guard snd_ctl_elem_info_get_type(info) == SND_CTL_ELEM_TYPE_BOOLEAN else {
            throw ALSAError(code: -Errno.Code.invalidArgument.rawValue, operation: "\"\(element)\" on \(name) is not a boolean control")
        }
        snd_ctl_elem_value_set_interface(value, SND_CTL_ELEM_IFACE_CARD)
        snd_ctl_elem_value_set_name(value, element)
        try ALSAError.check(snd_ctl_elem_read(handle, value), "snd_ctl_elem_read \"\(element)\" on \(name)")
        return snd_ctl_elem_value_get_boolean(value, 0) != 0
    }

    /// Sets every channel of the boolean control `element` on or off: a UCM device's
    /// `PlaybackSwitch`, a mixer control's name (`Speaker Playback Switch`) or an element id as
    /// UCM writes them (`name='Speaker Switch'`, `iface=MIXER,name='…',index=1`).
    public func setBoolean(_ element: String, on: Bool) throws(ALSAError) {
        var id: OpaquePointer?
        var info: OpaquePointer?
        var value: OpaquePointer?
        try ALSAError.check(snd_ctl_elem_id_malloc(&id), "snd_ctl_elem_id_malloc")
        defer { snd_ctl_elem_id_free(id) }
        try ALSAError.check(snd_ctl_elem_info_malloc(&info), "snd_ctl_elem_info_malloc")
        defer { snd_ctl_elem_info_free(info) }
        try ALSAError.check(snd_ctl_elem_value_malloc(&value), "snd_ctl_elem_value_malloc")
        defer { snd_ctl_elem_value_free(value) }
        if element.contains("=") {
            try ALSAError.check(snd_ctl_ascii_elem_id_parse(id, element), "\"\(element)\" is no control id")
        } else {
            snd_ctl_elem_id_set_interface(id, SND_CTL_ELEM_IFACE_MIXER)
            snd_ctl_elem_id_set_name(id, element)
        }
        snd_ctl_elem_info_set_id(info, id)
        try ALSAError.check(snd_ctl_elem_info(handle, info), "snd_ctl_elem_info \"\(element)\" on \(name)")
        guard snd_ctl_elem_info_get_type(info) == SND_CTL_ELEM_TYPE_BOOLEAN else {
            throw ALSAError(code: -Errno.Code.invalidArgument.rawValue, operation: "\"\(element)\" on \(name) is not a boolean control")
        }
        snd_ctl_elem_value_set_id(value, id)
        for channel in 0..<snd_ctl_elem_info_get_count(info) { snd_ctl_elem_value_set_boolean(value, channel, on ? 1 : 0) }
        try ALSAError.check(snd_ctl_elem_write(handle, value), "snd_ctl_elem_write \"\(element)\" on \(name)")
    }

    /// snd_ctl_subscribe_events: from now on the control's changes are queued for
    /// `readEvents`, and its poll descriptors become readable.
    public func subscribe() throws(ALSAError) {
        try ALSAError.check(snd_ctl_subscribe_events(handle, 1), "snd_ctl_subscribe_events \(name)")
    }

    /// The descriptors to poll for events (snd_ctl_poll_descriptors).
    public func pollDescriptors() throws(ALSAError) -> [PollDescriptor] {
        var fds = [Int32](repeating: -1, count: 8)
        var events = [Int16](repeating: 0, count: 8)
        let count = try ALSAError.check(
            audioroute_ctl_poll_fds(handle, &fds, &events, 8), "snd_ctl_poll_descriptors \(name)")
        return (0..<Int(count)).map { PollDescriptor(fd: fds[$0], events: PollEvents(rawValue: events[$0])) }
    }

    /// One element event: its name and what changed.
    public struct Event: Sendable, Hashable {
        /// The element's name ("Headphone Jack").
        public var element: String
        /// SND_CTL_EVENT_MASK_* bits; all set when the element was removed.
        public var mask: UInt32
        /// Whether the value changed (SND_CTL_EVENT_MASK_VALUE, not a removal).
        public var valueChanged: Bool { mask != audioroute_ctl_event_mask_remove && mask & UInt32(SND_CTL_EVENT_MASK_VALUE) != 0 }
        /// Whether the element is gone.
        public var removed: Bool { mask == audioroute_ctl_event_mask_remove }
    }

    /// Every queued element event (snd_ctl_read until nothing is left), without blocking.
    public func readEvents() throws(ALSAError) -> [Event] {
        var event: OpaquePointer?
        try ALSAError.check(snd_ctl_event_malloc(&event), "snd_ctl_event_malloc")
        defer { snd_ctl_event_free(event) }
        var events: [Event] = []
        // Bounded: a card changing faster than this is read gives its events to the next round.
        for _ in 0..<256 {
            let result = snd_ctl_read(handle, event)
            if result == -Errno.Code.wouldBlock.rawValue || result == 0 { break }
            try ALSAError.check(result, "snd_ctl_read \(name)")
            guard snd_ctl_event_get_type(event) == SND_CTL_EVENT_ELEM else { continue }
            events.append(Event(element: String(cString: snd_ctl_event_elem_get_name(event)), mask: snd_ctl_event_elem_get_mask(event)))
        }
        return events
    }
}

/// The jack controls of one card and their last known values: read all at once, then
/// kept up to date from the control's events. A control that cannot be read is left
/// out until an event makes it readable.
public struct UCMJackMonitor: ~Copyable {
    public let control: ALSACardControl
    /// The jack controls watched, in the order given.
    public let jacks: [String]
    /// The last value read of each jack that could be read.
    public private(set) var values: [String: Bool] = [:]

    /// Opens `controlName` ("hw:PinePhone"), subscribes to its events, then reads every jack
    /// (subscribing first: a change in between is not lost). `failures` has the jacks that
    /// could not be read, with why.
    public init(controlName: String, jacks: [String]) throws(ALSAError) {
        let control = try ALSACardControl(name: controlName)
        try control.subscribe()
        self.control = control
        self.jacks = jacks
        _ = refresh(jacks)
    }

    /// The jacks that could not be read at the last attempt, with libasound's error.
    public private(set) var failures: [String: ALSAError] = [:]

    /// Reads the events queued on the control; the jacks whose value changed since it was
    /// last known, with their new values, in the order of `jacks`.
    public mutating func changes() throws(ALSAError) -> [(jack: String, plugged: Bool)] {
        let touched = Set(try control.readEvents().filter { $0.valueChanged || $0.removed }.map(\.element))
        return refresh(jacks.filter(touched.contains))
    }

    /// Re-reads `names`; those whose value is new.
    private mutating func refresh(_ names: [String]) -> [(jack: String, plugged: Bool)] {
        var changed: [(jack: String, plugged: Bool)] = []
        for jack in names {
            do throws(ALSAError) {
                let plugged = try control.boolean(jack)
                failures[jack] = nil
                if values.updateValue(plugged, forKey: jack) != plugged { changed.append((jack, plugged)) }
            } catch {
                failures[jack] = error
                values[jack] = nil
            }
        }
        return changed
    }
}
