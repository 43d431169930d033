// The order in which a UCM card (ALSA's Use Case Manager, docs/ucm.md) goes from one
// verb and set of devices to another. Pure: AudioRouteALSA carries the steps out through
// libasound, and the helper `audioroute-ucm` reports them as strings.

/// What is current on a UCM card: the verb ("HiFi", "Voice Call"), nil when none is
/// (UCM's "Inactive"), and the devices enabled, in the order they were enabled.
public struct UCMState: Sendable, Hashable, CustomStringConvertible {
    public var verb: String?
    public var devices: [String]

    public init(verb: String? = nil, devices: [String] = []) {
        self.verb = verb
        self.devices = devices
    }

    public var description: String { "\(verb ?? "Inactive") [\(devices.joined(separator: ", "))]" }
}

/// One change to a UCM card, as libasound's `snd_use_case_set` makes it.
public enum UCMStep: Sendable, Hashable, CustomStringConvertible {
    /// `_disdev`: runs the device's DisableSequence.
    case disable(String)
    /// `_verb`: the verb, or nil for "Inactive" (no verb: the old verb's DisableSequence runs).
    case setVerb(String?)
    /// `_enadev`: runs the device's EnableSequence.
    case enable(String)

    /// The helper protocol's form: "disable Earpiece", "verb Voice Call", "verb Inactive", "enable Speaker".
    public var description: String {
        switch self {
        case .disable(let device): return "disable \(device)"
        case .setVerb(let verb): return "verb \(verb ?? UCMPlan.inactive)"
        case .enable(let device): return "enable \(device)"
        }
    }
}

/// Plans the steps between two `UCMState`s so that no device is on with another it is on
/// with in neither state: Speaker and Earpiece, never both on when no state holds both.
public enum UCMPlan {
    /// UCM's name for "no verb" (SND_USE_CASE_VERB_INACTIVE).
    public static let inactive = "Inactive"

    /// The steps from `start` to `target`, in order:
    /// 1. the devices that go are disabled, in the order they were enabled; when the verb
    ///    changes, that is every enabled device, explicitly, rather than left to libasound;
    /// 2. the verb is set, if it changes;
    /// 3. the target's devices not yet on are enabled, in the target's order.
    /// Nothing when the states are equal. A target without a verb has no devices (UCM
    /// cannot enable one without a verb): its devices are not enabled. A device listed
    /// twice is enabled once.
    public static func steps(from start: UCMState, to target: UCMState) -> [UCMStep] {
        let verbChanges = start.verb != target.verb
        let wanted = target.verb == nil ? [] : target.devices
        let kept = verbChanges ? [] : start.devices.filter(wanted.contains)
        var steps: [UCMStep] = start.devices.filter { !kept.contains($0) }.map(UCMStep.disable)
        if verbChanges { steps.append(.setVerb(target.verb)) }
        var on = kept
        for device in wanted where !on.contains(device) {
            steps.append(.enable(device))
            on.append(device)
        }
        return steps
    }

    /// The state after `step` is carried out on `state`.
    public static func apply(_ step: UCMStep, to state: UCMState) -> UCMState {
        var state = state
        switch step {
        case .disable(let device): state.devices.removeAll { $0 == device }
        case .setVerb(let verb):
            // libasound disables whatever is still on when the verb changes.
            if verb != state.verb { state.devices = [] }
            state.verb = verb
        case .enable(let device): if !state.devices.contains(device) { state.devices.append(device) }
        }
        return state
    }
}
