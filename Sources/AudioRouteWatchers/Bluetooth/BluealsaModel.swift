// BlueALSA's PCM list (org.bluealsa, org.bluealsa.PCM1 objects): when BlueALSA
// is on the bus, it is the truth for which A2DP/HFP profiles can be opened.

import AudioRouteDBus

/// One org.bluealsa.PCM1 object.
public struct BluealsaPCM: Sendable, Hashable {
    /// The BlueZ device object path.
    public var device: String?
    /// BlueALSA's transport name: "A2DP-source", "A2DP-sink", "HFP-AG", "HFP-HF", "HSP-AG", "HSP-HS"
    /// (BlueALSA 4.0.0 src/bluealsa-iface.h `BLUEALSA_TRANSPORT_TYPE_*`, doc/bluealsa-api.txt). Like
    /// BlueZ's transport UUIDs it names this machine's role: `bluealsa -p a2dp-source -p hfp-ag`
    /// on the computer gives "A2DP-source" and "HFP-AG" PCMs for the headset.
    public var transport: String?
    /// "sink" (we write to it) or "source" (we read from it): `BLUEALSA_PCM_MODE_*` in 4.0.0.
    public var mode: String?

    public init(device: String? = nil, transport: String? = nil, mode: String? = nil) {
        self.device = device
        self.transport = transport
        self.mode = mode
    }

    /// The port profile the PCM serves. A2DP-source / HFP-AG / HSP-AG mean this host plays to
    /// a headset; the sink/HF/HS roles mean a phone sends us audio, which is not an output port.
    public var profile: BluetoothProfile? {
        switch transport {
        case "A2DP-source"?: return .a2dp
        case "HFP-AG"?, "HSP-AG"?: return .hfp
        default: return nil
        }
    }
}

/// BlueALSA's PCMs, by object path.
public struct BluealsaPCMs: ObjectManagerModel, Sendable, Hashable {
    public var pcms: [String: BluealsaPCM] = [:]

    public static let serviceName = "org.bluealsa"
    public static let managerPath = "/org/bluealsa"
    public static let pcmInterface = "org.bluealsa.PCM1"

    public init() {}

    public mutating func applyInterfacesAdded(path: String, interfaces: DBusValue) -> [BluezFault] {
        guard let byInterface = interfaces.stringKeyed else {
            return [BluezFault(.malformedMessage, path, "interfaces are \(interfaces.typeName), not a{sa{sv}}")]
        }
        var faults: [BluezFault] = []
        for (interface, properties) in byInterface where interface == Self.pcmInterface {
            guard let pairs = properties.stringKeyed else {
                faults.append(BluezFault(.malformedMessage, path, "properties are \(properties.typeName), not a{sv}"))
                continue
            }
            var pcm = pcms[path] ?? BluealsaPCM()
            for (key, wrapped) in pairs {
                let value = wrapped.unwrapped
                switch (key, value) {
                case ("Device", .objectPath(let device)): pcm.device = device
                case ("Transport", .string(let transport)): pcm.transport = transport
                case ("Mode", .string(let mode)): pcm.mode = mode
                case ("Device", _), ("Transport", _), ("Mode", _):
                    faults.append(BluezFault(.wrongType, path, "\(key) is \(value.typeName)"))
                default: continue
                }
            }
            pcms[path] = pcm
        }
        return faults
    }

    public mutating func applyInterfacesRemoved(path: String, interfaces: [String]) {
        if interfaces.contains(Self.pcmInterface) { pcms[path] = nil }
    }

    /// The profiles BlueALSA can open for a BlueZ device (by its object path).
    public func profiles(forDevice path: String) -> Set<BluetoothProfile> {
        var result: Set<BluetoothProfile> = []
        for pcm in pcms.values where pcm.device == path {
            if let profile = pcm.profile { result.insert(profile) }
        }
        return result
    }
}
