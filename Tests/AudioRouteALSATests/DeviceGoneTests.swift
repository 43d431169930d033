// Which write errors mean a device that went away: an EIO counts only when the PCM's state
// says DISCONNECTED (dmix's report of a removed card, docs/decisions.md, "Shared devices").
// A removed card needs a kernel (the real-kernel bench); here, a PCM that is still there.
import AudioRouteSystem
@testable import AudioRouteALSA
import Testing

@Test func anEIOIsADeviceGoneOnlyWhenThePCMIsDisconnected() throws {
    var configuration = try ALSAConfiguration()
    try configuration.load(text: "pcm.!gone_test { type null }\n")
    let pcm = try PCM(name: "gone_test", configuration: configuration)
    let handle = pcm.handle
    let io = -Errno.Code.ioError.rawValue
    let start = MonotonicClock.milliseconds()
    #expect(PCM.disconnected(handle, io) == io, "an EIO from a PCM that is there stays EIO")
    #expect(MonotonicClock.milliseconds() - start < 2_000)
    for code in [Errno.Code.brokenPipe, .noSuchDevice, .interrupted] {
        #expect(PCM.disconnected(handle, -code.rawValue) == -code.rawValue, "\(code) is passed on as it is")
    }
}
