// The ring of last frames a move replays (ar_history), without a device: what the old device
// held (its delay) comes back in order, from the ring even when it wraps.
import AudioRoutePlugin
import Testing

/// The last `count` frames `ar_history_last` gives, joined, as bytes.
private func last(_ history: inout ar_history, _ count: Int) -> [UInt8] {
    var first: UnsafeRawPointer?
    var second: UnsafeRawPointer?
    var firstCount = 0
    var secondCount = 0
    let given = ar_history_last(&history, count, &first, &firstCount, &second, &secondCount)
    #expect(given == firstCount + secondCount)
    let bytes = history.frame_bytes
    return Array(UnsafeRawBufferPointer(start: first, count: firstCount * bytes))
        + Array(UnsafeRawBufferPointer(start: second, count: secondCount * bytes))
}

/// Frames of 4 bytes numbered from `start`: frame n is [n, n, n, n] (mod 256).
private func frames(_ start: Int, _ count: Int) -> [UInt8] {
    (start..<start + count).flatMap { Array(repeating: UInt8(truncatingIfNeeded: $0), count: 4) }
}

@Suite struct PluginHistoryTests {
    @Test func theLastFramesComeBackInOrderAcrossTheWrap() {
        var history = ar_history()
        defer { ar_history_free(&history) }
        #expect(ar_history_reserve(&history, 10, 4) == 0)
        #expect(last(&history, 3).isEmpty)
        ar_history_remember(&history, frames(0, 4), 4)
        #expect(last(&history, 3) == frames(1, 3))
        #expect(last(&history, 99) == frames(0, 4))  // no more than it holds
        ar_history_remember(&history, frames(4, 9), 9)  // 13 frames in a ring of 10: it wrapped
        #expect(last(&history, 10) == frames(3, 10))
        #expect(last(&history, 7) == frames(6, 7))
        ar_history_remember(&history, frames(13, 25), 25)  // more than the ring at once
        #expect(last(&history, 10) == frames(28, 10))
        ar_history_clear(&history)
        #expect(last(&history, 10).isEmpty)
    }

    /// A new stream format (hw_params again) with a larger frame gets room for it.
    @Test func reservingAgainForLargerFramesMakesRoom() {
        var history = ar_history()
        defer { ar_history_free(&history) }
        #expect(ar_history_reserve(&history, 8, 4) == 0)
        #expect(ar_history_reserve(&history, 8, 16) == 0)
        #expect(history.allocated >= 8 * 16)
        let big = (0..<8 * 16).map { UInt8($0) }
        ar_history_remember(&history, big, 8)
        var first: UnsafeRawPointer?
        var second: UnsafeRawPointer?
        var firstCount = 0
        var secondCount = 0
        #expect(ar_history_last(&history, 8, &first, &firstCount, &second, &secondCount) == 8)
        #expect(Array(UnsafeRawBufferPointer(start: first, count: firstCount * 16)) == big)
    }
}
