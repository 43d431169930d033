// The helper's PipeWire side (docs/daemon.md, "The PipeWire helper"): a libpipewire client on
// one loop the caller polls, through CPipeWire's shim. It binds the `default` metadata, every
// ALSA card's device (its profiles) and every audio node (the registry shows only a few of a node's properties; the node's info has them
// all), and turns what the server says into the protocol's events. One thread: every callback
// runs inside `dispatch()`, on the caller's.
import AudioRouteCore
import CPipeWire

/// Why the client could not connect or do what it was asked: libpipewire's -errno and what failed.
public struct PipeWireError: Error, Sendable, CustomStringConvertible {
    /// libpipewire's answer, -errno.
    public var code: Int32
    /// What failed.
    public var operation: String
    /// The fault of `operation`, with libpipewire's -errno.
    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }
    public var description: String { "\(operation): error \(-code)\(code == -111 ? " (connection refused)" : "")" }
}

/// A connection to the user's PipeWire.
public final class PipeWireClient {
    /// Where the client's events go, in the order the server sent them.
    public var onEvent: (PipeWireHelperEvent) -> Void = { _ in }
    /// Set when the server is gone or the connection failed: the caller stops.
    public private(set) var disconnected: String?

    /// The most nodes followed at once; the rest are logged and left out (memory stays bounded
    /// whatever the server lists).
    public static let maximumNodes = 1024

    private var client: OpaquePointer?
    private var serverVersion: String?
    private var helloSent = false
    private var firstSync: Int32 = -1
    /// Bound nodes, by id; those reported (their first info came) in `reported`.
    private var nodes: [UInt32: OpaquePointer] = [:]
    private var reported: [UInt32: PipeWireNode] = [:]
    /// Requests waiting for the server's `done`: their sync's sequence number.
    private var pending: [(seq: Int32, defaults: PipeWireDefaults)] = []
    /// The streams paused on request: paused again when the server starts them (a move to
    /// another sink starts a paused node: seen with PipeWire 0.3.65).
    private var paused: Set<UInt32> = []
    /// Stream requests waiting for the server's `done`: their sync's sequence number and node.
    private var streams: [(seq: Int32, id: UInt32)] = []
    /// Bound ALSA devices (`Audio/Device`), by id; their properties, and those reported.
    private var devices: [UInt32: OpaquePointer] = [:]
    private var deviceProps: [UInt32: [(key: String, value: String)]] = [:]
    private var reportedDevices: [UInt32: PipeWireDevice] = [:]
    /// Each device's profile enumeration under way: the sequence numbers its two requests' params
    /// carry, what came so far, and the sync that ends it.
    private var rounds: [UInt32: (seqs: [Int32], profiles: [PipeWireProfile], active: Int?, dropped: Int, sync: Int32)] = [:]
    /// Profile requests waiting for the server's `done`.
    private var profileRequests: [(seq: Int32, request: PipeWireProfileRequest)] = []
    /// Faults the caller should log (a node not bound, one over the limit).
    public var onNotice: (String) -> Void = { _ in }

    /// A client not yet connected (`connect()`).
    public init() {}

    /// Connects and starts listening to the registry; the hello follows once the first round is done.
    public func connect() throws(PipeWireError) {
        var callbacks = arpw_callbacks()
        callbacks.global = { data, id, type, props in
            Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().global(id: id, type: String(cString: type!), props: props)
        }
        callbacks.global_remove = { data, id in Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().globalRemoved(id) }
        callbacks.done = { data, seq in Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().done(seq) }
        callbacks.error = { data, id, seq, res, message in
            Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().error(id: id, seq: seq, res: res, message: String(cString: message!))
        }
        callbacks.server = { data, version in Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().serverVersion = String(cString: version!) }
        callbacks.node_props = { data, id, props in Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().nodeProperties(id, props) }
        callbacks.node_running = { data, id, running in Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().nodeRunning(id, running != 0) }
        callbacks.device_props = { data, id, props in Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().deviceProperties(id, props) }
        callbacks.device_params = { data, id in Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().deviceParams(id) }
        callbacks.device_profile = { data, id, seq, active, profile in
            Unmanaged<PipeWireClient>.fromOpaque(data!).takeUnretainedValue().deviceProfile(id, seq: seq, active: active != 0, profile!.pointee)
        }
        var error: Int32 = 0
        guard let client = arpw_client_new(&callbacks, Unmanaged.passUnretained(self).toOpaque(), &error) else {
            throw PipeWireError("connect to PipeWire", code: error)
        }
        self.client = client
        firstSync = arpw_client_sync(client)
    }

    /// The descriptor to poll for reading.
    public var descriptor: Int32 { client.map { arpw_client_fd($0) } ?? -1 }

    /// Handles what the server sent; events go to `onEvent`.
    public func dispatch() {
        guard let client else { return }
        let result = arpw_client_iterate(client)
        if result < 0 && result != -4 { disconnected = disconnected ?? "the loop failed: error \(-result)" }
    }

    /// Sets the server's configured default sink and source (nil: left as they are); the
    /// reply is an event once the server has it.
    public func setDefaults(_ defaults: PipeWireDefaults) {
        guard let client else { return onEvent(.defaultsFailed(defaults, message: "not connected")) }
        guard arpw_client_metadata_id(client) != UInt32.max else {
            return onEvent(.defaultsFailed(defaults, message: "the server has no \"default\" metadata (is a session manager running?)"))
        }
        for (key, name) in [("default.configured.audio.sink", defaults.sink), ("default.configured.audio.source", defaults.source)] {
            guard let name else { continue }
            // The value is what pactl and WirePlumber write: {"name": "<node.name>"} as Spa:String:JSON.
            let value = JSON.object([JSON.Member("name", .string(name))]).text
            let result = arpw_client_set_metadata(client, key, "Spa:String:JSON", value)
            if result < 0 { return onEvent(.defaultsFailed(defaults, message: "setting \(key) failed: error \(-result)")) }
        }
        pending.append((arpw_client_sync(client), defaults))
    }

    /// Pauses or starts a client's stream node and sets its volume; the reply is an event once
    /// the server has both (or at once, for a node that is not a client's stream).
    public func control(_ control: PipeWireStreamControl) {
        guard let client else { return onEvent(.streamFailed(id: control.id, message: "not connected")) }
        guard let node = nodes[control.id], reported[control.id]?.mediaClass?.hasPrefix("Stream/") == true else {
            return onEvent(.streamFailed(id: control.id, message: "no client stream \(control.id)"))
        }
        let command = control.paused ? arpw_node_pause(node) : arpw_node_start(node)
        if control.paused { paused.insert(control.id) } else { paused.remove(control.id) }
        if command < 0 { return onEvent(.streamFailed(id: control.id, message: "\(control.paused ? "Pause" : "Start") failed: error \(-command)")) }
        let volume = arpw_node_set_volume(node, Float(control.volume))
        if volume < 0 { return onEvent(.streamFailed(id: control.id, message: "setting Props volume failed: error \(-volume)")) }
        streams.append((arpw_client_sync(client), control.id))
    }

    /// Sets an ALSA device's profile by index (saved as the user's choice, as pactl does); the
    /// reply is an event once the server has it.
    public func setProfile(_ request: PipeWireProfileRequest) {
        guard let client else { return onEvent(.profileFailed(request, message: "not connected")) }
        guard let device = devices[request.device], let known = reportedDevices[request.device] else {
            return onEvent(.profileFailed(request, message: "no ALSA device \(request.device)"))
        }
        guard known.profiles.contains(where: { $0.index == request.index }) else {
            return onEvent(.profileFailed(request, message: "device \(request.device) has no profile \(request.index)"))
        }
        let result = arpw_device_set_profile(device, Int32(request.index))
        if result < 0 { return onEvent(.profileFailed(request, message: "setting the Profile param failed: error \(-result)")) }
        profileRequests.append((arpw_client_sync(client), request))
    }

    /// Whether a request waits for the server's answer.
    public var waiting: Bool { !pending.isEmpty || !streams.isEmpty || !profileRequests.isEmpty }

    /// Disconnects and frees every node and device.
    public func close() {
        for node in nodes.values { arpw_node_free(node) }
        nodes = [:]
        for device in devices.values { arpw_device_free(device) }
        devices = [:]
        if let client { arpw_client_free(client) }
        client = nil
    }

    deinit { close() }

    // MARK: Callbacks

    private func global(id: UInt32, type: String, props: OpaquePointer?) {
        guard let client else { return }
        if type == "PipeWire:Interface:Metadata" {
            guard arpw_dict_lookup(props, "metadata.name").map({ String(cString: $0) }) == "default" else { return }
            let result = arpw_client_bind_metadata(client, id)
            if result < 0 { onNotice("the default metadata \(id) not bound: error \(-result)") }
            return
        }
        if type == "PipeWire:Interface:Device" {
            // ALSA cards and Bluetooth devices: their profiles decide which of their sinks and sources exist.
            guard arpw_dict_lookup(props, "media.class").map({ String(cString: $0) }) == "Audio/Device",
                let api = arpw_dict_lookup(props, "device.api").map({ String(cString: $0) }), api == "alsa" || api == "bluez5"
            else { return }
            guard devices.count < PipeWireDevice.maximumDevices else {
                return onNotice("device \(id) left out: \(PipeWireDevice.maximumDevices) devices followed already")
            }
            var error: Int32 = 0
            guard let device = arpw_device_bind(client, id, &error) else { return onNotice("device \(id) not bound: error \(-error)") }
            devices[id] = device
            return
        }
        guard type == "PipeWire:Interface:Node", let mediaClass = arpw_dict_lookup(props, "media.class").map({ String(cString: $0) }),
            PipeWireNode.mediaClasses.contains(mediaClass)
        else { return }
        guard nodes.count < Self.maximumNodes else { return onNotice("node \(id) left out: \(Self.maximumNodes) nodes followed already") }
        var error: Int32 = 0
        guard let node = arpw_node_bind(client, id, &error) else { return onNotice("node \(id) not bound: error \(-error)") }
        nodes[id] = node
    }

    private func nodeRunning(_ id: UInt32, _ running: Bool) {
        guard running, paused.contains(id), let node = nodes[id] else { return }
        let result = arpw_node_pause(node)
        onNotice("stream \(id) started by the server while paused: paused again\(result < 0 ? " failed: error \(-result)" : "")")
    }

    private func globalRemoved(_ id: UInt32) {
        paused.remove(id)
        if let client, arpw_client_metadata_id(client) == id { arpw_client_unbind_metadata(client) }
        if let node = nodes.removeValue(forKey: id) { arpw_node_free(node) }
        if reported.removeValue(forKey: id) != nil { onEvent(.removed(id: id)) }
        if let device = devices.removeValue(forKey: id) {
            arpw_device_free(device)
            deviceProps[id] = nil
            rounds[id] = nil
            if reportedDevices.removeValue(forKey: id) != nil && helloSent { onEvent(.deviceRemoved(id: id)) }
        }
    }

    private func deviceProperties(_ id: UInt32, _ props: OpaquePointer?) {
        var all: [(key: String, value: String)] = []
        for index in 0..<arpw_dict_count(props) {
            guard let key = arpw_dict_key(props, index), let value = arpw_dict_value(props, index) else { continue }
            let name = String(cString: key)
            if PipeWireDevice.keys.contains(name) { all.append((name, String(cString: value))) }
        }
        deviceProps[id] = all
        guard let known = reportedDevices[id] else { return }
        report(PipeWireDevice(id: id, selecting: all, profiles: known.profiles, active: known.active))
    }

    /// The device's params changed (its first info, a profile's availability, the active
    /// profile): its profiles are asked again, and reported when the round is done.
    private func deviceParams(_ id: UInt32) {
        guard let client, let device = devices[id] else { return }
        var enumSeq: Int32 = 0
        var activeSeq: Int32 = 0
        let result = arpw_device_enum_profiles(device, &enumSeq, &activeSeq)
        if result < 0 { return onNotice("device \(id): its profiles not asked: error \(-result)") }
        rounds[id] = ([enumSeq, activeSeq], [], nil, 0, arpw_client_sync(client))
    }

    private func deviceProfile(_ id: UInt32, seq: Int32, active: Bool, _ profile: arpw_profile) {
        guard var round = rounds[id], round.seqs.contains(seq) else { return }
        let name = String(cString: profile.name)
        let description = String(cString: profile.description)
        if active {
            round.active = Int(profile.index)
        } else if round.profiles.count >= PipeWireDevice.maximumProfiles || name.isEmpty || name.utf8.count > PipeWireProfile.maximumTextLength
            || description.utf8.count > PipeWireProfile.maximumTextLength || profile.index < 0
        {
            round.dropped += 1
        } else {
            let available: PipeWireProfile.Availability = profile.available == 2 ? .yes : profile.available == 1 ? .no : .unknown
            round.profiles.append(
                PipeWireProfile(
                    index: Int(profile.index), name: name, description: description, priority: Int(profile.priority), available: available,
                    sinks: Int(min(profile.sinks, 1024)), sources: Int(min(profile.sources, 1024))))
        }
        rounds[id] = round
    }

    /// A device's profile round is done (its sync came back): the device is reported if it changed.
    private func deviceRoundDone(_ seq: Int32) {
        for (id, round) in rounds where round.sync == seq {
            rounds[id] = nil
            if round.dropped > 0 {
                onNotice("device \(id): \(round.dropped) profiles left out (over \(PipeWireDevice.maximumProfiles), or a name over \(PipeWireProfile.maximumTextLength) bytes)")
            }
            report(PipeWireDevice(id: id, selecting: deviceProps[id] ?? [], profiles: round.profiles, active: round.active))
        }
    }

    private func report(_ device: PipeWireDevice) {
        let known = reportedDevices[device.id]
        guard known != device else { return }
        reportedDevices[device.id] = device
        if helloSent { onEvent(.device(device, added: known == nil)) }
    }

    private func nodeProperties(_ id: UInt32, _ props: OpaquePointer?) {
        var all: [(key: String, value: String)] = []
        for index in 0..<arpw_dict_count(props) {
            guard let key = arpw_dict_key(props, index), let value = arpw_dict_value(props, index) else { continue }
            all.append((String(cString: key), String(cString: value)))
        }
        let node = PipeWireNode(id: id, selecting: all)
        let known = reported[id]
        guard known != node else { return }
        reported[id] = node
        // Nodes bound before the hello are reported after it, in id order.
        if helloSent { onEvent(.node(node, added: known == nil)) }
    }

    private func done(_ seq: Int32) {
        if !helloSent && seq == firstSync, let client {
            // The registry's first round is done; the nodes' infos follow their binds: one more round.
            firstSync = -1
            secondSync = arpw_client_sync(client)
            return
        }
        if !helloSent && seq == secondSync {
            helloSent = true
            onEvent(.hello(version: serverVersion ?? "unknown"))
            for id in reported.keys.sorted() { onEvent(.node(reported[id]!, added: true)) }
            for id in reportedDevices.keys.sorted() { onEvent(.device(reportedDevices[id]!, added: true)) }
            deviceRoundDone(seq)
            return
        }
        deviceRoundDone(seq)
        while let first = profileRequests.first, first.seq <= seq {
            profileRequests.removeFirst()
            onEvent(.profileSet(first.request))
        }
        while let first = pending.first, first.seq <= seq {
            pending.removeFirst()
            onEvent(.defaultsSet(first.defaults))
        }
        while let first = streams.first, first.seq <= seq {
            streams.removeFirst()
            onEvent(.streamSet(id: first.id))
        }
    }
    private var secondSync: Int32 = -1

    private func error(id: UInt32, seq: Int32, res: Int32, message: String) {
        if id == 0 && res == -32 {  // PW_ID_CORE, -EPIPE: the server is gone
            disconnected = "the server closed the connection"
            return
        }
        if let index = pending.firstIndex(where: { $0.seq == seq }) {
            let request = pending.remove(at: index)
            onEvent(.defaultsFailed(request.defaults, message: "the server refused it: \(message) (error \(-res))"))
            return
        }
        if let index = profileRequests.firstIndex(where: { request in devices[request.request.device].map(arpw_device_proxy_id) == id }) {
            // A device's error (its set_param refused) names the device's proxy; the oldest
            // request for it is the one refused.
            let request = profileRequests.remove(at: index)
            onEvent(.profileFailed(request.request, message: "the server refused it: \(message) (error \(-res))"))
            return
        }
        onNotice("the server said: object \(id): \(message) (error \(-res))")
        if id == 0 { disconnected = "the server's error: \(message)" }
    }
}
