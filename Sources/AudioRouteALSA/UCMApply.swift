// Applying a route on a UCM card (docs/ucm.md, "Applying a route"): the steps that
// AudioRouteCore's UCMPlan orders, carried out with snd_use_case_set on an open manager,
// which then knows what it has set.
import AudioRouteCore
import CALSA

/// Why a verb and devices could not be made current on a UCM card.
public enum UCMApplyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration has no such verb; `known` are its verbs. Nothing was changed.
    case unknownVerb(String, known: [String])
    /// The verb has no such device; `known` are its devices. Nothing was changed.
    case unknownDevice(String, verb: String, known: [String])
    /// Devices were asked for with no verb (UCM enables devices only under a verb).
    case devicesWithoutVerb([String])
    /// A device was listed twice.
    case repeatedDevice(String)
    /// libasound refused a step; `done` went through before it. The manager's state is
    /// libasound's after the failure.
    case stepFailed(UCMStep, ALSAError, done: [UCMStep])
    /// Listing the configuration's verbs or devices failed. Nothing was changed.
    case configuration(ALSAError)

    public var description: String {
        func names(_ list: [String]) -> String { list.map { "\"\($0)\"" }.joined(separator: ", ") }
        switch self {
        case .unknownVerb(let verb, let known): return "unknown verb \"\(verb)\" (the card's verbs: \(names(known)))"
        case .unknownDevice(let device, let verb, let known):
            return "unknown device \"\(device)\" for verb \"\(verb)\" (its devices: \(names(known)))"
        case .devicesWithoutVerb(let devices): return "devices \(names(devices)) need a verb"
        case .repeatedDevice(let device): return "device \"\(device)\" listed twice"
        case .stepFailed(let step, let error, let done):
            let before = done.isEmpty ? "nothing done before it" : "done before it: " + done.map(\.description).joined(separator: ", ")
            return "\"\(step)\" failed: \(error) (\(before))"
        case .configuration(let error): return "cannot list the configuration: \(error)"
        }
    }
}

extension UCMManager {
    /// snd_use_case_set(identifier, value): "_verb", "_enadev", "_disdev".
    public func set(_ identifier: String, _ value: String) throws(ALSAError) {
        try ALSAError.check(snd_use_case_set(handle, identifier, value), "snd_use_case_set \(identifier) \(value)")
    }

    /// Makes `target` current: its verb (nil: none, UCM's "Inactive") with exactly its
    /// devices enabled, in UCMPlan's order, so that no two devices are ever on together
    /// unless the current or the target state has both. Returns the steps taken (none
    /// when `target` is already current); `state` is then `target`.
    ///
    /// An unknown verb or device changes nothing. When libasound refuses a step, the steps
    /// after it are not tried and `state` becomes what libasound says is current.
    ///
    /// Enabling a device also turns on the switches the profile names for it (`PlaybackSwitch`,
    /// the `PlaybackMixerElem` and `PlaybackMasterElem` elements' switches, and for capture the
    /// same): a sound server does so through the device's mixer path when the port becomes
    /// active (PulseAudio's and PipeWire's UCM paths), and some profiles' sequences leave that
    /// to it (HDA's DualCodecs: the Speaker's DisableSequence mutes "Speaker Playback Switch",
    /// nothing in the profile unmutes it). What cannot be unmuted is in `unmuteFailures`.
    @discardableResult
    public mutating func apply(_ target: UCMState) throws(UCMApplyError) -> [UCMStep] {
        try check(target)
        unmuteFailures = []
        let steps = UCMPlan.steps(from: state, to: target)
        var done: [UCMStep] = []
        for step in steps {
            do throws(ALSAError) {
                switch step {
                case .disable(let device): try set("_disdev", device)
                case .setVerb(let verb): try set("_verb", verb ?? SND_USE_CASE_VERB_INACTIVE)
                case .enable(let device):
                    try set("_enadev", device)
                    unmute(device, verb: target.verb)
                }
            } catch {
                state = current() ?? UCMPlan.apply(step, to: state)
                throw .stepFailed(step, error, done: done)
            }
            state = UCMPlan.apply(step, to: state)
            done.append(step)
        }
        // The same devices; in the order asked for, which is what the caller compares with.
        state = UCMState(verb: target.verb, devices: target.devices)
        return steps
    }

    /// Turns the device's switches on (every channel): its `PlaybackSwitch` / `CaptureSwitch`
    /// controls, on the control device the profile names for them (`PlaybackCTL`, which may be
    /// this process's `_ucmNNNN.` name), else the card's; and the switches of the simple mixer
    /// elements it names in `PlaybackMixerElem` / `PlaybackMasterElem` (and their Capture
    /// twins), on `PlaybackMixer` (else `PlaybackCTL`, else the card). An element with a volume
    /// and no switch has nothing to turn on.
    private mutating func unmute(_ device: String, verb: String?) {
        guard let verb else { return }
        let cardControl = card.hasPrefix("hw:") ? card : "hw:" + card
        for direction in ["Playback", "Capture"] {
            func value(_ key: String) -> String? { try? self.value("\(direction)\(key)/\(device)/\(verb)") }
            let controlDevice = value("CTL") ?? cardControl
            if let control = value("Switch") {
                do throws(ALSAError) {
                    try ALSACardControl(name: controlDevice).setBoolean(control, on: true)
                } catch {
                    unmuteFailures.append("\(device): \(direction)Switch: \(error)")
                }
            }
            let elements = [value("MixerElem"), value("MasterElem")].compactMap { $0 }
            guard !elements.isEmpty else { continue }
            do throws(ALSAError) {
                let mixer = try ALSASimpleMixer(name: value("Mixer") ?? controlDevice)
                for element in elements {
                    do throws(ALSAError) {
                        try mixer.switchOn(element, capture: direction == "Capture")
                    } catch {
                        unmuteFailures.append("\(device): \(direction) element \(element): \(error)")
                    }
                }
            } catch {
                unmuteFailures.append("\(device): \(direction) mixer: \(error)")
            }
        }
    }

    /// Refuses what libasound would refuse half-way: an unknown verb, an unknown device.
    private func check(_ target: UCMState) throws(UCMApplyError) {
        var seen: Set<String> = []
        for device in target.devices where !seen.insert(device).inserted { throw .repeatedDevice(device) }
        guard let verb = target.verb else {
            if !target.devices.isEmpty { throw .devicesWithoutVerb(target.devices) }
            return
        }
        let verbs: [String]
        let devices: [String]
        do throws(ALSAError) {
            verbs = UCMReader.pairs(try list("_verbs")).map(\.0)
            devices = verbs.contains(verb) ? UCMReader.pairs(try list("_devices/\(verb)")).map(\.0) : []
        } catch {
            throw .configuration(error)
        }
        guard verbs.contains(verb) else { throw .unknownVerb(verb, known: verbs) }
        for device in target.devices where !devices.contains(device) {
            throw .unknownDevice(device, verb: verb, known: devices)
        }
    }

    /// What libasound says is current: "_verb" and "_enadevs" (in the order enabled).
    /// Nil when it cannot say.
    public func current() -> UCMState? {
        do throws(ALSAError) {
            guard let verb = try value("_verb") else { return UCMState() }
            return UCMState(verb: verb, devices: try list("_enadevs"))
        } catch {
            return nil
        }
    }
}
