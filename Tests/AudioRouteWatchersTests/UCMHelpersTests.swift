// The daemon's side of the UCM helper (UCMHelpers) against stand-in helpers (shell scripts):
// which card an answer is for when a card number comes back while answers for its previous
// card are still on their way, which failures are remembered for cards like it, and the
// watchdog of a helper that stops answering requests.
import AudioRouteCore
import AudioRouteSystem
import Foundation
import Synchronization
import Testing

@testable import AudioRouteUCMHelper
@testable import AudioRouteWatchers

@Suite struct UCMHelpersTests {
    /// A hello for `card`: one speaker.
    static func hello(_ card: String) -> String {
        #"{"card": "\#(card)", "verbs": ["HiFi"], "notes": [], "ports": [{"uid": "ucm:\#(card):Speaker", "type": "builtInSpeaker", "direction": "output", "#
            + #""device": "ucm:\#(card)", "name": "Speaker", "alsa": "\#(card),0", "devices": {"HiFi": ["Speaker"]}, "jackControl": null}], "jacks": {}}"#
    }

    /// A stand-in helper: `body` is the shell `case` over each line read (`$line`); it records
    /// every line in `lines`.
    static func helper(in directory: String, _ body: String) throws -> String {
        let path = directory + "/helper"
        try """
            #!/bin/sh
            while IFS= read -r line; do
              printf '%s\\n' "$line" >> "\(directory)/lines"
              case "$line" in
            \(body)
              esac
            done
            """.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    /// Runs `body` with `helpers` on a poll loop of their own and an event list; stops both after.
    static func running(_ helpers: UCMHelpers, _ body: (PollThread, Events) throws -> Void) throws {
        let loop = try PollThread(name: "ucm-test")
        defer {
            helpers.stopAll()
            loop.stop()
        }
        try body(loop, Events())
    }

    /// The events delivered, in order.
    final class Events: Sendable {
        let list = Mutex<[UCMAnswer]>([])
        func deliver(_ answer: UCMAnswer) { list.withLock { $0.append(answer) } }
        /// The cards' answers: syspath and whether it had ports.
        var answers: [String] {
            list.withLock { answers in
                answers.map { "\($0.syspath) \($0.card == nil ? "none" : "ports")" }
            }
        }
        /// Waits up to 10 s for `condition`.
        func wait(_ condition: () -> Bool) -> Bool {
            for _ in 0..<1000 where !condition() { usleep(10_000) }
            return condition()
        }
    }

    /// Card 1 goes while its open is still being answered, and a card with the same number
    /// comes at once: the helper (kept by card 0) answers the old open (the card had gone: an
    /// error), then the close, then the new open. Only the last is the new card's.
    @Test func answersForACardThatWentAreNotTheNextCardsOfItsNumber() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTree(directory) }
        let path = try Self.helper(
            in: directory,
            """
                '{"open": "hw:0"}') printf '%s\\n' '\(Self.hello("hw:0"))' ;;
                '{"open": "hw:1"}')
                  if [ -e "\(directory)/opened" ]; then printf '%s\\n' '\(Self.hello("hw:1"))'
                  else : > "\(directory)/opened"; sleep 0.3
                    printf '{"card": "hw:1", "error": "cannot open hw:1: No such device", "closed": true}\\n'; fi ;;
                '{"close": '*) printf '{"card": "%s", "closed": true}\\n' "$(echo "$line" | cut -d'"' -f4)" ;;
            """)
        let helpers = UCMHelpers(executable: path, logger: LogCapture().logger)
        try Self.running(helpers) { loop, events in
            let zero = UCMCardRequest(name: "hw:0", base: "card0", identity: "zero")
            let usb = UCMCardRequest(name: "hw:1", base: "usb-a", identity: "headset")
            helpers.reconcile(wanted: ["/card0": zero, "/usb-a/card1": usb], loop: loop, deliver: events.deliver)
            #expect(events.wait { events.answers == ["/card0 ports"] }, "\(events.answers)")
            // Unplugged, and another card on number 1 (another port of the hub), before any answer.
            helpers.reconcile(wanted: ["/card0": zero], loop: loop, deliver: events.deliver)
            let other = UCMCardRequest(name: "hw:1", base: "usb-b", identity: "headset")
            helpers.reconcile(wanted: ["/card0": zero, "/usb-b/card1": other], loop: loop, deliver: events.deliver)
            #expect(events.wait { events.answers.count == 2 }, "\(events.answers)")
            usleep(300_000)
            #expect(events.answers == ["/card0 ports", "/usb-b/card1 ports"])
            let lines = try String(contentsOfFile: directory + "/lines", encoding: .utf8).split(separator: "\n")
            #expect(lines == [#"{"open": "hw:0"}"#, #"{"open": "hw:1"}"#, #"{"close": "hw:1"}"#, #"{"open": "hw:1"}"#])
        }
    }

    /// Only "no profile" is remembered for every card like it: a card that failed otherwise (it
    /// went half-way through its open) is asked again when it comes back.
    @Test(arguments: [true, false]) func onlyANoProfileAnswerIsRememberedForCardsLikeIt(noProfile: Bool) throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTree(directory) }
        let flag = noProfile ? #", "noProfile": true"# : ""
        let path = try Self.helper(
            in: directory,
            """
                '{"open": '*) printf '{"card": "%s", "error": "no"\(flag), "closed": true}\\n' "$(echo "$line" | cut -d'"' -f4)" ;;
            """)
        let helpers = UCMHelpers(executable: path, logger: LogCapture().logger)
        try Self.running(helpers) { loop, events in
            let headset = UCMCardRequest(name: "hw:1", base: "usb-a", identity: "headset")
            helpers.reconcile(wanted: ["/usb-a/card1": headset], loop: loop, deliver: events.deliver)
            #expect(events.wait { events.answers == ["/usb-a/card1 none"] }, "\(events.answers)")
            helpers.reconcile(wanted: [:], loop: loop, deliver: events.deliver)
            helpers.reconcile(wanted: ["/usb-a/card1": headset], loop: loop, deliver: events.deliver)
            #expect(events.wait { events.answers.count == 2 }, "\(events.answers)")
            usleep(100_000)
            let opens = ((try? String(contentsOfFile: directory + "/lines", encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix(#"{"open""#) }
            // Remembered: answered without asking; not: asked again.
            #expect(opens.count == (noProfile ? 1 : 2), "\(opens)")
        }
    }

    /// What the card's enabled devices are known to be (`UCMCard.enabled`, for the built-in mic's
    /// mute): none at the hello, unknown while a request is on its way, the reply's once the last
    /// request owed is answered (an older request's reply is not what the card is now).
    @Test func theRepliesTellWhatIsEnabledOnceNoneIsOwed() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTree(directory) }
        // Each request answered 0.3 s late, as carried out: both are written before the first reply.
        let path = try Self.helper(
            in: directory,
            """
                '{"open": "hw:0"}') printf '%s\\n' '\(Self.hello("hw:0"))' ;;
                *) sleep 0.3; printf '%s, "steps": []}\\n' "${line%?}" ;;
            """)
        let helpers = UCMHelpers(executable: path, logger: LogCapture().logger)
        try Self.running(helpers) { loop, events in
            let enabled = { events.list.withLock { $0.map { $0.card?.enabled.map(\.description) ?? "unknown" } } }
            helpers.reconcile(wanted: ["/card0": UCMCardRequest(name: "hw:0", base: "card0")], loop: loop, deliver: events.deliver)
            #expect(events.wait { enabled() == ["Inactive []"] }, "\(enabled())")
            helpers.apply(route: Route(outputs: ["card0/speaker"]), configuration: nil)
            helpers.apply(route: Route(outputs: []), configuration: nil)
            #expect(events.wait { enabled().count == 3 }, "\(enabled())")
            usleep(400_000)
            #expect(enabled() == ["Inactive []", "unknown", "Inactive []"])
            let requests = ((try? String(contentsOfFile: directory + "/lines", encoding: .utf8)) ?? "").split(separator: "\n").dropFirst()
            #expect(requests == [#"{"card": "hw:0", "verb": "HiFi", "devices": ["Speaker"]}"#, #"{"card": "hw:0", "verb": null, "devices": []}"#])
        }
    }

    /// A helper that stops answering requests (stuck in a sequence) is killed once the answer is
    /// overdue: every card goes back to udev.
    @Test func aHelperThatDoesNotAnswerARequestIsKilled() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeTree(directory) }
        let path = try Self.helper(
            in: directory,
            """
                '{"open": "hw:0"}') printf '%s\\n' '\(Self.hello("hw:0"))' ;;
                *) exec sleep 30 ;;
            """)
        let logs = LogCapture()
        let helpers = UCMHelpers(executable: path, answerTimeout: .milliseconds(300), logger: logs.logger)
        try Self.running(helpers) { loop, events in
            helpers.reconcile(wanted: ["/card0": UCMCardRequest(name: "hw:0", base: "card0")], loop: loop, deliver: events.deliver)
            #expect(events.wait { events.answers == ["/card0 ports"] }, "\(events.answers)")
            helpers.apply(route: Route(outputs: ["card0/speaker"]), configuration: nil)
            // The request on its way (the card, its state not known until the reply), then the
            // helper killed.
            #expect(events.wait { events.answers == ["/card0 ports", "/card0 ports", "/card0 none"] }, "\(events.answers)")
            let records = logs.records.withLock { $0.map { "\($0.level) \($0.message)" } }
            #expect(logs.count(.error, containing: "UCM helper did not answer: killed") == 1, "\(records)")
        }
    }
}
