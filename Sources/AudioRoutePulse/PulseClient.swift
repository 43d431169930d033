// The helper's PulseAudio side (docs/daemon.md, "The PulseAudio helper"): a libpulse client on
// a pa_mainloop whose poll is the caller's (CPulse's shim), subscribed to sinks, sources and
// streams and cards, turning what the server says into the PipeWire helper's protocol events, so that the
// daemon reads one protocol for both servers, and carrying out the daemon's `stream` requests on
// sink inputs and source outputs (a mute for a pause, the volume for a duck: PulseStreamHold) and
// its `profile` requests on ALSA cards (by the profile's name).
// One thread: every callback runs inside `wait`.
import AudioRouteCore
import CPulse

/// Why the client could not connect or do what it was asked: -errno and what failed.
public struct PulseError: Error, Sendable, CustomStringConvertible {
    /// -errno.
    public var code: Int32
    /// What failed.
    public var operation: String
    /// The fault of `operation`, with its -errno.
    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }
    public var description: String { "\(operation): error \(-code)" }
}

/// A connection to the user's PulseAudio.
public final class PulseClient {
    /// Where the client's events go, in the order the server sent them.
    public var onEvent: (PipeWireHelperEvent) -> Void = { _ in }
    /// Faults the caller should log (an object over the limit).
    public var onNotice: (String) -> Void = { _ in }
    /// What the caller may log at info level (a user's volume taken while a stream is lowered).
    public var onInfo: (String) -> Void = { _ in }
    /// Set when the connection failed or ended: the caller stops.
    public private(set) var disconnected: String?
    /// Whether the hello was sent (the first round is done).
    public private(set) var connected = false

    /// The most objects followed at once; the rest are left out (memory stays bounded whatever
    /// the server lists).
    public static let maximumNodes = 1024

    private var client: OpaquePointer?
    private var reported: [UInt32: PipeWireNode] = [:]
    /// The ALSA cards reported, by card index (at most PipeWireDevice.maximumDevices), and the
    /// names of each one's profiles by position, which a request's index names.
    private var devices: [UInt32: PipeWireDevice] = [:]
    /// Each followed stream's mute and volume: as the server last reported them, or as the
    /// helper last set them while its request waits (a report then may be older than it).
    private var readings: [UInt32: PulseStreamReading] = [:]
    /// What AudioRoute holds of the streams it paused or lowered (only followed streams: bounded).
    private var holds: [UInt32: PulseStreamHold] = [:]
    /// A stream's requests waiting for the server, by stream.
    private var streamRequests: [UInt32: Int] = [:]
    private enum Pending {
        case defaults(PipeWireDefaults)
        /// A stream request, and the fault to reply even when the server took it.
        case stream(UInt32, refused: String?)
        case profile(PipeWireProfileRequest, name: String)
    }
    private var pending: [UInt32: Pending] = [:]
    private var nextTag: UInt32 = 0

    /// A client not yet connected (`connect()`).
    public init() {}

    /// Starts connecting; the hello follows once the server listed everything.
    public func connect() throws(PulseError) {
        var callbacks = arpa_callbacks()
        callbacks.ready = { data, name, version in
            Unmanaged<PulseClient>.fromOpaque(data!).takeUnretainedValue().ready(name: String(cString: name!), version: String(cString: version!))
        }
        callbacks.object = { data, facility, index, name, monitor, props, stream in
            let reading = stream.map { state in
                PulseStreamReading(
                    muted: state.pointee.muted != 0,
                    volume: withUnsafeBytes(of: state.pointee.volume) { Array($0.bindMemory(to: UInt32.self).prefix(Int(state.pointee.channels))) },
                    volumeWritable: state.pointee.volume_writable != 0)
            }
            Unmanaged<PulseClient>.fromOpaque(data!).takeUnretainedValue().object(facility, index, name.map { String(cString: $0) }, monitor != 0, props, reading)
        }
        callbacks.removed = { data, facility, index in Unmanaged<PulseClient>.fromOpaque(data!).takeUnretainedValue().removed(facility, index) }
        callbacks.card = { data, index, name, props, profiles, count, total, active in
            let list = (0..<Int(count)).map { k in
                let profile = profiles![k]
                return PulseCardProfile(
                    name: String(cString: profile.name), description: String(cString: profile.description), sinks: profile.sinks,
                    sources: profile.sources, priority: profile.priority, available: profile.available != 0)
            }
            Unmanaged<PulseClient>.fromOpaque(data!).takeUnretainedValue().card(
                index, String(cString: name!), props, list, total: Int(total), active: active >= 0 ? Int(active) : nil)
        }
        callbacks.done = { data, tag, result in Unmanaged<PulseClient>.fromOpaque(data!).takeUnretainedValue().done(tag, result) }
        callbacks.failed = { data, result, message in
            Unmanaged<PulseClient>.fromOpaque(data!).takeUnretainedValue().failed(result, String(cString: message!))
        }
        var error: Int32 = 0
        guard let client = arpa_client_new(&callbacks, Unmanaged.passUnretained(self).toOpaque(), "audioroute-pulse", &error) else {
            throw PulseError("connect to PulseAudio", code: error)
        }
        self.client = client
    }

    /// Waits up to `timeoutMilliseconds` (-1: for ever) for the server or `descriptor` (-1:
    /// none), handles what the server sent, and says whether `descriptor` can be read.
    public func wait(for descriptor: Int32, timeoutMilliseconds: Int32) -> Bool {
        guard let client else { return false }
        var ready: Int32 = 0
        if arpa_client_iterate(client, descriptor, timeoutMilliseconds, &ready) < 0 {
            disconnected = disconnected ?? "the main loop failed"
        }
        return ready != 0
    }

    /// Sets the server's default sink and source (nil: left as they are); the reply is an
    /// event once the server answered.
    public func setDefaults(_ defaults: PipeWireDefaults) {
        guard let client, connected else { return onEvent(.defaultsFailed(defaults, message: "not connected")) }
        nextTag &+= 1
        let tag = nextTag
        pending[tag] = .defaults(defaults)
        let result = arpa_client_set_defaults(client, defaults.sink, defaults.source, tag)
        if result < 0, pending.removeValue(forKey: tag) != nil {
            onEvent(.defaultsFailed(defaults, message: "not sent: error \(-result)"))
        }
    }

    /// Carries out the daemon's word on a client's stream (a sink input or a source output):
    /// paused is muted (unless its user had muted it), a volume below 1 the user's volume times
    /// it, 1 the user's volume back. The reply is an event once the server answered (at once when
    /// nothing needs changing or the stream is not followed).
    public func control(_ control: PipeWireStreamControl) {
        guard let client, connected else { return onEvent(.streamFailed(id: control.id, message: "not connected")) }
        let facility = PulseFacility(rawValue: Int32(control.id >> 30))
        guard facility == .sinkInput || facility == .sourceOutput, let facility, let reading = readings[control.id] else {
            return onEvent(.streamFailed(id: control.id, message: "no client stream \(control.id) (no sink input or source output of that id)"))
        }
        var hold = holds[control.id] ?? PulseStreamHold()
        let gain = control.volume < 1 ? arpa_volume_from_linear(control.volume) : nil
        let change = hold.apply(paused: control.paused, gain: gain, to: reading)
        holds[control.id] = hold.isEmpty ? nil : hold
        let refused = change.volumeRefused ? "the stream's volume cannot be set (a passthrough stream): \(control.paused ? "muted" : "its mute") only" : nil
        guard !change.isEmpty else {
            return onEvent(refused.map { .streamFailed(id: control.id, message: $0) } ?? .streamSet(id: control.id))
        }
        nextTag &+= 1
        let tag = nextTag
        let volume = change.volume ?? []
        let result = volume.withUnsafeBufferPointer { values in
            arpa_client_set_stream(
                client, facility.rawValue, control.id & PulseFacility.maximumIndex, change.mute.map { $0 ? 1 : 0 } ?? -1, values.baseAddress,
                UInt32(values.count), tag)
        }
        guard result >= 0 else { return onEvent(.streamFailed(id: control.id, message: "not sent: error \(-result)")) }
        pending[tag] = .stream(control.id, refused: refused)
        streamRequests[control.id, default: 0] += 1
        // What the server will have; its reports until it answered may be older.
        var now = reading
        if let mute = change.mute { now.muted = mute }
        if let volume = change.volume { now.volume = volume }
        readings[control.id] = now
    }

    /// Sets a card's profile: the request's index is the profile's position in the card's list,
    /// asked of the server by the profile's name. The reply is an event once the server answered
    /// (at once when the card or the profile is not known).
    public func setProfile(_ request: PipeWireProfileRequest) {
        guard let client, connected else { return onEvent(.profileFailed(request, message: "not connected")) }
        guard let device = devices[request.device] else {
            return onEvent(.profileFailed(request, message: "no device \(request.device) (no ALSA card of that index)"))
        }
        guard let profile = device.profiles.first(where: { $0.index == request.index }) else {
            return onEvent(
                .profileFailed(request, message: "device \(request.device) has no profile \(request.index) (it has \(device.profiles.map { "\($0.index)" }.joined(separator: ", ")))"))
        }
        nextTag &+= 1
        let tag = nextTag
        pending[tag] = .profile(request, name: profile.name)
        let result = arpa_client_set_card_profile(client, request.device, profile.name, tag)
        if result < 0, pending.removeValue(forKey: tag) != nil {
            onEvent(.profileFailed(request, message: "not sent: error \(-result)"))
        }
    }

    /// Whether a request waits for the server's answer.
    public var waiting: Bool { !pending.isEmpty }

    /// Disconnects.
    public func close() {
        if let client { arpa_client_free(client) }
        client = nil
    }

    deinit { close() }

    // MARK: Callbacks

    private func ready(name: String, version: String) {
        connected = true
        // The server's name and version: "pulseaudio 16.1", or pipewire-pulse's "PulseAudio (on PipeWire 1.0.5) 15.0.0".
        onEvent(.hello(version: name.isEmpty ? version : "\(name) \(version)"))
        for id in reported.keys.sorted() { onEvent(.node(reported[id]!, added: true)) }
        for id in devices.keys.sorted() { onEvent(.device(devices[id]!, added: true)) }
    }

    private func card(_ index: UInt32, _ name: String, _ props: OpaquePointer?, _ profiles: [PulseCardProfile], total: Int, active: Int?) {
        guard
            let device = PulseProperties.device(index: index, name: name, profiles: profiles, active: active, value: { key in
                arpa_proplist_gets(props, key).map { String(cString: $0) }
            })
        else { return }
        let known = devices[index]
        guard known != nil || devices.count < PipeWireDevice.maximumDevices else {
            return onNotice("card \(index) left out: \(PipeWireDevice.maximumDevices) devices followed already")
        }
        guard known != device else { return }
        if device.profiles.count < total {
            onNotice("card \(index): \(total - device.profiles.count) profiles left out (over \(PipeWireDevice.maximumProfiles), or a name over \(PipeWireProfile.maximumTextLength) bytes)")
        }
        devices[index] = device
        if connected { onEvent(.device(device, added: known == nil)) }
    }

    private func object(_ rawFacility: Int32, _ index: UInt32, _ name: String?, _ monitor: Bool, _ props: OpaquePointer?, _ reading: PulseStreamReading?) {
        // A sink's monitor is PulseAudio's own view of the sink, not a device to route to.
        guard let facility = PulseFacility(rawValue: rawFacility), !monitor else { return }
        guard let id = facility.nodeID(index) else { return onNotice("\(facility) \(index) left out: its index is past \(PulseFacility.maximumIndex)") }
        let known = reported[id]
        guard known != nil || reported.count < Self.maximumNodes else {
            return onNotice("\(facility) \(index) left out: \(Self.maximumNodes) objects followed already")
        }
        let node = PulseProperties.node(id: id, facility: facility, name: name) { key in
            arpa_proplist_gets(props, key).map { String(cString: $0) }
        }
        // A stream's volume and mute; a report older than a request of ours is not taken.
        if let reading, streamRequests[id] == nil {
            if readings[id] != reading {
                onInfo("stream \(id) is now \(reading.muted ? "muted" : "unmuted") at volume \(reading.volume)")
            }
            readings[id] = reading
            if holds[id]?.observe(reading) == true, let saved = holds[id]?.userVolume {
                onInfo("stream \(id): its volume changed while lowered: the user's volume is now \(saved), given back after")
            }
        }
        guard known != node else { return }
        reported[id] = node
        // Objects listed before the hello are reported after it, in id order.
        if connected { onEvent(.node(node, added: known == nil)) }
    }

    private func removed(_ rawFacility: Int32, _ index: UInt32) {
        if rawFacility == Int32(ARPA_CARD.rawValue) {
            if devices.removeValue(forKey: index) != nil && connected { onEvent(.deviceRemoved(id: index)) }
            return
        }
        guard let facility = PulseFacility(rawValue: rawFacility), let id = facility.nodeID(index) else { return }
        // A stream gone: what was held of it is forgotten.
        readings[id] = nil
        holds[id] = nil
        if reported.removeValue(forKey: id) != nil && connected { onEvent(.removed(id: id)) }
    }

    private func done(_ tag: UInt32, _ result: Int32) {
        switch pending.removeValue(forKey: tag) {
        case nil: return
        case .stream(let id, let refused)?:
            if let count = streamRequests[id] { streamRequests[id] = count > 1 ? count - 1 : nil }
            if result != 0 {
                onEvent(.streamFailed(id: id, message: "the server refused it: error \(-result)\(result == -2 ? " (no such stream)" : "")"))
            } else {
                onEvent(refused.map { .streamFailed(id: id, message: $0) } ?? .streamSet(id: id))
            }
        case .defaults(let defaults)?:
            defaultsDone(defaults, result)
        case .profile(let request, let name)?:
            if result == 0 {
                onEvent(.profileSet(request))
            } else {
                onEvent(.profileFailed(request, message: "the server refused profile \"\(name)\": error \(-result)\(result == -2 ? " (no such card or profile)" : "")"))
            }
        }
    }

    private func defaultsDone(_ defaults: PipeWireDefaults, _ result: Int32) {
        if result == 0 {
            onEvent(.defaultsSet(defaults))
        } else {
            onEvent(.defaultsFailed(defaults, message: "the server refused it: error \(-result)\(result == -2 ? " (no such sink or source)" : "")"))
        }
    }

    private func failed(_ result: Int32, _ message: String) {
        disconnected = disconnected ?? "\(message) (error \(-result))"
    }
}
