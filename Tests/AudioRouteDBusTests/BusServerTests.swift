// BusServer on a private dbus-daemon: replies and signals are sent by the thread
// that has them, while the server's own thread, or an executor's loop (as in
// audiorouted), reads the connection. Each test runs both ways.
@testable import AudioRouteWatchers
@testable import AudioRouteDBus
import AudioRouteSystem
import AudioRouteTestKit
import Glibc
import Logging
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct BusServerTests {
    static let name = "org.audioroute.ServerTest"
    static let path = "/org/audioroute/ServerTest"
    static let interface = "org.audioroute.ServerTest"

    /// A loop for the suite's servers that read on an executor (`run()` never returns: one thread).
    static let loop: SingleThreadExecutor = {
        let executor = SingleThreadExecutor()
        _ = startThread { executor.run() }
        return executor
    }()

    /// The suite's methods; "Echo" answers its arguments.
    static let contract = BusContract(
        methods: [interface: ["Echo": "si", "List": "as"]], limits: DecodeLimits(maxValues: 16, maxStringBytes: 1024, maxBytes: 4096))

    static func start(_ bus: PrivateBus, onLoop: Bool) async throws -> BusServer {
        try await BusServer.start(
            bus: .address(bus.address), name: name, objectPath: path, contract: contract, executor: onLoop ? loop : nil, logger: Logger(label: "test"))
    }

    /// More than the socket takes while the bus daemon reads nothing (it is stopped): sd-bus
    /// queues the rest, and only the reading loop's poll for POLLOUT sends it once the bus
    /// reads again (on an executor: its source asks for POLLOUT, and the sender wakes the
    /// loop). Each signal must arrive whole and in order.
    @Test(arguments: [false, true]) func signalsTheSocketCannotTakeAreSentWhenItCan(onLoop: Bool) async throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let server = try await Self.start(bus, onLoop: onLoop)
        defer { server.stop() }
        let client = try await DBusClientConnection.connect(.address(bus.address))
        defer { client.close() }
        try await client.addMatch("type='signal',interface='\(Self.interface)'")

        // 24 MB against sd-bus's 8 MiB send buffer.
        let sizes = (1...12).map { 2_000_000 + $0 }
        bus.suspend()
        // Let the reading loop fall asleep first, waiting for input only: the senders must wake it.
        try await Task.sleep(for: .milliseconds(100))
        // From a thread that is not the server's, as the daemon's loop sends.
        await Task.detached {
            for (index, size) in sizes.enumerated() {
                server.emit(
                    path: Self.path, interface: Self.interface, member: "Big", signature: "us",
                    values: [.uint32(UInt32(index)), .string(String(repeating: "x", count: size))])
            }
        }.value
        bus.resume()
        let received = Mutex<[(Int, Int)]>([])
        let reading = Task {
            for await signal in client.signals where signal.member == "Big" {
                guard case .uint32(let index) = signal.arguments.first, case .string(let text) = signal.arguments.last else { break }
                let count = received.withLock {
                    $0.append((Int(index), text.utf8.count))
                    return $0.count
                }
                if count == sizes.count { break }
            }
        }
        // Without the server thread's POLLOUT the queued rest would never leave: fail in 20 s, not hang.
        for _ in 0..<2000 where received.withLock({ $0.count }) < sizes.count { try await Task.sleep(for: .milliseconds(10)) }
        reading.cancel()
        let got = received.withLock { $0 }
        #expect(got.map(\.0) == Array(0..<sizes.count))
        #expect(got.map(\.1) == sizes)
    }

    /// Several threads emit while a client's calls are read by the server thread and answered
    /// from yet another: every call gets its own answer, every signal arrives, and each
    /// sender's signals keep their order.
    @Test(arguments: [false, true]) func concurrentSendersAndCallsShareTheConnection(onLoop: Bool) async throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let server = try await Self.start(bus, onLoop: onLoop)
        defer { server.stop() }
        let answering = Task.detached {
            for await event in server.events {
                guard case .call(let call) = event else { continue }
                server.reply(call.token, call.arguments, signature: call.signature)
            }
        }
        defer { answering.cancel() }
        let listener = try await DBusClientConnection.connect(.address(bus.address))
        defer { listener.close() }
        try await listener.addMatch("type='signal',interface='\(Self.interface)'")
        let caller = try await DBusClientConnection.connect(.address(bus.address))
        defer { caller.close() }

        let senders = 4
        let each = 300
        let emitting = Task.detached {
            await withTaskGroup(of: Void.self) { group in
                for sender in 0..<senders {
                    group.addTask {
                        for index in 0..<each {
                            server.emit(
                                path: Self.path, interface: Self.interface, member: "Tick", signature: "uu",
                                values: [.uint32(UInt32(sender)), .uint32(UInt32(index))])
                        }
                    }
                }
            }
        }
        for index in 0..<100 {
            let reply = try await caller.call(
                destination: Self.name, path: Self.path, interface: Self.interface, member: "Echo", signature: "si",
                arguments: [.string("call \(index)"), .int32(Int32(index))])
            #expect(reply == [.string("call \(index)"), .int32(Int32(index))])
        }
        await emitting.value

        var next = [Int](repeating: 0, count: senders)
        var outOfOrder: [String] = []
        var count = 0
        for await signal in listener.signals where signal.member == "Tick" {
            guard case .uint32(let sender) = signal.arguments.first, case .uint32(let index) = signal.arguments.last else { break }
            if Int(index) != next[Int(sender)] { outOfOrder.append("sender \(sender): \(index) after \(next[Int(sender)] - 1)") }
            next[Int(sender)] = Int(index) + 1
            count += 1
            if count == senders * each { break }
        }
        #expect(outOfOrder.isEmpty)
        #expect(next == [Int](repeating: each, count: senders))
    }

    /// Calls the contract does not allow are answered by the server at once, and never
    /// reported: a wrong signature or member before any argument is read, arguments past
    /// the limits while they are read, a path too long or outside the served one.
    @Test(arguments: [false, true]) func callsOutsideTheContractAreRefusedAtOnce(onLoop: Bool) async throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let server = try await Self.start(bus, onLoop: onLoop)
        defer { server.stop() }
        let caller = try await DBusClientConnection.connect(.address(bus.address))
        defer { caller.close() }
        func refusal(path: String = Self.path, interface: String = Self.interface, _ member: String, _ signature: String, _ arguments: [DBusValue]) async -> String {
            do {
                let reply = try await caller.call(
                    destination: Self.name, path: path, interface: interface, member: member, signature: signature, arguments: arguments)
                return "answered: \(reply)"
            } catch {
                return "\(error)"
            }
        }
        let cases: [(String, String)] = [
            (await refusal("Echo", "s", [.string("x")]), "org.freedesktop.DBus.Error.InvalidArgs: Echo: expected signature \"si\", got \"s\""),
            (await refusal("Nope", "", []), "org.freedesktop.DBus.Error.UnknownMethod: \(Self.interface) has no method Nope"),
            (await refusal(interface: "org.example.Other", "Echo", "si", [.string("x"), .int32(1)]), "org.freedesktop.DBus.Error.UnknownInterface: no interface org.example.Other"),
            (
                await refusal("Echo", "si", [.string(String(repeating: "x", count: 1025)), .int32(1)]),
                "org.freedesktop.DBus.Error.InvalidArgs: unreadable arguments: read message: a string of more than 1024 bytes; at most 1024 are accepted"
            ),
            (
                await refusal("List", "as", [.array((0..<16).map { _ in .string("a") })]),
                "org.freedesktop.DBus.Error.InvalidArgs: unreadable arguments: read message: more than 16 values; at most 16 are accepted"
            ),
            (
                await refusal("List", "as", [.array((0..<5).map { _ in .string(String(repeating: "b", count: 1000)) })]),
                "org.freedesktop.DBus.Error.InvalidArgs: unreadable arguments: read message: arguments of more than 4096 bytes; at most 4096 are accepted"
            ),
            (await refusal(path: Self.path + "/" + String(repeating: "p", count: 300), "Echo", "si", [.string("x"), .int32(1)]), "org.freedesktop.DBus.Error.UnknownObject: an object path of more than 255 bytes"),
            (await refusal(path: "/org/example", "Echo", "si", [.string("x"), .int32(1)]), "org.freedesktop.DBus.Error.UnknownObject: no object at /org/example"),
        ]
        for (got, expected) in cases { #expect(got == expected) }
        #expect(server.callsReported == 0)
        // Within the contract: reported.
        let answering = Task.detached {
            for await event in server.events {
                guard case .call(let call) = event else { continue }
                server.reply(call.token, [.uint32(UInt32(call.arguments.count))], signature: "u")
            }
        }
        defer { answering.cancel() }
        let reply = try await caller.call(
            destination: Self.name, path: Self.path, interface: Self.interface, member: "List", signature: "as",
            arguments: [.array((0..<15).map { _ in .string("a") })])
        #expect(reply == [.uint32(1)])
        #expect(server.callsReported == 1)
    }

    /// On a loop, a flood of calls is read `messagesPerTurn` at a time, with the loop's other
    /// jobs run in between: a job that keeps rescheduling itself sees the count of calls read
    /// grow by at most two turns between its runs (without the limit, by everything waiting).
    @Test func aFloodOfCallsLeavesTheLoopToItsOtherJobs() async throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        // The name and path the flooding script calls.
        let server = try await BusServer.start(
            bus: .address(bus.address), name: "org.audioroute.AudioRoute1", objectPath: "/org/audioroute/AudioRoute1",
            contract: BusContract(
                methods: ["org.freedesktop.DBus.Properties": ["Get": "ss"]], limits: DecodeLimits(maxValues: 16, maxStringBytes: 1024, maxBytes: 4096)),
            maxPendingPerSender: 100_000, executor: Self.loop, logger: Logger(label: "test"))
        defer { server.stop() }
        let count: UInt64 = 3000
        // The loop is held while the flood arrives, so that it then finds many calls waiting at once.
        Self.loop.schedule { usleep(1_000_000) }
        let flood = try ChildProcess("/usr/bin/python3", [UmockdevTestbed.packageRoot + "/Tests/Fixtures/dbus/client.py", bus.address, "flood", "\(count)"])
        defer {
            flood.signal(SIGKILL)
            _ = flood.wait(seconds: 5)
        }
        let samples = Mutex<(read: [UInt64], done: Bool)>(([], false))
        @Sendable func tick() {
            let read = server.callsReported
            let more = samples.withLock { state -> Bool in
                state.read.append(read)
                state.done = state.done || read >= count
                return !state.done
            }
            if more { Self.loop.schedule(tick) }
        }
        Self.loop.schedule(tick)
        for _ in 0..<3000 where !samples.withLock({ $0.done }) { try await Task.sleep(for: .milliseconds(10)) }
        let read = samples.withLock { $0.read }
        #expect(read.last == count, "calls read: \(read.last ?? 0) of \(count)")
        let largest = zip(read.dropFirst(), read).map { $0 - $1 }.max() ?? 0
        #expect(largest <= UInt64(2 * ServerLoop.messagesPerTurn), "largest step between two runs of the job: \(largest)")
    }

    /// After stop, replies and signals are dropped, not sent on a closed connection.
    @Test(arguments: [false, true]) func sendsAfterStopAreDropped(onLoop: Bool) async throws {
        let bus = try PrivateBus()
        defer { bus.close() }
        let server = try await Self.start(bus, onLoop: onLoop)
        server.stop()
        for await _ in server.events {}
        server.emit(path: Self.path, interface: Self.interface, member: "Late")
        server.reply(1)
        let client = try await DBusClientConnection.connect(.address(bus.address))
        defer { client.close() }
        #expect(try await client.nameOwner(Self.name) == nil)
    }
}
