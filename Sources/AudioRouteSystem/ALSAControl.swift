// ALSA control devices (/dev/snd/controlC<n>) through their ioctls: the elements, their
// values, and change events. No libasound: the daemon never loads it (docs/decisions.md).
import CLinux
import Glibc

extension Errno.Code {
    /// ENOTTY: the descriptor does not take this ioctl (not a control device behind the node).
    public static let inappropriateIoctl = Errno.Code(ENOTTY)
    /// ENXIO: no such device (a PCM device number the card does not have, or no longer has).
    public static let noSuchDeviceOrAddress = Errno.Code(ENXIO)
}

/// What CARD_INFO says of a card (`struct snd_ctl_card_info`; what `/proc/asound/cards` and
/// `amixer info` print): what ALSA UCM's top-level lookup matches (`${CardDriver}`,
/// `${CardName}`, `${CardLongName}`, `${CardComponents}`). A card record holds it.
public struct ALSACardInfo: Sendable, Hashable {
    /// The card's index (`card<n>`).
    public var card: Int32
    /// `PCH`, `sofsoundwire`, `Headphones`.
    public var id: String
    /// `HDA-Intel`, `USB-Audio`, `sof-soundwire`.
    public var driver: String
    /// `HDA Intel PCH`, `bcm2835 Headphones`.
    public var name: String
    /// `HDA Intel PCH at 0xf7f10000 irq 32`.
    public var longName: String
    /// `Realtek ALC289`.
    public var mixerName: String
    /// `HDA:10ec0289,10280990,00100004`, `cfg-spk:4 hs:rt711 spk:rt1308`.
    public var components: String

    public init(card: Int32 = 0, id: String = "", driver: String = "", name: String = "", longName: String = "", mixerName: String = "", components: String = "") {
        self.card = card
        self.id = id
        self.driver = driver
        self.name = name
        self.longName = longName
        self.mixerName = mixerName
        self.components = components
    }
}

/// What PCM_INFO says of one stream of a PCM device (`struct snd_pcm_info`; `aplay -l` prints
/// its id and name).
public struct ALSAPCMInfo: Sendable, Hashable {
    /// The PCM device number (the `N` of `pcmC0DNp`).
    public var device: UInt32
    /// Whether this is its playback stream (else capture).
    public var playback: Bool
    /// `ALC289 Analog`, `HDMI 0`, `Jack Out (*)`, `MAI PCM i2s-hifi-0`.
    public var id: String
    /// `ALC289 Analog`, `HDMI 0`, `bcm2835 Headphones`; empty on ASoC front ends.
    public var name: String
    /// SNDRV_PCM_CLASS_* (0 generic, 1 multi, 2 modem, 3 digitizer).
    public var pcmClass: Int32
    /// How many subdevices the stream has.
    public var subdevices: UInt32

    public init(device: UInt32, playback: Bool, id: String, name: String, pcmClass: Int32 = 0, subdevices: UInt32 = 1) {
        self.device = device
        self.playback = playback
        self.id = id
        self.name = name
        self.pcmClass = pcmClass
        self.subdevices = subdevices
    }
}

/// A fixed-size C character array as text: up to its first NUL, and never past its end (the
/// kernel terminates its strings, but a bound is cheaper than trust). Bytes that are not UTF-8
/// are repaired (U+FFFD), so a caller can tell.
func fixedString<T>(_ storage: T) -> String {
    withUnsafeBytes(of: storage) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
}

/// An element's identity (`struct snd_ctl_elem_id`).
public struct ALSAControlElementID: Sendable, Hashable, CustomStringConvertible {
    /// The kernel's number for the element on this card: stable while the element lives.
    public var numid: UInt32
    public var interface: Interface
    public var device: UInt32
    public var subdevice: UInt32
    /// `Headphone Jack`, `HDMI/DP,pcm=3 Jack`, `Master Playback Volume`.
    public var name: String
    /// Tells apart elements of one name (a second `Headphone Jack` is index 1).
    public var index: UInt32

    /// SNDRV_CTL_ELEM_IFACE_*.
    public struct Interface: RawRepresentable, Sendable, Hashable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// Global controls: jacks are here.
        public static let card = Interface(rawValue: clinux_ctl_elem_iface_card)
        public static let mixer = Interface(rawValue: clinux_ctl_elem_iface_mixer)
        /// Controls of one PCM device (`ELD`, `Playback Channel Map`): `device` says which.
        public static let pcm = Interface(rawValue: clinux_ctl_elem_iface_pcm)
    }

    public init(numid: UInt32, interface: Interface = .card, device: UInt32 = 0, subdevice: UInt32 = 0, name: String, index: UInt32 = 0) {
        self.numid = numid
        self.interface = interface
        self.device = device
        self.subdevice = subdevice
        self.name = name
        self.index = index
    }

    init(_ id: snd_ctl_elem_id) {
        numid = id.numid
        interface = Interface(rawValue: id.iface)
        device = id.device
        subdevice = id.subdevice
        // NUL-terminated within its 44 bytes; not trusted to be terminated.
        name = withUnsafeBytes(of: id.name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        index = id.index
    }

    /// The kernel's struct, by numid alone (what ELEM_INFO and ELEM_READ need).
    static func kernelID(numid: UInt32) -> snd_ctl_elem_id {
        var id = snd_ctl_elem_id()
        id.numid = numid
        return id
    }

    public var description: String { index == 0 ? "\"\(name)\"" : "\"\(name)\",\(index)" }
}

/// What ELEM_INFO says of an element.
public struct ALSAControlElementInfo: Sendable, Hashable {
    public var id: ALSAControlElementID
    public var type: ElementType
    public var access: Access
    /// How many values the element has (a stereo switch has 2).
    public var count: UInt32

    /// SNDRV_CTL_ELEM_TYPE_*.
    public struct ElementType: RawRepresentable, Sendable, Hashable {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let boolean = ElementType(rawValue: clinux_ctl_elem_type_boolean)
    }

    /// SNDRV_CTL_ELEM_ACCESS_*.
    public struct Access: OptionSet, Sendable, Hashable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let read = Access(rawValue: UInt32(SNDRV_CTL_ELEM_ACCESS_READ))
        public static let write = Access(rawValue: UInt32(SNDRV_CTL_ELEM_ACCESS_WRITE))
        public static let inactive = Access(rawValue: UInt32(SNDRV_CTL_ELEM_ACCESS_INACTIVE))
        /// Added from user space (SNDRV_CTL_IOCTL_ELEM_ADD), not by a driver.
        public static let user = Access(rawValue: UInt32(SNDRV_CTL_ELEM_ACCESS_USER))
    }

    public init(id: ALSAControlElementID, type: ElementType, access: Access, count: UInt32) {
        self.id = id
        self.type = type
        self.access = access
        self.count = count
    }
}

/// One `struct snd_ctl_event`: an element changed.
public struct ALSAControlEvent: Sendable, Hashable {
    public var mask: Mask
    public var id: ALSAControlElementID

    /// SNDRV_CTL_EVENT_MASK_*. Removal is all bits set, not one bit: test it with ``isRemoval``.
    public struct Mask: OptionSet, Sendable, Hashable {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let value = Mask(rawValue: UInt32(SNDRV_CTL_EVENT_MASK_VALUE))
        public static let info = Mask(rawValue: UInt32(SNDRV_CTL_EVENT_MASK_INFO))
        public static let add = Mask(rawValue: UInt32(SNDRV_CTL_EVENT_MASK_ADD))
        public static let tlv = Mask(rawValue: UInt32(SNDRV_CTL_EVENT_MASK_TLV))
        public var isRemoval: Bool { rawValue == UInt32.max }
    }

    public init(mask: Mask, id: ALSAControlElementID) {
        self.mask = mask
        self.id = id
    }
}

/// An open control device. Read-only is enough to list, read and subscribe, and a desktop
/// session may open it without a udev rule (the node carries the `uaccess` tag).
public struct ALSAControlDevice: ~Copyable, Sendable {
    public let descriptor: FileDescriptor

    /// Opens `path` (`/dev/snd/controlC0`) without blocking; `writable` to add or set elements.
    public init(path: String, writable: Bool = false) throws(Errno) {
        descriptor = try FileDescriptor.open(path, writable ? [.readWrite, .nonBlocking] : [.readOnly, .nonBlocking])
    }

    public var fd: Int32 { descriptor.rawValue }

    /// ioctl, retried on EINTR.
    private func control(_ operation: StaticString, _ call: () -> Int32) throws(Errno) {
        while call() < 0 {
            if Errno.Code.current == .interrupted { continue }
            throw Errno(.current, "\(operation)")
        }
    }

    /// SNDRV_CTL_IOCTL_PVERSION: the control protocol's version (`0x0002000a`: 2.0.10).
    public func protocolVersion() throws(Errno) -> Int32 {
        var version: Int32 = 0
        try control("SNDRV_CTL_IOCTL_PVERSION") { clinux_ctl_pversion(fd, &version) }
        return version
    }

    /// SNDRV_CTL_IOCTL_CARD_INFO: what the card says of itself.
    public func cardInfo() throws(Errno) -> ALSACardInfo {
        var info = snd_ctl_card_info()
        try control("SNDRV_CTL_IOCTL_CARD_INFO") { clinux_ctl_card_info(fd, &info) }
        return ALSACardInfo(
            card: info.card, id: fixedString(info.id), driver: fixedString(info.driver), name: fixedString(info.name),
            longName: fixedString(info.longname), mixerName: fixedString(info.mixername), components: fixedString(info.components))
    }

    /// The most PCM devices one card is believed to have: SOF topologies number up to about
    /// 100, HDA up to 32. More answers than this are not a kernel's.
    public static let maxPCMDevices = 256

    /// SNDRV_CTL_IOCTL_PCM_NEXT_DEVICE from the start: the card's PCM device numbers, ascending.
    /// A kernel answers each call with a larger number, or -1 at the end; an answer that does
    /// not grow, or more than ``maxPCMDevices`` of them, is refused (EBADMSG) rather than looped on.
    public func pcmDevices() throws(Errno) -> [Int] {
        var devices: [Int] = []
        var device: Int32 = -1
        while true {
            let previous = device
            try control("SNDRV_CTL_IOCTL_PCM_NEXT_DEVICE") { clinux_ctl_pcm_next_device(fd, &device) }
            if device < 0 { return devices }
            guard device > previous, devices.count < Self.maxPCMDevices else { throw Errno(.badMessage, "SNDRV_CTL_IOCTL_PCM_NEXT_DEVICE") }
            devices.append(Int(device))
        }
    }

    /// SNDRV_CTL_IOCTL_PCM_INFO of subdevice 0 of one stream of PCM `device`; nil when the device
    /// has no such stream (ENOENT) or no longer exists (ENXIO).
    public func pcmInfo(device: Int, playback: Bool) throws(Errno) -> ALSAPCMInfo? {
        guard let number = UInt32(exactly: device) else { throw Errno(.invalidArgument, "SNDRV_CTL_IOCTL_PCM_INFO") }
        var info = snd_pcm_info()
        info.device = number
        info.subdevice = 0
        info.stream = playback ? clinux_pcm_stream_playback : clinux_pcm_stream_capture
        do {
            try control("SNDRV_CTL_IOCTL_PCM_INFO") { clinux_ctl_pcm_info(fd, &info) }
        } catch {
            if error.code == .noSuchFileOrDirectory || error.code == .noSuchDeviceOrAddress { return nil }
            throw error
        }
        return ALSAPCMInfo(
            device: number, playback: playback, id: fixedString(info.id), name: fixedString(info.name), pcmClass: info.dev_class,
            subdevices: info.subdevices_count)
    }

    /// SNDRV_CTL_IOCTL_ELEM_LIST: every element's id. Asks for the count, then the ids; if
    /// elements were added in between, asks again (bounded).
    public func elementIDs() throws(Errno) -> [ALSAControlElementID] {
        for _ in 0..<4 {
            var list = snd_ctl_elem_list()
            try control("SNDRV_CTL_IOCTL_ELEM_LIST") { clinux_ctl_elem_list(fd, &list) }
            let count = Int(list.count)
            // A card has tens to a few thousand elements; more is not a kernel answer.
            guard count <= 65536 else { throw Errno(.badMessage, "SNDRV_CTL_IOCTL_ELEM_LIST") }
            if count == 0 { return [] }
            var ids = [snd_ctl_elem_id](repeating: snd_ctl_elem_id(), count: count)
            var used = 0
            var total = 0
            var failure: Errno?
            ids.withUnsafeMutableBufferPointer { buffer in
                var request = snd_ctl_elem_list()
                request.space = UInt32(count)
                request.pids = buffer.baseAddress
                do throws(Errno) {
                    try control("SNDRV_CTL_IOCTL_ELEM_LIST") { clinux_ctl_elem_list(fd, &request) }
                } catch {
                    failure = error
                }
                used = Int(request.used)
                total = Int(request.count)
            }
            if let failure { throw failure }
            guard used <= count else { throw Errno(.badMessage, "SNDRV_CTL_IOCTL_ELEM_LIST") }
            if total > count { continue }  // grew in between: ask again
            return ids[..<used].map(ALSAControlElementID.init)
        }
        throw Errno(.wouldBlock, "SNDRV_CTL_IOCTL_ELEM_LIST")
    }

    /// SNDRV_CTL_IOCTL_ELEM_INFO for the element `numid`.
    public func info(numid: UInt32) throws(Errno) -> ALSAControlElementInfo {
        var info = snd_ctl_elem_info()
        info.id = ALSAControlElementID.kernelID(numid: numid)
        try control("SNDRV_CTL_IOCTL_ELEM_INFO") { clinux_ctl_elem_info(fd, &info) }
        return ALSAControlElementInfo(
            id: ALSAControlElementID(info.id), type: .init(rawValue: info.type), access: .init(rawValue: info.access), count: info.count)
    }

    /// SNDRV_CTL_IOCTL_ELEM_READ of a boolean (or integer) element: its first `count` values
    /// (at most 128, what the kernel's struct holds), nonzero as true.
    public func booleanValues(numid: UInt32, count: Int) throws(Errno) -> [Bool] {
        var value = snd_ctl_elem_value()
        value.id = ALSAControlElementID.kernelID(numid: numid)
        try control("SNDRV_CTL_IOCTL_ELEM_READ") { clinux_ctl_elem_read(fd, &value) }
        return withUnsafeBytes(of: value.value.integer.value) { raw in
            let values = raw.bindMemory(to: Int.self)
            return values.prefix(max(0, min(count, values.count))).map { $0 != 0 }
        }
    }

    /// SNDRV_CTL_IOCTL_SUBSCRIBE_EVENTS: from now on every element change queues an event
    /// for ``readEvents(maxCount:)`` and makes the descriptor readable.
    public func subscribe(_ on: Bool = true) throws(Errno) {
        try control("SNDRV_CTL_IOCTL_SUBSCRIBE_EVENTS") { clinux_ctl_subscribe_events(fd, on ? 1 : 0) }
    }

    /// SNDRV_CTL_IOCTL_ELEM_ADD: a user-space boolean element of `count` values on the
    /// card interface, readable (and writable when `writable`). Needs a writable descriptor.
    /// Returns its numid.
    public func addBoolean(name: String, index: UInt32 = 0, count: UInt32 = 1, writable: Bool = true) throws(Errno) -> UInt32 {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count < Int(SNDRV_CTL_ELEM_ID_NAME_MAXLEN) else { throw Errno(.invalidArgument, "SNDRV_CTL_IOCTL_ELEM_ADD") }
        var info = snd_ctl_elem_info()
        info.id.iface = clinux_ctl_elem_iface_card
        info.id.index = index
        withUnsafeMutableBytes(of: &info.id.name) { raw in raw.copyBytes(from: bytes) }
        info.type = clinux_ctl_elem_type_boolean
        info.access = UInt32(SNDRV_CTL_ELEM_ACCESS_READ) | (writable ? UInt32(SNDRV_CTL_ELEM_ACCESS_WRITE) : 0)
        info.count = count
        info.value.integer.min = 0
        info.value.integer.max = 1
        info.value.integer.step = 1
        try control("SNDRV_CTL_IOCTL_ELEM_ADD") { clinux_ctl_elem_add(fd, &info) }
        return info.id.numid
    }

    /// SNDRV_CTL_IOCTL_ELEM_REMOVE of a user-space element. Needs a writable descriptor.
    public func removeElement(numid: UInt32) throws(Errno) {
        var id = ALSAControlElementID.kernelID(numid: numid)
        try control("SNDRV_CTL_IOCTL_ELEM_REMOVE") { clinux_ctl_elem_remove(fd, &id) }
    }

    /// SNDRV_CTL_IOCTL_ELEM_WRITE of a boolean element's values. Needs a writable descriptor.
    public func setBoolean(numid: UInt32, _ values: [Bool]) throws(Errno) {
        var value = snd_ctl_elem_value()
        value.id = ALSAControlElementID.kernelID(numid: numid)
        withUnsafeMutableBytes(of: &value.value.integer.value) { raw in
            let slots = raw.bindMemory(to: Int.self)
            for (index, on) in values.prefix(slots.count).enumerated() { slots[index] = on ? 1 : 0 }
        }
        try control("SNDRV_CTL_IOCTL_ELEM_WRITE") { clinux_ctl_elem_write(fd, &value) }
    }

    /// What one read gives.
    public enum ReadResult: Sendable {
        case events([ALSAControlEvent])
        /// Nothing more to read now.
        case drained
        /// The card is gone (ENODEV), the end of the file (nil), or another error.
        case gone(Errno?)
    }

    /// Reads up to `maxCount` queued events, without blocking. The kernel returns whole
    /// events only; a short tail (never seen) is dropped rather than decoded.
    public func readEvents(maxCount: Int = 32) -> ReadResult {
        let stride = MemoryLayout<snd_ctl_event>.stride
        return withUnsafeTemporaryAllocation(of: snd_ctl_event.self, capacity: maxCount) { buffer in
            let count = Glibc.read(fd, buffer.baseAddress, maxCount * stride)
            if count < 0 {
                let code = Errno.Code.current
                if code == .wouldBlock || code == .interrupted { return .drained }
                return .gone(Errno(code, "read"))
            }
            if count == 0 { return .gone(nil) }
            var events: [ALSAControlEvent] = []
            for index in 0..<min(count / stride, maxCount) where buffer[index].type == Int32(SNDRV_CTL_EVENT_ELEM.rawValue) {
                let elem = buffer[index].data.elem
                events.append(ALSAControlEvent(mask: .init(rawValue: elem.mask), id: ALSAControlElementID(elem.id)))
            }
            return .events(events)
        }
    }
}
