import AudioRouteSystem
import CUdev

/// Reads sound cards and jacks from libudev, evdev and the cards' ALSA jack controls and
/// turns them into `HardwareEvent` snapshots.
///
/// Event-driven only: after enumeration its sources (the netlink monitor, each jack
/// device and each card's control device) are read by a ``PollLoop`` (the daemon's executor, or a thread of the watcher's
/// own), which sleeps with no timeout. Confined to that loop's thread: created, used and
/// released there, so it owns its handles without a lock (hence `@unchecked Sendable`,
/// for the loop's handlers that hold it).
final class UdevEventLoop: @unchecked Sendable {
    let context: UdevContext
    private let monitor: UdevMonitor?
    /// When full, no more is read until the consumer catches up (see `Backlog`).
    private let backlog: Backlog?
    private let emit: (HardwareEvent) -> Void
    /// The loop reading the sources, from ``attach(to:)`` to ``detach()``.
    private var loop: (any PollLoop)?
    private var monitorSource: UInt64?

    private struct OpenJack {
        let device: EvdevSwitchDevice
        /// Tells this opening from a later one of the same syspath, for a handler called late.
        let token: UInt64
        var source: UInt64?
        let cardSyspath: String
        let supported: SwitchSet
        /// Switch state as of the last SYN_REPORT, and as built from events since.
        var state: SwitchSet
        var pending: SwitchSet
    }

    private var jacks: [String: OpenJack] = [:]

    /// A card's control device, read for its `… Jack` elements (a second jack source).
    private struct OpenControl {
        let device: ControlJackDevice
        let token: UInt64
        var source: UInt64?
        let cardSyspath: String
        /// Its jack elements by numid, with the state last reported.
        var elements: [UInt32: (element: ControlJackDevice.Element, state: SwitchSet)]
        /// Its capture switch, if it has one.
        var captureSwitch: ControlJackDevice.CaptureSwitch?
        /// The switches followed by name (`follow(_:card:)`), by numid.
        var named: [UInt32: (name: String, element: ControlJackDevice.CaptureSwitch)] = [:]
    }

    /// By the control device's syspath.
    private var controls: [String: OpenControl] = [:]
    /// Control devices that could not be opened or listed: not tried again on every event of
    /// their card (a static record has none), only once seen again (add, resync).
    private var unreadableControls: Set<String> = []
    /// Jacks known from udev alone (their device could not be read): no fd, state unknown.
    private var unreadableJacks: Set<String> = []
    private var nextToken: UInt64 = 0
    /// Devices whose `remove` was seen: under umockdev the sysfs directory can
    /// outlive the event briefly, so snapshots must not count them.
    private var removed: Set<String> = []

    /// Everything known about a card, kept from its events. Snapshots are built
    /// from this, not from sysfs: a watcher that lags behind a storm of events
    /// would otherwise read a later state of sysfs and miss whole plug/unplug
    /// cycles. sysfs is read only to bootstrap a card first met mid-life
    /// (enumeration, or an event for a card whose `add` came before the watcher).
    private struct CardCache {
        var sysname: String
        var properties: [String: String]
        var faults: [String]
        var attributes: [String: String]
        var attributeFaults: Set<String> = []
        /// Syspaths of its PCM and control children.
        var children: Set<String>
        var parent: CardParent
        /// PCM children's `pcm_class` and `id` attributes, by syspath (read once, when the child appears).
        var pcmAttributes: [String: (pcmClass: String?, id: String?)] = [:]
        /// What the card's control device says of the card, of each PCM stream and of its HDMI/DP
        /// streams (`ELD` controls): read when the control device is opened, nil / empty when it
        /// cannot be.
        var info: ALSACardInfo?
        var pcmNames: [PCMKey: (id: String, name: String)] = [:]
        var eldDevices: [Int] = []
        var phantomJacks: [String] = []
        /// Its HDA codecs' pins (/proc/asound/card<n>/codec#<m>), read once per card instance.
        var hdaPins: [HDAPin] = []
        /// A USB card's widest playback format per PCM device (/proc/asound/card<n>/stream<m>),
        /// read with the pins.
        var usbPlayback: [Int: USBPlaybackFormat] = [:]
        var pinsRead = false
        /// Its capture switch, on or off, as last read (nil: none, or not read).
        var captureSwitch: Bool?
        /// The mixer switches to follow by name (a UCM profile's mute controls), and their
        /// values as last read.
        var followed: [String] = []
        var namedSwitches: [String: Bool] = [:]
    }
    private var cardCache: [String: CardCache] = [:]

    /// Where the cards' codec files are (`/proc/asound`; umockdev redirects it to a testbed's).
    private let procRoot: String

    /// - Parameter monitoring: false for a one-shot enumeration (no monitor).
    init(monitoring: Bool, backlog: Backlog? = nil, procRoot: String = "/proc/asound", emit: @escaping (HardwareEvent) -> Void) throws(Errno) {
        context = try UdevContext()
        self.procRoot = procRoot
        self.emit = emit
        self.backlog = backlog
        // The monitor is enabled before enumerating, so nothing that happens in between is
        // lost (duplicates are harmless: the state diffs).
        monitor = monitoring ? try UdevMonitor(context, subsystems: ["sound", "input"]) : nil
    }

    // MARK: Enumeration

    /// Reports every jack switch device and every card present now, then `.enumerated`.
    func enumerate() {
        // Jacks first: a card's first classification then already includes them.
        let (jackRecords, cardRecords) = readPresent()
        for jack in jackRecords { emit(.jack(jack)) }
        for card in cardRecords { emit(.card(card)) }
        emit(.enumerated)
    }

    /// Opens every jack switch device and reads every card present now (the jacks must
    /// all be closed).
    private func readPresent() -> (jacks: [JackRecord], cards: [CardRecord]) {
        var jackRecords: [JackRecord] = []
        var cardRecords: [CardRecord] = []
        if let inputs = try? UdevEnumerator(context) {
            inputs.match(subsystem: "input")
            inputs.match(sysname: "event*")
            for path in inputs.syspaths() {
                guard let device = context.device(syspath: path), let jack = open(jack: device) else { continue }
                jackRecords.append(jack)
            }
        }
        if let cards = try? UdevEnumerator(context) {
            cards.match(subsystem: "sound")
            cards.match(sysname: "card*")
            for path in cards.syspaths() {
                guard let device = context.device(syspath: path), Self.isCardName(device.sysname) else { continue }
                cardCache[path] = bootstrap(device)
                // The control device first: what it says of the card is part of its record.
                jackRecords += openControl(of: path)
                if let cache = cardCache[path] { cardRecords.append(record(path, cache)) }
            }
        }
        return (jackRecords, cardRecords)
    }

    /// After an overflow of the monitor's buffer (uevents lost): drops what is still queued
    /// (older than what sysfs shows now), forgets what the events had built, and reports
    /// every card and jack present as one `.resynced`. Jacks are reopened: a lost remove
    /// and add may have put another device behind the same syspath.
    private func resync() {
        monitor?.discardQueued()
        for syspath in Array(jacks.keys) { close(jack: syspath, announce: false) }
        for syspath in Array(controls.keys) { close(control: syspath, announce: false) }
        unreadableControls = []
        unreadableJacks = []
        removed = []
        cardCache = [:]
        let (jackRecords, cardRecords) = readPresent()
        emit(.resynced(cards: cardRecords, jacks: jackRecords))
    }

    // MARK: The loop

    /// Reads the monitor and the jacks on `loop` from now on, until ``detach()``. Call it on
    /// the loop's thread, after ``enumerate()``.
    func attach(to loop: any PollLoop) {
        guard let monitor else { return }
        self.loop = loop
        monitorSource = loop.watch(fd: monitor.fd, events: readable) { [self] in
            readMonitor()
            return true
        }
        for syspath in jacks.keys { watch(jack: syspath) }
        for syspath in controls.keys { watch(control: syspath) }
    }

    /// Stops reading: the loop drops its sources (and with them, its references to this).
    func detach() {
        guard let loop else { return }
        if let monitorSource { loop.unwatch(monitorSource) }
        for jack in jacks.values { if let source = jack.source { loop.unwatch(source) } }
        for control in controls.values { if let source = control.source { loop.unwatch(source) } }
        monitorSource = nil
        self.loop = nil
    }

    /// What a source waits for: input, except while the backlog is full: the loop then runs
    /// the consumer instead, and the kernel keeps what waits.
    private var readable: @Sendable () -> PollEvents {
        let backlog = self.backlog
        return { backlog?.isFull == true ? [] : .readable }
    }

    private func readMonitor() {
        guard let monitor else { return }
        receiving: while backlog?.isFull != true {
            switch monitor.receive() {
            case .device(let device): handle(device)
            case .none: break receiving
            case .overflowed: resync()  // then on with what came after
            }
        }
    }

    private func handle(_ device: UdevDevice) {
        let action = device.action ?? "change"
        let syspath = device.syspath
        let sysname = device.sysname
        switch device.subsystem {
        case "sound":
            if Self.isCardName(sysname) {
                if action == "remove" {
                    removed = removed.filter { !$0.hasPrefix(syspath + "/") }
                    removed.insert(syspath)
                    cardCache[syspath] = nil
                    for (path, control) in controls where control.cardSyspath == syspath { close(control: path, announce: true) }
                    unreadableControls = unreadableControls.filter { !$0.hasPrefix(syspath + "/") }
                    emit(.cardRemoved(syspath: syspath, action: action))
                    return
                }
                removed.remove(syspath)
                var cache: CardCache
                if let known = cardCache[syspath] {
                    cache = known  // a change, or a repeated add: same card instance
                } else if action == "add" {
                    // A new card: its children follow as events (the control device last).
                    cache = CardCache(sysname: sysname, properties: [:], faults: [], attributes: [:], children: [], parent: readParent(device))
                } else {
                    cache = bootstrap(device)
                }
                refresh(&cache, from: device)
                cardCache[syspath] = cache
                for jack in openControl(of: syspath) { emit(.jack(jack)) }
                emit(.card(record(syspath, cardCache[syspath] ?? cache)))
            } else if PCMDevice.parse(sysname) != nil || sysname.hasPrefix("controlC") {
                if action == "remove" { removed.insert(syspath) } else { removed.remove(syspath) }
                // The card is the child's parent in the device path; no sysfs lookup.
                let cardPath = String(syspath[..<(syspath.lastIndex(of: "/") ?? syspath.endIndex)])
                let cardName = String(cardPath.split(separator: "/").last ?? "")
                guard Self.isCardName(cardName) else { return }
                if cardCache[cardPath] == nil {
                    guard action != "remove", !removed.contains(cardPath), let card = context.device(syspath: cardPath) else { return }
                    cardCache[cardPath] = bootstrap(card)
                }
                if action == "remove" {
                    cardCache[cardPath]?.children.remove(syspath)
                    cardCache[cardPath]?.pcmAttributes[syspath] = nil
                    if let pcm = PCMDevice(sysname: sysname) { cardCache[cardPath]?.pcmNames[PCMKey(pcm)] = nil }
                    if controls[syspath] != nil { close(control: syspath, announce: true) }
                    unreadableControls.remove(syspath)
                } else {
                    if action == "add" { unreadableControls.remove(syspath) }
                    cardCache[cardPath]?.children.insert(syspath)
                    if PCMDevice.parse(sysname) != nil, cardCache[cardPath]?.pcmAttributes[syspath] == nil {
                        cardCache[cardPath]?.pcmAttributes[syspath] = Self.pcmAttributes(device)
                    }
                    // A PCM registered after the control device (rare: the kernel registers the
                    // control last): ask the open control device what it is.
                    if let pcm = PCMDevice(sysname: sysname), cardCache[cardPath]?.pcmNames[PCMKey(pcm)] == nil,
                        let control = controls.values.first(where: { $0.cardSyspath == cardPath }),
                        let names = control.device.pcmName(device: pcm.device, playback: pcm.playback)
                    {
                        cardCache[cardPath]?.pcmNames[PCMKey(pcm)] = names
                    }
                }
                if action != "remove" { for jack in openControl(of: cardPath) { emit(.jack(jack)) } }
                emit(.card(record(cardPath, cardCache[cardPath]!)))
            }
        case "input":
            guard sysname.hasPrefix("event") else { return }
            if action == "remove" {
                close(jack: syspath, announce: true)
            } else {
                consider(input: device, action: action)
            }
        default:
            break
        }
    }

    // MARK: Cards

    /// A card met mid-life: its children and parent from sysfs.
    private func bootstrap(_ device: UdevDevice) -> CardCache {
        var children: Set<String> = []
        var pcmAttributes: [String: (pcmClass: String?, id: String?)] = [:]
        if let enumerator = try? UdevEnumerator(context) {
            enumerator.match(parent: device)
            for path in enumerator.syspaths() where path != device.syspath && !removed.contains(path) {
                let name = path.split(separator: "/").last.map(String.init) ?? ""
                if PCMDevice(sysname: name) != nil {
                    children.insert(path)
                    if let pcm = context.device(syspath: path) { pcmAttributes[path] = Self.pcmAttributes(pcm) }
                } else if name.hasPrefix("controlC") {
                    children.insert(path)
                }
            }
        }
        var cache = CardCache(sysname: device.sysname, properties: [:], faults: [], attributes: [:], children: children, parent: readParent(device))
        cache.pcmAttributes = pcmAttributes
        refresh(&cache, from: device)
        return cache
    }

    /// Takes the card's properties from `device` (the event's, when it is one)
    /// and its `id`/`number` attributes from sysfs while they can be read.
    private func refresh(_ cache: inout CardCache, from device: UdevDevice) {
        let (properties, invalid) = device.properties()
        cache.properties = properties
        cache.faults = invalid.sorted().map { "property \($0) is not valid UTF-8" }
        // Read once per card instance: the kernel sends no uevent when they change,
        // so re-reading them on every change event would buy nothing but syscalls.
        for name in ["id", "number"] where cache.attributes[name] == nil || cache.attributeFaults.contains(name) {
            guard let value = device.attribute(name) else { continue }
            cache.attributes[name] = value.value.trimmingASCIIWhitespace()
            if value.valid { cache.attributeFaults.remove(name) } else { cache.attributeFaults.insert(name) }
        }
        cache.faults += cache.attributeFaults.sorted().map { "attribute \($0) is not valid UTF-8" }
    }

    private func record(_ syspath: String, _ cache: CardCache) -> CardRecord {
        var pcms: [PCMDevice] = []
        var hasControl = false
        for path in cache.children where !removed.contains(path) {
            let name = path.split(separator: "/").last.map(String.init) ?? ""
            if var pcm = PCMDevice(sysname: name) {
                pcm.pcmClass = cache.pcmAttributes[path]?.pcmClass
                if let names = cache.pcmNames[PCMKey(pcm)] {
                    // The control device's word, where it could be asked; sysfs has no name.
                    pcm.id = names.id.isEmpty ? nil : names.id
                    pcm.name = names.name.isEmpty ? nil : names.name
                } else {
                    pcm.id = cache.pcmAttributes[path]?.id
                }
                pcms.append(pcm)
            } else if name.hasPrefix("controlC") {
                hasControl = true
            }
        }
        return CardRecord(
            syspath: syspath, sysname: cache.sysname, properties: cache.properties, attributes: cache.attributes,
            pcms: pcms, hasControl: hasControl, parent: cache.parent, faults: cache.faults, info: cache.info, hdaPins: cache.hdaPins,
            eldDevices: cache.eldDevices, phantomJacks: cache.phantomJacks, usbPlayback: cache.usbPlayback,
            captureSwitch: cache.captureSwitch, namedSwitches: cache.namedSwitches)
    }

    /// A PCM child's `pcm_class` and `id` attributes, where sysfs has them.
    private static func pcmAttributes(_ device: UdevDevice) -> (pcmClass: String?, id: String?) {
        func value(_ name: String) -> String? {
            guard let attribute = device.attribute(name), attribute.valid else { return nil }
            let text = attribute.value.trimmingASCIIWhitespace()
            return text.isEmpty ? nil : text
        }
        return (value("pcm_class"), value("id"))
    }

    private func readParent(_ device: UdevDevice) -> CardParent {
        var parent = CardParent()
        if let up = device.parent() {
            parent.subsystem = up.subsystem
            parent.driver = up.driver
            if up.subsystem == "pci" {
                parent.pciClass = up.attribute("class")?.value
                parent.function0Class = function0Class(up.syspath)
                parent.isGraphicsAudioFunction = parent.function0Class?.hasPrefix("0x03") == true
            } else {
                // A platform (device-tree) parent: its node name and compatibles, from its properties.
                let properties = up.properties().values
                parent.ofName = properties["OF_NAME"]
                let count = properties["OF_COMPATIBLE_N"].flatMap { Int($0) } ?? 0
                parent.ofCompatible = (0..<min(count, 16)).compactMap { properties["OF_COMPATIBLE_\($0)"] }
            }
        }
        return parent
    }

    /// The PCI class of function 0 of the same PCI device, for a function other than 0: HDMI
    /// audio of a GPU is function 1 (or higher) of a device whose function 0 is a display
    /// controller (class 0x03xxxx).
    private func function0Class(_ syspath: String) -> String? {
        guard let slash = syspath.lastIndex(of: "/"), let dot = syspath.lastIndex(of: "."), dot > slash else { return nil }
        guard syspath[syspath.index(after: dot)...] != "0" else { return nil }
        let sibling = syspath[..<dot] + ".0"
        return context.device(syspath: String(sibling))?.attribute("class")?.value.trimmingASCIIWhitespace()
    }

    /// The syspath of the card a device path lies below, if any.
    static func cardPath(of syspath: String) -> (syspath: String, sysname: String)? {
        let parts = syspath.split(separator: "/", omittingEmptySubsequences: false)
        guard let index = parts.lastIndex(where: { isCardName(String($0)) }), index > 0, parts[index - 1] == "sound" else { return nil }
        return (parts[...index].joined(separator: "/"), String(parts[index]))
    }

    static func isCardName(_ name: String) -> Bool {
        name.hasPrefix("card") && name.count > 4 && name.dropFirst(4).allSatisfy { $0.isASCII && $0.isNumber }
    }

    // MARK: Jacks

    private func consider(input device: UdevDevice, action: String) {
        let syspath = device.syspath
        if var known = jacks[syspath] {
            // A change or a repeated add: re-read the switches.
            if let state = known.device.switchState() {
                known.state = state.intersection(known.supported)
                known.pending = known.state
                jacks[syspath] = known
                emit(.jackState(syspath: syspath, state: known.state))
            }
            return
        }
        if let jack = open(jack: device) { emit(.jack(jack)) }
    }

    /// Opens and watches an input device if it is a jack switch device of a sound card;
    /// faults are reported, and nil returned. A jack whose device cannot be read (no node,
    /// no permission, no evdev behind it) still counts when udev's `SW` bitmap says it is a
    /// jack switch: it is reported with its udev `NAME` and its state unknown.
    private func open(jack device: UdevDevice) -> JackRecord? {
        let syspath = device.syspath
        // Only switch devices that hang below a sound card are jacks; the card is
        // found in the device path (.../sound/cardN/inputM/eventK), not in sysfs.
        guard let card = Self.cardPath(of: syspath) else { return nil }
        let inputDevice = device.parent()
        let inputProperties = inputDevice?.properties().values ?? [:]
        let name = inputDevice?.attribute("name")?.value.trimmingASCIIWhitespace()
            ?? inputProperties["NAME"].map { String($0.filter { $0 != "\"" }) }
        let properties = device.properties().values
        /// The jack as udev alone describes it, when its `SW` bitmap has a jack switch.
        func unreadable(_ fault: String, _ why: String) -> JackRecord? {
            guard let name, let switches = inputProperties["SW"].flatMap(JackRecord.switches(fromUdevBitmap:)),
                !switches.intersection(.jackSwitches).isEmpty
            else {
                emit(.fault(key: "\(syspath)#\(fault)", message: "input device \(syspath) on \(card.sysname): \(why): ignored"))
                return nil
            }
            emit(.fault(
                key: "\(syspath)#unknown-state",
                message: "jack \(CardClassifier.quoted(name)) on \(card.sysname): \(why): its state is unknown (HDMI/DP outputs are offered with availability unknown)"))
            unreadableJacks.insert(syspath)
            return JackRecord(
                syspath: syspath, cardSyspath: card.syspath, name: name, properties: properties, supported: switches.intersection(.jackSwitches),
                state: [], stateKnown: false)
        }
        guard let node = device.devnode else { return unreadable("no-node", "has no device node") }
        let evdev: EvdevSwitchDevice
        do {
            evdev = try EvdevSwitchDevice(path: node)
        } catch {
            return unreadable("open", "\(error)")
        }
        let supported: SwitchSet
        switch evdev.switchCapability() {
        case .unreadable:
            return unreadable("caps", "cannot read its capabilities (EVIOCGBIT)")
        case .none:
            let label = name ?? evdev.name() ?? node
            emit(.fault(key: "\(syspath)#not-switch", message: "input device \(CardClassifier.quoted(label)) on \(card.sysname) is not a jack switch device: ignored"))
            return nil
        case .switches(let switches):
            guard !switches.intersection(.jackSwitches).isEmpty else {
                let label = name ?? evdev.name() ?? node
                emit(.fault(key: "\(syspath)#not-switch", message: "input device \(CardClassifier.quoted(label)) on \(card.sysname) is not a jack switch device: ignored"))
                return nil
            }
            supported = switches
        }
        guard let raw = evdev.switchState() else {
            return unreadable("state", "cannot read the switch state of \(node) (EVIOCGSW)")
        }
        let state = raw.intersection(supported)
        unreadableJacks.remove(syspath)
        nextToken += 1
        jacks[syspath] = OpenJack(
            device: evdev, token: nextToken, cardSyspath: card.syspath, supported: supported, state: state, pending: state)
        watch(jack: syspath)
        return JackRecord(syspath: syspath, cardSyspath: card.syspath, name: name ?? evdev.name() ?? node, properties: properties, supported: supported, state: state)
    }

    /// Reads the jack on the loop, if attached.
    private func watch(jack syspath: String) {
        guard let loop, let jack = jacks[syspath] else { return }
        let token = jack.token
        jacks[syspath]?.source = loop.watch(fd: jack.device.fd, events: readable) { [self] in
            guard jacks[syspath]?.token == token else { return false }
            readJack(syspath)
            return true
        }
    }

    private func readJack(_ syspath: String) {
        guard var jack = jacks[syspath] else { return }
        while backlog?.isFull != true {
            switch jack.device.read() {
            case .drained:
                jacks[syspath] = jack
                return
            case .gone:
                jacks[syspath] = jack
                close(jack: syspath, announce: true)
                return
            case .events(let events):
                for event in events {
                    if event.type == InputEvent.switchEvent {
                        let bit = SwitchSet(code: Int(event.code))
                        if event.value != 0 { jack.pending.insert(bit) } else { jack.pending.remove(bit) }
                        jack.pending.formIntersection(jack.supported)
                    } else if event.type == InputEvent.synchronization && event.code == InputEvent.dropped {
                        // The kernel dropped events: the only truth left is the current state.
                        jack.pending = (jack.device.switchState() ?? jack.pending).intersection(jack.supported)
                    } else if event.type == InputEvent.synchronization && event.code == InputEvent.report {
                        if jack.pending != jack.state {
                            jack.state = jack.pending
                            emit(.jackState(syspath: syspath, state: jack.state))
                        }
                    }
                }
            }
        }
        jacks[syspath] = jack
    }

    private func close(jack syspath: String, announce: Bool) {
        if unreadableJacks.remove(syspath) != nil, jacks[syspath] == nil {
            if announce { emit(.jackRemoved(syspath: syspath)) }
            return
        }
        guard let jack = jacks.removeValue(forKey: syspath) else { return }
        if let source = jack.source { loop?.unwatch(source) }
        if announce { emit(.jackRemoved(syspath: syspath)) }
    }

    // MARK: Control jacks

    /// Opens the card's control device, if it has one and it is not open yet, reads what it says
    /// of the card and its PCMs into the card's cache, and returns its jack elements as jacks
    /// (none if it cannot be read: evdev alone then says). Reads the card's HDA codec pins once
    /// too. Faults are reported once per device.
    private func openControl(of cardSyspath: String) -> [JackRecord] {
        guard let cache = cardCache[cardSyspath],
            let syspath = cache.children.first(where: { $0.split(separator: "/").last?.hasPrefix("controlC") == true && !removed.contains($0) })
        else { return [] }
        // The card is complete (its control device is registered last): its codecs are probed.
        readPins(of: cardSyspath)
        guard controls[syspath] == nil, !unreadableControls.contains(syspath), let device = context.device(syspath: syspath), let node = device.devnode
        else { return [] }
        let card = cache.sysname
        let control: ControlJackDevice
        do {
            control = try ControlJackDevice(path: node)
            let version = try control.device.protocolVersion()
            // SNDRV_CTL_VERSION 2.0.x: the structures decoded here are version 2's.
            guard version >> 16 == 2 else {
                unreadableControls.insert(syspath)
                emit(.fault(key: "\(syspath)#control-version", message: "\(card): \(node) speaks control protocol \(version >> 16).\((version >> 8) & 0xff), not 2: not read"))
                return []
            }
        } catch {
            unreadableControls.insert(syspath)
            // ENOTTY: not a control device behind the node (a static umockdev record): nothing to say.
            if error.code != .inappropriateIoctl {
                emit(.fault(key: "\(syspath)#control", message: "\(card): cannot read \(node) (\(error.code)): no card info or PCM names, jack state from evdev devices only"))
            }
            return []
        }
        readCardInfo(control, card: cardSyspath, control: syspath, node: node)
        let elements: [ControlJackDevice.Element]
        let capture: ControlJackDevice.CaptureSwitch?
        do {
            let listed = try control.elements()
            elements = listed.jacks
            capture = listed.captureSwitch
            cardCache[cardSyspath]?.eldDevices = listed.eldDevices
            cardCache[cardSyspath]?.phantomJacks = listed.phantomJacks
            cardCache[cardSyspath]?.captureSwitch = capture.flatMap(control.isOn)
        } catch {
            unreadableControls.insert(syspath)
            emit(.fault(key: "\(syspath)#control", message: "\(card): cannot read the jack controls of \(node) (\(error.code)): jack state from evdev devices only"))
            return []
        }
        do {
            try control.subscribe()
        } catch {
            emit(.fault(key: "\(syspath)#subscribe", message: "\(card): cannot subscribe to the events of \(node) (\(error.code)): its jack controls are read once"))
        }
        nextToken += 1
        var open = OpenControl(device: control, token: nextToken, cardSyspath: cardSyspath, elements: [:], captureSwitch: capture)
        var records: [JackRecord] = []
        for element in elements {
            let state = control.state(of: element)
            open.elements[element.id.numid] = (element, state ?? [])
            records.append(jackRecord(element, state: state, control: syspath, card: cardSyspath))
        }
        controls[syspath] = open
        findNamedSwitches(control: syspath)
        watch(control: syspath)
        return records
    }

    /// The most switches followed on one card: a profile's built-in mics name a few.
    static let maximumFollowedSwitches = 16

    /// Follows the boolean mixer switches `names` (index 0) of the card, from now on and whenever
    /// its control device is open, in place of those followed before; their values are part of
    /// the card's record (`namedSwitches`). A name the card has not is reported once.
    func follow(_ names: [String], card cardSyspath: String) {
        let names = Array(names.prefix(Self.maximumFollowedSwitches))
        guard let cache = cardCache[cardSyspath], cache.followed != names else { return }
        cardCache[cardSyspath]?.followed = names
        if let syspath = controls.first(where: { $0.value.cardSyspath == cardSyspath })?.key {
            findNamedSwitches(control: syspath)
        } else {
            cardCache[cardSyspath]?.namedSwitches = [:]
        }
        guard let now = cardCache[cardSyspath], now.namedSwitches != cache.namedSwitches else { return }
        emit(.card(record(cardSyspath, now)))
    }

    /// Looks up the card's followed switches on its open control device and reads them.
    private func findNamedSwitches(control syspath: String) {
        guard var control = controls[syspath], let cache = cardCache[control.cardSyspath] else { return }
        let (found, missing) = control.device.namedSwitches(cache.followed)
        for name in missing {
            emit(.fault(
                key: "\(syspath)#switch:\(name)",
                message: "\(cache.sysname): no boolean mixer control \(CardClassifier.quoted(name)) (index 0) to follow: the mute it stands for is not seen"))
        }
        control.named = found
        controls[syspath] = control
        var values: [String: Bool] = [:]
        for (name, element) in found.values { if let on = control.device.isOn(element) { values[name] = on } }
        cardCache[control.cardSyspath]?.namedSwitches = values
    }

    /// CARD_INFO and every PCM's PCM_INFO, into the card's cache. A card that cannot say is
    /// classified from udev alone; that is logged once.
    private func readCardInfo(_ control: ControlJackDevice, card cardSyspath: String, control syspath: String, node: String) {
        let label = cardCache[cardSyspath]?.sysname ?? cardSyspath
        do {
            cardCache[cardSyspath]?.info = try control.cardInfo()
        } catch {
            emit(.fault(key: "\(syspath)#card-info", message: "\(label): cannot read the card info of \(node) (\(error.code)): classified without it"))
        }
        do {
            cardCache[cardSyspath]?.pcmNames = try control.pcmNames()
        } catch {
            emit(.fault(key: "\(syspath)#pcm-info", message: "\(label): cannot read the PCM names of \(node) (\(error.code)): classified without them"))
        }
    }

    /// The card's HDA codec pins and a USB card's stream formats, once per card instance (an
    /// unreadable file is logged once). Neither changes while the card is there; the kernel adds
    /// the card's proc files right after its devices (snd_card_register), before udev has passed
    /// on the control device's event.
    private func readPins(of cardSyspath: String) {
        guard let cache = cardCache[cardSyspath], !cache.pinsRead else { return }
        cardCache[cardSyspath]?.pinsRead = true
        guard let raw = cache.attributes["number"], let number = Int(raw), (0..<256).contains(number) else { return }
        cardCache[cardSyspath]?.hdaPins = HDACodecProc.read(card: number, root: procRoot) { message in
            emit(.fault(key: "\(cardSyspath)#codec", message: "\(cache.sysname): \(message)"))
        }
        cardCache[cardSyspath]?.usbPlayback = USBStreamProc.read(card: number, root: procRoot) { message in
            emit(.fault(key: "\(cardSyspath)#stream", message: "\(cache.sysname): \(message)"))
        }
    }

    private func jackRecord(_ element: ControlJackDevice.Element, state: SwitchSet?, control: String, card: String) -> JackRecord {
        JackRecord(
            syspath: "\(control)#\(element.id.numid)", cardSyspath: card, name: ControlJacks.displayName(element.id),
            supported: element.supported, state: state ?? [], stateKnown: state != nil, source: .control)
    }

    /// Reads the control device on the loop, if attached.
    private func watch(control syspath: String) {
        guard let loop, let control = controls[syspath] else { return }
        let token = control.token
        controls[syspath]?.source = loop.watch(fd: control.device.fd, events: readable) { [self] in
            guard controls[syspath]?.token == token else { return false }
            readControl(syspath)
            return true
        }
    }

    /// Applies queued element events: a value change re-reads the jack (as an evdev switch
    /// change does); an element added or removed adds or removes a jack.
    private func readControl(_ syspath: String) {
        guard var control = controls[syspath] else { return }
        while backlog?.isFull != true {
            switch control.device.read() {
            case .drained:
                controls[syspath] = control
                return
            case .gone:
                controls[syspath] = control
                close(control: syspath, announce: true)
                return
            case .events(let events):
                for event in events {
                    let numid = event.id.numid
                    if let named = control.named[numid], event.mask.isRemoval || event.mask.contains(.value) {
                        // A followed switch (it may be the capture switch too: both are told).
                        if event.mask.isRemoval { control.named[numid] = nil }
                        let on = event.mask.isRemoval ? nil : control.device.isOn(named.element)
                        if var cache = cardCache[control.cardSyspath], cache.namedSwitches[named.name] != on {
                            cache.namedSwitches[named.name] = on
                            cardCache[control.cardSyspath] = cache
                            emit(.card(record(control.cardSyspath, cache)))
                        }
                    } else if event.mask.contains(.add), control.named[numid] == nil, event.id.interface == .mixer, event.id.index == 0,
                        cardCache[control.cardSyspath]?.followed.contains(event.id.name) == true
                    {
                        // A followed switch that came after the control device was opened.
                        controls[syspath] = control
                        findNamedSwitches(control: syspath)
                        control = controls[syspath] ?? control
                        if let cache = cardCache[control.cardSyspath] { emit(.card(record(control.cardSyspath, cache))) }
                    }
                    if let capture = control.captureSwitch, capture.numid == numid {
                        // The capture switch is part of the card's record: a change is a new record.
                        // A value that cannot be read counts as no switch (never muted).
                        guard event.mask.isRemoval || event.mask.contains(.value) else { continue }
                        if event.mask.isRemoval { control.captureSwitch = nil }
                        let on = event.mask.isRemoval ? nil : control.device.isOn(capture)
                        guard var cache = cardCache[control.cardSyspath], cache.captureSwitch != on else { continue }
                        cache.captureSwitch = on
                        cardCache[control.cardSyspath] = cache
                        emit(.card(record(control.cardSyspath, cache)))
                    } else if event.mask.isRemoval {
                        if control.elements.removeValue(forKey: numid) != nil { emit(.jackRemoved(syspath: "\(syspath)#\(numid)")) }
                    } else if let known = control.elements[numid] {
                        guard event.mask.contains(.value) || event.mask.contains(.info) else { continue }
                        let state = control.device.state(of: known.element) ?? known.state
                        if state != known.state {
                            control.elements[numid]?.state = state
                            emit(.jackState(syspath: "\(syspath)#\(numid)", state: state))
                        }
                    } else if event.mask.contains(.add), let element = control.device.element(numid: numid) {
                        let state = control.device.state(of: element)
                        control.elements[numid] = (element, state ?? [])
                        emit(.jack(jackRecord(element, state: state, control: syspath, card: control.cardSyspath)))
                    }
                }
            }
        }
        controls[syspath] = control
    }

    private func close(control syspath: String, announce: Bool) {
        guard let control = controls.removeValue(forKey: syspath) else { return }
        if let source = control.source { loop?.unwatch(source) }
        // What it said is no longer vouched for; the card's next record says so.
        if control.captureSwitch != nil { cardCache[control.cardSyspath]?.captureSwitch = nil }
        if !control.named.isEmpty { cardCache[control.cardSyspath]?.namedSwitches = [:] }
        if announce { for numid in control.elements.keys.sorted() { emit(.jackRemoved(syspath: "\(syspath)#\(numid)")) } }
    }
}
