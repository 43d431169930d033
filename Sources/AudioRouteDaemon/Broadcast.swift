// One producer, any number of subscribers, each with its own AsyncStream.
import Synchronization

/// Delivers every element to every current subscriber. A subscriber that
/// falls more than `bufferSize` elements behind loses the oldest ones (a
/// stuck client must not grow the daemon without bound); the count of losses
/// is kept for logs.
public final class Broadcast<Element: Sendable>: Sendable {
    private struct State {
        var next = 0
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())
    private let dropped = Atomic<Int>(0)
    public let bufferSize: Int

    public init(bufferSize: Int = 1024) { self.bufferSize = bufferSize }

    /// A stream of every element sent from now on; it ends when the
    /// broadcast finishes. Dropping the stream (or cancelling its consumer) unsubscribes.
    public func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.next
            state.next += 1
            state.subscribers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// The number of current subscribers.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Elements dropped because a subscriber was too far behind.
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }

    /// Sends `element` to every subscriber.
    public func send(_ element: Element) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for continuation in subscribers {
            if case .dropped = continuation.yield(element) { dropped.add(1, ordering: .relaxed) }
        }
    }

    /// Ends every subscriber's stream; later subscribers get an ended stream.
    public func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }
}
