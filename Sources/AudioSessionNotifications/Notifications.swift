// NotificationCenter bridging for apps ported from iOS: the AVAudioSession
// notification names and userInfo keys, posted from AudioSession's AsyncStreams.
// A separate target so that AudioSession itself stays Foundation-free.

import AudioRouteCore
import AudioSession
import Foundation

extension Notification.Name {
    /// AVAudioSession.routeChangeNotification.
    public static let audioSessionRouteChange = Notification.Name("AVAudioSessionRouteChangeNotification")
    /// AVAudioSession.interruptionNotification.
    public static let audioSessionInterruption = Notification.Name("AVAudioSessionInterruptionNotification")
    /// AVAudioSession.silenceSecondaryAudioHintNotification.
    public static let audioSessionSilenceSecondaryAudioHint = Notification.Name("AVAudioSessionSilenceSecondaryAudioHintNotification")
    /// AVAudioSession.mediaServicesWereLostNotification.
    public static let audioSessionMediaServicesWereLost = Notification.Name("AVAudioSessionMediaServicesWereLostNotification")
    /// AVAudioSession.mediaServicesWereResetNotification.
    public static let audioSessionMediaServicesWereReset = Notification.Name("AVAudioSessionMediaServicesWereResetNotification")
}

/// The userInfo keys, spelled as on iOS.
public enum AudioSessionUserInfoKey {
    /// NSNumber (UInt) of the RouteChangeReason's raw number (1 newDeviceAvailable, 2 oldDeviceUnavailable, ...).
    public static let routeChangeReason = "AVAudioSessionRouteChangeReasonKey"
    /// The `RouteDescription` before the change.
    public static let routeChangePreviousRoute = "AVAudioSessionRouteChangePreviousRouteKey"
    /// NSNumber (UInt): 1 began, 0 ended (AVAudioSession.InterruptionType).
    public static let interruptionType = "AVAudioSessionInterruptionTypeKey"
    /// NSNumber (UInt): InterruptionOptions (1 shouldResume); ended only.
    public static let interruptionOption = "AVAudioSessionInterruptionOptionKey"
    /// NSNumber (UInt): 0 default, 2 builtInMicMuted, 4 routeDisconnected (AVAudioSession.InterruptionReason); began only.
    public static let interruptionReason = "AVAudioSessionInterruptionReasonKey"
    /// NSNumber (UInt): 1 begin, 0 end (AVAudioSession.SilenceSecondaryAudioHintType).
    public static let silenceSecondaryAudioHintType = "AVAudioSessionSilenceSecondaryAudioHintTypeKey"
}

/// How one notification is posted: its name and userInfo, or nil when it has no iOS counterpart.
public func notificationContent(for notification: AudioSessionNotification) -> (name: Notification.Name, userInfo: [AnyHashable: Any]?)? {
    switch notification {
    case .routeChange(let info):
        return (.audioSessionRouteChange, [
            AudioSessionUserInfoKey.routeChangeReason: NSNumber(value: UInt(info.reason.rawNumber)),
            AudioSessionUserInfoKey.routeChangePreviousRoute: info.previousRoute,
        ])
    case .interruption(let info):
        var userInfo: [AnyHashable: Any] = [AudioSessionUserInfoKey.interruptionType: NSNumber(value: UInt(info.type == .began ? 1 : 0))]
        if info.type == .ended {
            userInfo[AudioSessionUserInfoKey.interruptionOption] = NSNumber(value: info.options.rawValue)
        } else if let reason = info.reason {
            userInfo[AudioSessionUserInfoKey.interruptionReason] = NSNumber(value: UInt(reason.rawNumber))
        }
        return (.audioSessionInterruption, userInfo)
    case .silenceSecondaryAudioHint(let type):
        return (.audioSessionSilenceSecondaryAudioHint, [AudioSessionUserInfoKey.silenceSecondaryAudioHintType: NSNumber(value: UInt(type == .begin ? 1 : 0))])
    case .mediaServicesWereLost: return (.audioSessionMediaServicesWereLost, nil)
    case .mediaServicesWereReset: return (.audioSessionMediaServicesWereReset, nil)
    case .portsChanged, .allPortsChanged, .silentModeChanged, .screenLockChanged, .ducked, .unducked, .silenced, .unsilenced, .sessionActivity: return nil
    }
}

extension AudioSession {
    /// Posts this session's notifications to `center` with the iOS names and userInfo keys,
    /// with the session as the object, until the returned task is cancelled.
    public func postNotifications(to center: NotificationCenter = .default) -> Task<Void, Never> {
        let stream = notifications
        return Task { [self] in
            for await notification in stream {
                guard let content = notificationContent(for: notification) else { continue }
                center.post(name: content.name, object: self, userInfo: content.userInfo)
            }
        }
    }
}
