// The order of a UCM card's verb and device changes (UCMPlan, docs/ucm.md "Applying a
// route"): the PinePhone's call cases by hand, then a property over random states.
import AudioRouteCore
import PropertyBased
import Testing

private func state(_ verb: String?, _ devices: [String]) -> UCMState { UCMState(verb: verb, devices: devices) }
private func plan(_ from: UCMState, _ to: UCMState) -> [String] { UCMPlan.steps(from: from, to: to).map(\.description) }

@Suite struct UCMPlanTests {
    @Test func aCallToTheEarpieceDisablesTheSpeakerBeforeTheVerb() {
        #expect(plan(state("HiFi", ["Speaker", "DigitalMic"]), state("Voice Call", ["Earpiece", "DigitalMic"])) == [
            "disable Speaker", "disable DigitalMic", "verb Voice Call", "enable Earpiece", "enable DigitalMic",
        ])
    }

    @Test func withinAVerbOnlyTheDevicesThatChangeAreTouched() {
        #expect(plan(state("Voice Call", ["Earpiece", "DigitalMic"]), state("Voice Call", ["Speaker", "DigitalMic"])) == [
            "disable Earpiece", "enable Speaker",
        ])
        #expect(plan(state("HiFi", ["Speaker"]), state("HiFi", ["Speaker"])) == [])
        #expect(plan(state(nil, []), state(nil, [])) == [])
    }

    @Test func theProtocolsExample() {
        #expect(plan(state("HiFi", ["Earpiece"]), state("Voice Call", ["Speaker", "DigitalMic"])) == [
            "disable Earpiece", "verb Voice Call", "enable Speaker", "enable DigitalMic",
        ])
    }

    @Test func fromAndToInactive() {
        #expect(plan(state(nil, []), state("HiFi", ["Speaker"])) == ["verb HiFi", "enable Speaker"])
        #expect(plan(state("HiFi", ["Speaker", "DigitalMic"]), state(nil, [])) == [
            "disable Speaker", "disable DigitalMic", "verb Inactive",
        ])
        // Devices need a verb: a target without one enables none.
        #expect(plan(state("HiFi", ["Speaker"]), state(nil, ["Speaker"])) == ["disable Speaker", "verb Inactive"])
        #expect(UCMStep.setVerb(nil).description == "verb Inactive")
    }

    @Test func aDeviceListedTwiceIsEnabledOnce() {
        #expect(plan(state("HiFi", []), state("HiFi", ["Speaker", "Speaker"])) == ["enable Speaker"])
    }

    @Test func applyingTheStepsReachesTheTarget() {
        let start = state("HiFi", ["Speaker", "DigitalMic"])
        let target = state("Voice Call", ["Earpiece", "DigitalMic"])
        let end = UCMPlan.steps(from: start, to: target).reduce(start) { UCMPlan.apply($1, to: $0) }
        #expect(end == target)
        // libasound drops what is still on when the verb changes.
        #expect(UCMPlan.apply(.setVerb("Voice Call"), to: start) == state("Voice Call", []))
    }
}

// MARK: Property

private let deviceNames = ["Speaker", "Earpiece", "Headphone", "DigitalMic", "HeadsetMic", "Mic2"]

private func randomState(using rng: inout some RandomNumberGenerator) -> UCMState {
    let verb = [nil, "HiFi", "Voice Call", "Voice Call"].randomElement(using: &rng)!
    guard verb != nil else { return UCMState() }
    let devices = deviceNames.shuffled(using: &rng).filter { _ in Int.random(in: 0..<3, using: &rng) == 0 }
    return UCMState(verb: verb, devices: devices)
}

struct UCMTransition: Sendable, CustomStringConvertible {
    var start: UCMState
    var target: UCMState
    var description: String { "\(start) → \(target)" }
}

private let transitions = Generator<UCMTransition, Shrink.None<UCMTransition>> { rng in
    let start = randomState(using: &rng)
    // Often the same verb, where devices stay on across the change.
    var target = randomState(using: &rng)
    if start.verb != nil, Bool.random(using: &rng) { target.verb = start.verb }
    return UCMTransition(start: start, target: target)
}

@Suite("Properties: UCM plan")
struct UCMPlanProperties {
    @Test("every intermediate state is within the start or within the target, and the steps reach the target")
    func neverTwoDevicesThatNoStateHoldsTogether() async {
        await propertyCheck(count: 2000, input: transitions) { t in
            let steps = UCMPlan.steps(from: t.start, to: t.target)
            let start = Set(t.start.devices), target = Set(t.target.devices)
            var current = t.start
            for step in steps {
                current = UCMPlan.apply(step, to: current)
                let on = Set(current.devices)
                #expect(on.isSubset(of: start.union(target)), "after \(step)")
                // No two devices on together that are together in neither state: Speaker + Earpiece.
                for a in on {
                    for b in on where a < b {
                        let together = (start.contains(a) && start.contains(b)) || (target.contains(a) && target.contains(b))
                        #expect(together, "\(a) and \(b) both on after \(step)")
                    }
                }
                // Stronger: the whole set is one of the two states' (partly).
                #expect(on.isSubset(of: start) || on.isSubset(of: target), "after \(step)")
                // Devices change only under a verb: none is enabled before the target's verb is set.
                if case .enable = step { #expect(current.verb == t.target.verb) }
            }
            // The target reached (devices kept on stay in their place: compared as sets).
            #expect(current.verb == t.target.verb && Set(current.devices) == target, "steps \(steps)")
            // Equal states need nothing; no step is repeated.
            if t.start == t.target { #expect(steps.isEmpty) }
            #expect(Set(steps).count == steps.count)
            // Disables come first, then at most one verb, then enables.
            let rank = steps.map { step -> Int in
                switch step {
                case .disable: return 0
                case .setVerb: return 1
                case .enable: return 2
                }
            }
            #expect(rank == rank.sorted())
            #expect(rank.filter { $0 == 1 }.count == (t.start.verb == t.target.verb ? 0 : 1))
        }
    }
}
