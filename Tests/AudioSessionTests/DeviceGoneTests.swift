// Which output errors mean "the device is going away" (hold until the route change) and
// which fail the player. The unplug itself is exercised on a real kernel by
// scripts/test-real-kernel (the kernel fails writes with ENODEV or EBADFD before the
// route change arrives).
import AudioRouteALSA
import AudioRouteSystem
@testable import AudioSession
import Testing

@Suite struct DeviceGoneTests {
    @Test(arguments: [Errno.Code.noSuchDevice, .badFileDescriptorState, .shutDown])
    func anUnplugHoldsThePlayer(_ code: Errno.Code) {
        #expect(AudioPlayer.deviceGone(ALSAError(code: -code.rawValue, operation: "snd_pcm_writei audioroute")))
    }

    @Test(arguments: [Errno.Code.ioError, .isDirectory, .invalidArgument, .brokenPipe, .noSuchFileOrDirectory])
    func otherOutputErrorsStillFailIt(_ code: Errno.Code) {
        #expect(!AudioPlayer.deviceGone(ALSAError(code: -code.rawValue, operation: "snd_pcm_writei audioroute")))
    }
}
