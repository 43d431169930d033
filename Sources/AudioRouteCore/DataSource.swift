// A port's data sources (AVAudioSessionDataSourceDescription): the several mics behind one
// built-in mic port, each a UCM device of the card's profile (docs/ucm.md). Which one is used is
// decided here, by small named rules, from the controlling session's preference; the UCM applier
// enables it and the route file opens its PCM.

/// One data source of a port: a UCM device behind a merged built-in mic.
public struct DataSource: Sendable, Hashable, Codable {
    /// The UCM device's name ("Mic1", "DMIC"): unique within the port.
    public var id: String
    /// A human name: the device's comment ("Internal Digital Microphone"), or its name.
    public var name: String
    /// The PCM it is read from, when known.
    public var alsa: ALSADevice?

    public init(id: String, name: String? = nil, alsa: ALSADevice? = nil) {
        self.id = id
        self.name = name ?? id
        self.alsa = alsa
    }

    /// Most data sources one port may carry (a phone has three or four mics).
    public static let maximumPerPort = 16
}

/// The rule that chose a port's data source.
public enum DataSourceRuleName: String, Sendable, Hashable, CaseIterable {
    /// The controlling session's preferred data source for the port.
    case preferredDataSource
    /// No usable preference: the first, the profile's highest priority.
    case profilePriority
}

/// A data source chosen for a port, and why.
public struct DataSourceSelection: Sendable, Hashable {
    public var source: DataSource
    public var rule: DataSourceRuleName
    /// A sentence for `explain`: why this one.
    public var reason: String

    /// The data source `port` uses when `preferred` is the controlling session's preference
    /// for it (nil: none): nil for a port without data sources. Rules, in order:
    /// 1. `preferredDataSource`: the preference, if it names one of the port's data sources;
    /// 2. `profilePriority`: the first data source (the profile lists them highest priority
    ///    first), also when the preference names a data source the port no longer has.
    public static func select(port: Port, preferred: String?) -> DataSourceSelection? {
        guard let first = port.dataSources.first else { return nil }
        if let preferred {
            if let source = port.dataSources.first(where: { $0.id == preferred }) {
                return DataSourceSelection(
                    source: source, rule: .preferredDataSource, reason: "the controlling session prefers \(source.id)")
            }
            return DataSourceSelection(
                source: first, rule: .profilePriority,
                reason: "the preferred \(preferred) is not one of the port's data sources: the profile's highest priority, \(first.id)")
        }
        return DataSourceSelection(source: first, rule: .profilePriority, reason: "no preference: the profile's highest priority, \(first.id)")
    }
}

extension DataSource {
    /// `{"id": ..., "name": ..., "alsa": ...}`.
    public var json: JSON {
        .object([
            JSON.Member("id", .string(id)), JSON.Member("name", .string(name)),
            JSON.Member("alsa", alsa.map { .string($0.description) } ?? .null),
        ])
    }
}
