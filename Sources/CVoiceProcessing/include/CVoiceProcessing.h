// A C face over webrtc-audio-processing's C++ AudioProcessing (voice processing: echo cancellation, noise suppression, gain control).
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One webrtc::AudioProcessing instance: a capture (near-end) stream processed in 10 ms frames
/// against a render (far-end) stream.
typedef struct AGVoiceProcessor AGVoiceProcessor;

/// Makes a processor for `captureChannels` captured channels and `renderChannels` played ones (1 or 2) at
/// `sampleRate` (frames of sampleRate / 100). On failure returns NULL with a reason in `error`.
/// Allocates; control thread.
AGVoiceProcessor *ag_voice_processor_create(int sampleRate, int captureChannels, int renderChannels,
                                            char *error, size_t errorSize);

/// Frees what ag_voice_processor_create made.
void ag_voice_processor_destroy(AGVoiceProcessor *processor);

/// The frames in one 10 ms frame (sampleRate / 100).
int ag_voice_processor_frame_count(const AGVoiceProcessor *processor);

/// Turns the components on or off: echo cancellation (webrtc's AEC, moderate suppression, extended
/// filter, delay-agnostic), noise suppression (moderate), gain control (adaptive digital, -3 dBFS
/// target, 9 dB compression, limiter), the high-pass filter. Returns 0 or webrtc's error code.
/// Not while a process call runs on another thread.
int ag_voice_processor_configure(AGVoiceProcessor *processor, int echoCancellation, int noiseSuppression,
                                 int gainControl, int highPassFilter);

/// Gives one 10 ms frame of the render (far-end) stream: `channels` holds renderChannels pointers
/// to frame_count floats in [-1, 1]. Returns 0 or webrtc's error code.
int ag_voice_processor_process_render(AGVoiceProcessor *processor, const float *const *channels);

/// Processes one 10 ms frame of the capture stream in place (`channels`: captureChannels
/// pointers to frame_count floats). `delayMilliseconds`: the time from a far-end frame given to
/// process_render to its echo reaching this call (webrtc's stream delay). Returns 0 or webrtc's
/// error code.
int ag_voice_processor_process_capture(AGVoiceProcessor *processor, float *const *channels, int delayMilliseconds);

/// Whether webrtc's voice activity detector heard voice in the last capture frame (1 or 0).
int ag_voice_processor_capture_has_voice(const AGVoiceProcessor *processor);

/// webrtc's echo metrics since the last call, dB (echo return loss, its enhancement); returns 0
/// or webrtc's error code (the metrics need echo cancellation on).
int ag_voice_processor_echo_metrics(AGVoiceProcessor *processor, float *echoReturnLoss, float *echoReturnLossEnhancement);

#ifdef __cplusplus
}
#endif
