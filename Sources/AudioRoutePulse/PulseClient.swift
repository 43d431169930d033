// The helper's PulseAudio side (docs/daemon.md, "The PulseAudio helper"): a libpulse client on
// a pa_mainloop whose poll is the caller's (CPulse's shim), subscribed to sinks, sources and
// streams, turning what the server says into the PipeWire helper's protocol events, so that the
// daemon reads one protocol for both servers. One thread: every callback runs inside `wait`.
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
    /// Set when the connection failed or ended: the caller stops.
    public private(set) var disconnected: String?
    /// Whether the hello was sent (the first round is done).
    public private(set) var connected = false

    /// The most objects followed at once; the rest are left out (memory stays bounded whatever
    /// the server lists).
    public static let maximumNodes = 1024

    private var client: OpaquePointer?
    private var reported: [UInt32: PipeWireNode] = [:]
    private var pending: [UInt32: PipeWireDefaults] = [:]
    private var nextTag: UInt32 = 0

    /// A client not yet connected (`connect()`).
    public init() {}

    /// Starts connecting; the hello follows once the server listed everything.
    public func connect() throws(PulseError) {
        var callbacks = arpa_callbacks()
        callbacks.ready = { data, name, version in
            Unmanaged<PulseClient>.fromOpaque(data!).takeUnretainedValue().ready(name: String(cString: name!), version: String(cString: version!))
        }
        callbacks.object = { data, facility, index, name, monitor, props in
            Unmanaged<PulseClient>.fromOpaque(data!).takeUnretainedValue().object(facility, index, name.map { String(cString: $0) }, monitor != 0, props)
        }
        callbacks.removed = { data, facility, index in Unmanaged<PulseClient>.fromOpaque(data!).takeUnretainedValue().removed(facility, index) }
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
        pending[tag] = defaults
        let result = arpa_client_set_defaults(client, defaults.sink, defaults.source, tag)
        if result < 0, pending.removeValue(forKey: tag) != nil {
            onEvent(.defaultsFailed(defaults, message: "not sent: error \(-result)"))
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
    }

    private func object(_ rawFacility: Int32, _ index: UInt32, _ name: String?, _ monitor: Bool, _ props: OpaquePointer?) {
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
        guard known != node else { return }
        reported[id] = node
        // Objects listed before the hello are reported after it, in id order.
        if connected { onEvent(.node(node, added: known == nil)) }
    }

    private func removed(_ rawFacility: Int32, _ index: UInt32) {
        guard let facility = PulseFacility(rawValue: rawFacility), let id = facility.nodeID(index) else { return }
        if reported.removeValue(forKey: id) != nil && connected { onEvent(.removed(id: id)) }
    }

    private func done(_ tag: UInt32, _ result: Int32) {
        guard let defaults = pending.removeValue(forKey: tag) else { return }
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
