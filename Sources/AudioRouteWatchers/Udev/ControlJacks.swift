import AudioRouteCore
import AudioRouteSystem

/// Jack state from a card's ALSA controls: the boolean `… Jack` elements that HDA, USB and
/// ASoC drivers create beside (or instead of) their evdev switch devices. What PipeWire and
/// PulseAudio read; openable by a desktop session without a udev rule (docs/ports.md).
/// Public for the readers of saved controls (an alsa-info.sh report's `alsactl store`).
public enum ControlJacks {
    /// The switches a jack control named `name` stands for, in the evdev path's terms;
    /// nil for anything that is not a jack this watcher makes ports from: not `… Jack`, a
    /// `… Phantom Jack` (always on: a fixed pin, never a headphone port), or a kind it does
    /// not know (`SPDIF Jack`, `Speaker Jack`).
    public static func switches(forName name: String) -> SwitchSet? {
        guard name.hasSuffix(" Jack") else { return nil }
        let base = name.dropLast(" Jack".count)
        let words = base.lowercased().split { !($0.isLetter || $0.isNumber) }
        guard !words.isEmpty, !words.contains("phantom") else { return nil }
        // HDMI/DP first: `HDMI/DP,pcm=3` holds neither `mic` nor `line`, but be sure.
        if base.contains(text: "HDMI") || base.contains(text: "DP,pcm=") || words.last == "dp" || words.contains("displayport") {
            return .videooutInsert
        }
        if words.contains("mic") || words.contains("microphone") { return .microphoneInsert }
        if words.contains(where: { $0 == "headphone" || $0 == "headphones" }) { return .headphoneInsert }
        // ASoC's one control for a headset's both pins.
        if words.contains("headset") { return [.headphoneInsert, .microphoneInsert] }
        if let line = words.firstIndex(of: "line") {
            let next = words.index(after: line)
            return next < words.endIndex && words[next] == "out" ? .lineoutInsert : .lineinInsert
        }
        if words.contains("lineout") { return .lineoutInsert }
        if words.contains("linein") { return .lineinInsert }
        return nil
    }

    /// Whether a control named `name` is a phantom jack: HDA's control for a pin that cannot sense
    /// a plug (a fixed speaker or microphone, or a jack without presence detection), always on.
    public static func isPhantom(_ name: String) -> Bool {
        name.hasSuffix(" Phantom Jack") && name.utf8.count <= 64
    }

    /// Whether an element is a jack control: boolean, on the card interface, and read-only
    /// as drivers make them. A user-space element (ELEM_ADD) may be writable: that is how a
    /// test bench drives a jack on a real card.
    public static func isJack(_ info: ALSAControlElementInfo) -> Bool {
        info.type == .boolean && info.id.interface == .card && info.access.contains(.read)
            && (!info.access.contains(.write) || info.access.contains(.user)) && info.count >= 1
            && switches(forName: info.id.name) != nil
    }

    /// The jack's name as the record shows it: the control's, with its index when not 0.
    public static func displayName(_ id: ALSAControlElementID) -> String {
        id.index == 0 ? id.name : "\(id.name),\(id.index)"
    }

    /// The name of the card's capture mute: the ADC's switch that PipeWire's and PulseAudio's
    /// mic mute turns off, and that HDA's mic-mute LED follows ("Mic Mute-LED Mode" only says
    /// what the LED follows, not whether the mic is muted).
    public static let captureSwitchName = "Capture Switch"

    /// Whether an element is the card's capture switch: boolean, readable, on the mixer
    /// interface, `Capture Switch` index 0.
    public static func isCaptureSwitch(_ info: ALSAControlElementInfo) -> Bool {
        info.type == .boolean && info.id.interface == .mixer && info.id.name == captureSwitchName && info.id.index == 0
            && info.access.contains(.read) && info.count >= 1
    }

    /// Whether an element is the mixer switch `name` that a UCM profile names as a mute
    /// (`CaptureSwitch`): boolean, readable, on the mixer interface, index 0.
    public static func isNamedSwitch(_ info: ALSAControlElementInfo, name: String) -> Bool {
        info.type == .boolean && info.id.interface == .mixer && info.id.name == name && info.id.index == 0
            && info.access.contains(.read) && info.count >= 1
    }

    /// The switches on, from the element's values: any value on means plugged.
    public static func state(_ values: [Bool], supported: SwitchSet) -> SwitchSet {
        values.contains(true) ? supported : []
    }
}

/// An open control device read for its jack elements.
final class ControlJackDevice {
    let device: ALSAControlDevice

    /// Opens the control node. It is looked at first: an absent node is the usual case in a
    /// umockdev testbed, and there a failed open of a /dev node leaks a socket in umockdev's
    /// preload (the daemon's plug storm aborted after about 50 plugs).
    init(path: String) throws(Errno) {
        guard try FileStatus(path: path).kind == .characterDevice else { throw Errno(.noSuchDevice, "open", path: path) }
        device = try ALSAControlDevice(path: path)
    }

    var fd: Int32 { device.fd }

    /// One jack element and what it stands for.
    struct Element {
        var id: ALSAControlElementID
        var supported: SwitchSet
        var count: Int
    }

    /// The card's capture switch element.
    struct CaptureSwitch {
        var numid: UInt32
        var count: Int
    }

    /// One ELEM_LIST: the jack elements (with their ELEM_INFO), the PCM devices the card's
    /// `ELD` controls name (one per HDMI/DP stream), ascending, the phantom jacks' names, and
    /// the capture switch.
    func elements() throws(Errno) -> (jacks: [Element], eldDevices: [Int], phantomJacks: [String], captureSwitch: CaptureSwitch?) {
        var jacks: [Element] = []
        var eld: Set<Int> = []
        var phantoms: [String] = []
        var capture: CaptureSwitch?
        for id in try device.elementIDs() {
            if id.interface == .card, ControlJacks.switches(forName: id.name) != nil, let element = element(numid: id.numid) {
                jacks.append(element)
            } else if id.interface == .pcm, id.name == "ELD" {
                eld.insert(Int(id.device))
            } else if id.interface == .card, ControlJacks.isPhantom(id.name), phantoms.count < 64 {
                phantoms.append(id.name)
            } else if id.interface == .mixer, id.name == ControlJacks.captureSwitchName, capture == nil,
                let info = try? device.info(numid: id.numid), ControlJacks.isCaptureSwitch(info)
            {
                capture = CaptureSwitch(numid: id.numid, count: Int(min(info.count, 128)))
            }
        }
        return (jacks, eld.sorted(), phantoms, capture)
    }

    /// The mixer switches named `names` (index 0) that the card has, by numid; the names it has
    /// not are returned apart.
    func namedSwitches(_ names: [String]) -> (found: [UInt32: (name: String, element: CaptureSwitch)], missing: [String]) {
        var found: [UInt32: (name: String, element: CaptureSwitch)] = [:]
        guard !names.isEmpty, let ids = try? device.elementIDs() else { return ([:], names) }
        var missing: [String] = []
        for name in names {
            guard let id = ids.first(where: { $0.interface == .mixer && $0.name == name && $0.index == 0 }),
                let info = try? device.info(numid: id.numid), ControlJacks.isNamedSwitch(info, name: name)
            else {
                missing.append(name)
                continue
            }
            found[id.numid] = (name, CaptureSwitch(numid: id.numid, count: Int(min(info.count, 128))))
        }
        return (found, missing)
    }

    /// Whether the capture switch is on (any channel); nil if it cannot be read.
    func isOn(_ capture: CaptureSwitch) -> Bool? {
        (try? device.booleanValues(numid: capture.numid, count: capture.count)).map { $0.contains(true) }
    }

    /// What the card says of itself (CARD_INFO), as the records hold it.
    func cardInfo() throws(Errno) -> ALSACardInfo {
        try device.cardInfo()
    }

    /// The id and name of every stream of every PCM device (PCM_NEXT_DEVICE, PCM_INFO).
    func pcmNames() throws(Errno) -> [PCMKey: (id: String, name: String)] {
        var names: [PCMKey: (id: String, name: String)] = [:]
        for number in try device.pcmDevices() {
            for playback in [true, false] {
                if let info = try device.pcmInfo(device: number, playback: playback) {
                    names[PCMKey(device: number, playback: playback)] = (info.id, info.name)
                }
            }
        }
        return names
    }

    /// The id and name of one stream, nil if it has none (or it cannot be read).
    func pcmName(device number: Int, playback: Bool) -> (id: String, name: String)? {
        (try? device.pcmInfo(device: number, playback: playback)).flatMap { $0 }.map { ($0.id, $0.name) }
    }

    /// The element `numid` if it is a jack control; nil if not, or gone.
    func element(numid: UInt32) -> Element? {
        guard let info = try? device.info(numid: numid), ControlJacks.isJack(info), let supported = ControlJacks.switches(forName: info.id.name) else { return nil }
        return Element(id: info.id, supported: supported, count: Int(min(info.count, 128)))
    }

    /// The switches on now; nil if the element cannot be read.
    func state(of element: Element) -> SwitchSet? {
        (try? device.booleanValues(numid: element.id.numid, count: element.count)).map { ControlJacks.state($0, supported: element.supported) }
    }

    func subscribe() throws(Errno) { try device.subscribe() }

    func read() -> ALSAControlDevice.ReadResult { device.readEvents() }
}
