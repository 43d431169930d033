// NotificationCenter is the thing under test here, so this file needs full Foundation.
import AudioRouteCore
import AudioSession
import AudioSessionNotifications
import Foundation
import Testing

/// The iOS names and userInfo keys and values of the NotificationCenter bridge.
@Suite struct NotificationBridgeTests {
    static let speaker = PortDescription(
        uid: "spk", portType: .builtInSpeaker, portName: "Speaker", direction: .output, device: "internal", priority: 0, sequence: 1)

    @Test func routeChangeCarriesTheReasonNumberAndThePreviousRoute() throws {
        let previous = RouteDescription(outputs: [Self.speaker])
        let info = RouteChangeInfo(reason: .oldDeviceUnavailable, previousRoute: previous, currentRoute: RouteDescription())
        let content = try #require(notificationContent(for: .routeChange(info)))
        #expect(content.name.rawValue == "AVAudioSessionRouteChangeNotification")
        #expect((content.userInfo?["AVAudioSessionRouteChangeReasonKey"] as? NSNumber)?.uintValue == 2)
        #expect(content.userInfo?["AVAudioSessionRouteChangePreviousRouteKey"] as? RouteDescription == previous)
    }

    @Test func interruptionsUseTheIOSNumbers() throws {
        let began = try #require(notificationContent(for: .interruption(InterruptionInfo(type: .began, reason: .routeDisconnected, options: []))))
        #expect(began.name.rawValue == "AVAudioSessionInterruptionNotification")
        #expect((began.userInfo?["AVAudioSessionInterruptionTypeKey"] as? NSNumber)?.uintValue == 1)
        #expect((began.userInfo?["AVAudioSessionInterruptionReasonKey"] as? NSNumber)?.uintValue == 4)
        #expect(began.userInfo?["AVAudioSessionInterruptionOptionKey"] == nil)
        let muted = try #require(notificationContent(for: .interruption(InterruptionInfo(type: .began, reason: .builtInMicMuted, options: []))))
        #expect((muted.userInfo?["AVAudioSessionInterruptionReasonKey"] as? NSNumber)?.uintValue == 2)
        // Never set: no app is suspended here (docs/client.md).
        #expect(muted.userInfo?["AVAudioSessionInterruptionWasSuspendedKey"] == nil)
        let ended = try #require(notificationContent(for: .interruption(InterruptionInfo(type: .ended, reason: nil, options: .shouldResume))))
        #expect((ended.userInfo?["AVAudioSessionInterruptionTypeKey"] as? NSNumber)?.uintValue == 0)
        #expect((ended.userInfo?["AVAudioSessionInterruptionOptionKey"] as? NSNumber)?.uintValue == 1)
    }

    @Test func otherNames() throws {
        #expect(notificationContent(for: .mediaServicesWereLost)?.name.rawValue == "AVAudioSessionMediaServicesWereLostNotification")
        #expect(notificationContent(for: .mediaServicesWereReset)?.name.rawValue == "AVAudioSessionMediaServicesWereResetNotification")
        let hint = try #require(notificationContent(for: .silenceSecondaryAudioHint(.begin)))
        #expect((hint.userInfo?["AVAudioSessionSilenceSecondaryAudioHintTypeKey"] as? NSNumber)?.uintValue == 1)
        #expect(notificationContent(for: .ducked) == nil)
    }
}
