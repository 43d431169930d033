// The helper's PipeWire side (docs/daemon.md, "The PipeWire helper"): a libpipewire client on
// one loop the caller polls, through CPipeWire's shim. It binds the `default` metadata and every
// audio node (the registry shows only a few of a node's properties; the node's info has them
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

    /// Whether a request waits for the server's answer.
    public var waiting: Bool { !pending.isEmpty || !streams.isEmpty }

    /// Disconnects and frees every node.
    public func close() {
        for node in nodes.values { arpw_node_free(node) }
        nodes = [:]
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
            return
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
        onNotice("the server said: object \(id): \(message) (error \(-res))")
        if id == 0 { disconnected = "the server's error: \(message)" }
    }
}
