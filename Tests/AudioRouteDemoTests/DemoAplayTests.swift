@testable import AudioRouteDemo
import Testing

/// The numbered frames the demo feeds aplay, and how a device file's share of them is read
/// back and judged: the end-to-end test's verdict rests on these.
@Suite struct DemoAplayTests {
    static func span(_ bytes: [UInt8]) -> DemoAplay.Span? { DemoAplay.span(bytes, file: "f.raw", device: "dev") }

    @Test func numberedFramesReadBackAsTheirSpan() {
        let bytes = DemoAplay.frames(from: 70_000, count: 3_000)  // across a 65536 boundary
        let span = Self.span(bytes)
        #expect(span?.first == 70_000)
        #expect(span?.count == 3_000)
        #expect(span?.silence == 0)
        #expect(span?.ordered == true)
    }

    @Test func closingSilenceIsCountedAndAnythingElseIsNotInOrder() {
        let padded = DemoAplay.frames(from: 0, count: 100) + [UInt8](repeating: 0, count: 40)
        #expect(Self.span(padded)?.silence == 10)
        #expect(Self.span(padded)?.ordered == true)
        // A frame missing in the middle, or a frame twice.
        let gap = DemoAplay.frames(from: 0, count: 50) + DemoAplay.frames(from: 51, count: 49)
        #expect(Self.span(gap)?.ordered == false)
        let twice = DemoAplay.frames(from: 0, count: 50) + DemoAplay.frames(from: 49, count: 51)
        #expect(Self.span(twice)?.ordered == false)
        // The music's tone (equal channels) is not aplay's.
        #expect(Self.span([1, 0, 1, 0, 2, 0, 2, 0])?.ordered == false)
        #expect(Self.span([]) == nil)
    }

    @Test func theResultNeedsTheNextFrameOnTheNewPort() {
        func result(_ spans: [(String, Int, Int)], written: Int = 300, exit: Int32? = 0) -> AplayResult {
            AplayResult(
                pid: 1, exitStatus: exit, written: written, expected: ["demo_builtin", "demo_headphones"],
                spans: spans.map { DemoAplay.Span(file: $0.0 + ".raw", device: $0.0, first: $0.1, count: $0.2, silence: 0, ordered: true) })
        }
        #expect(result([("demo_builtin", 0, 120), ("demo_headphones", 120, 180)]).ok)
        #expect(!result([("demo_builtin", 0, 120), ("demo_headphones", 121, 179)]).ok)  // one lost
        #expect(!result([("demo_builtin", 0, 120), ("demo_headphones", 119, 181)]).ok)  // one twice
        #expect(!result([("demo_builtin", 0, 120), ("demo_headphones", 100, 180)]).ok)  // 20 twice, the last 20 lost: the count is right
        #expect(!result([("demo_builtin", 0, 300)]).ok)  // never moved
        #expect(!result([("demo_headphones", 0, 120), ("demo_builtin", 120, 180)]).ok)  // the wrong way
        #expect(!result([("demo_builtin", 0, 120), ("demo_headphones", 120, 180)], exit: 1).ok)
        #expect(!result([("demo_builtin", 0, 120), ("demo_headphones", 120, 180)], exit: nil).ok)
        #expect(!result([("demo_builtin", 0, 120), ("demo_headphones", 120, 170)]).ok)  // fewer than written
    }
}
