// Generated from AudioRouteIPC's contract (Sources/AudioRouteIPC/CContract.swift) by
// scripts/gen-c-contract. Do not edit: CContractTests fails when this file and the Swift
// contract differ. docs/dbus-api.md explains the API; docs/alsa.md the route file.
#ifndef AUDIOROUTE_CONTRACT_H
#define AUDIOROUTE_CONTRACT_H

// The daemon on the bus.
#define AR_BUS_NAME "org.audioroute.AudioRoute1"
#define AR_MANAGER_PATH "/org/audioroute/AudioRoute1"
#define AR_SESSIONS_PATH "/org/audioroute/AudioRoute1/session"
#define AR_MANAGER_INTERFACE "org.audioroute.AudioRoute1"
#define AR_SESSION_INTERFACE "org.audioroute.Session1"

// Methods: the name, then the signatures of the arguments (_IN) and of the reply (_OUT).
#define AR_METHOD_OPEN_SESSION "OpenSession"
#define AR_METHOD_OPEN_SESSION_IN "s"
#define AR_METHOD_OPEN_SESSION_OUT "o"
#define AR_METHOD_SET_PORT_PRIORITY "SetPortPriority"
#define AR_METHOD_SET_PORT_PRIORITY_IN "si"
#define AR_METHOD_SET_PORT_PRIORITY_OUT ""
#define AR_METHOD_SET_SILENT_MODE "SetSilentMode"
#define AR_METHOD_SET_SILENT_MODE_IN "b"
#define AR_METHOD_SET_SILENT_MODE_OUT ""
#define AR_METHOD_EXPLAIN "Explain"
#define AR_METHOD_EXPLAIN_IN ""
#define AR_METHOD_EXPLAIN_OUT "ssa(sas)"
#define AR_METHOD_DATA_SOURCES "DataSources"
#define AR_METHOD_DATA_SOURCES_IN "s"
#define AR_METHOD_DATA_SOURCES_OUT "a(sss)ss"
#define AR_METHOD_SET_CATEGORY "SetCategory"
#define AR_METHOD_SET_CATEGORY_IN "ssas"
#define AR_METHOD_SET_CATEGORY_OUT ""
#define AR_METHOD_SET_ACTIVE "SetActive"
#define AR_METHOD_SET_ACTIVE_IN "bb"
#define AR_METHOD_SET_ACTIVE_OUT ""
#define AR_METHOD_OVERRIDE_OUTPUT "OverrideOutput"
#define AR_METHOD_OVERRIDE_OUTPUT_IN "s"
#define AR_METHOD_OVERRIDE_OUTPUT_OUT ""
#define AR_METHOD_SET_PREFERRED_INPUT "SetPreferredInput"
#define AR_METHOD_SET_PREFERRED_INPUT_IN "s"
#define AR_METHOD_SET_PREFERRED_INPUT_OUT ""
#define AR_METHOD_SET_PREFERS_INTERRUPTION_ON_ROUTE_DISCONNECT "SetPrefersInterruptionOnRouteDisconnect"
#define AR_METHOD_SET_PREFERS_INTERRUPTION_ON_ROUTE_DISCONNECT_IN "b"
#define AR_METHOD_SET_PREFERS_INTERRUPTION_ON_ROUTE_DISCONNECT_OUT ""
#define AR_METHOD_CLOSE "Close"
#define AR_METHOD_CLOSE_IN ""
#define AR_METHOD_CLOSE_OUT ""
#define AR_METHOD_SET_PREFERRED_DATA_SOURCE "SetPreferredDataSource"
#define AR_METHOD_SET_PREFERRED_DATA_SOURCE_IN "ss"
#define AR_METHOD_SET_PREFERRED_DATA_SOURCE_OUT ""
#define AR_METHOD_PREFERRED_DATA_SOURCE "PreferredDataSource"
#define AR_METHOD_PREFERRED_DATA_SOURCE_IN "s"
#define AR_METHOD_PREFERRED_DATA_SOURCE_OUT "s"

// Signals: the name, then the signature.
#define AR_SIGNAL_ROUTE_CHANGED "RouteChanged"
#define AR_SIGNAL_ROUTE_CHANGED_SIGNATURE "s(a(ssssssit)a(ssssssit))(a(ssssssit)a(ssssssit))"
#define AR_SIGNAL_PORTS_CHANGED "PortsChanged"
#define AR_SIGNAL_PORTS_CHANGED_SIGNATURE "s(ssssssit)"
#define AR_SIGNAL_SILENT_MODE_CHANGED "SilentModeChanged"
#define AR_SIGNAL_SILENT_MODE_CHANGED_SIGNATURE "b"
#define AR_SIGNAL_ALL_PORTS_CHANGED "AllPortsChanged"
#define AR_SIGNAL_ALL_PORTS_CHANGED_SIGNATURE "s(ssssssits)"
#define AR_SIGNAL_SCREEN_LOCK_CHANGED "ScreenLockChanged"
#define AR_SIGNAL_SCREEN_LOCK_CHANGED_SIGNATURE "b"
#define AR_SIGNAL_INTERRUPTION "Interruption"
#define AR_SIGNAL_INTERRUPTION_SIGNATURE "ssb"
#define AR_SIGNAL_DUCKED "Ducked"
#define AR_SIGNAL_DUCKED_SIGNATURE ""
#define AR_SIGNAL_UNDUCKED "Unducked"
#define AR_SIGNAL_UNDUCKED_SIGNATURE ""
#define AR_SIGNAL_SILENCE_SECONDARY_AUDIO_HINT "SilenceSecondaryAudioHint"
#define AR_SIGNAL_SILENCE_SECONDARY_AUDIO_HINT_SIGNATURE "s"
#define AR_SIGNAL_SILENCED "Silenced"
#define AR_SIGNAL_SILENCED_SIGNATURE ""
#define AR_SIGNAL_UNSILENCED "Unsilenced"
#define AR_SIGNAL_UNSILENCED_SIGNATURE ""

// An Interruption's kind and reason (the signal's first two arguments).
#define AR_INTERRUPTION_BEGAN "began"
#define AR_INTERRUPTION_ENDED "ended"
#define AR_REASON_DEFAULT "default"
#define AR_REASON_ROUTE_DISCONNECTED "routeDisconnected"

// The session's names, as the spec spells them, each list ending in NULL; the options' bits, in the same order.
#define AR_CATEGORY_NAMES "ambient", "soloAmbient", "playback", "record", "playAndRecord", "multiRoute", "audioProcessing", NULL
#define AR_MODE_NAMES "default", "voiceChat", "gameChat", "videoRecording", "measurement", "moviePlayback", "videoChat", "spokenAudio", "voicePrompt", NULL
#define AR_OPTION_NAMES "mixWithOthers", "duckOthers", "allowBluetooth", "defaultToSpeaker", "interruptSpokenAudioAndMixWithOthers", "allowBluetoothA2DP", "allowAirPlay", "overrideMutedMicrophoneInterruption", NULL
#define AR_OPTION_VALUES 0x1, 0x2, 0x4, 0x8, 0x11, 0x20, 0x40, 0x80, 0

// The route file: the PCMs it defines, and where it is.
#define AR_ROUTE_OUTPUT_PCM "audioroute_route"
#define AR_ROUTE_INPUT_PCM "audioroute_route_capture"
#define AR_ROUTE_FURTHER_OUTPUT_PCM_PREFIX "audioroute_route_output_"
#define AR_MAX_OUTPUTS 8
#define AR_ROUTE_FILE_IN_RUNTIME_DIRECTORY "audioroute/asound.conf"
#define AR_ROUTE_FILE_SYSTEM "/run/audioroute/asound.conf"

#endif
