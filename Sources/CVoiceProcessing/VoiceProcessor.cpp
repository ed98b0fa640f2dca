// The C face of webrtc::AudioProcessing (CVoiceProcessing.h): a processor, its settings, one 10 ms frame at a time.
#include "CVoiceProcessing.h"
#include "CLazyLibrary.h"

// The defines of webrtc-audio-processing.pc's Cflags (SwiftPM passes on only its -I).
#ifndef WEBRTC_POSIX
#define WEBRTC_POSIX
#endif
#ifndef WEBRTC_AUDIO_PROCESSING_ONLY_BUILD
#define WEBRTC_AUDIO_PROCESSING_ONLY_BUILD
#endif

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <new>
#include <webrtc/modules/audio_processing/include/audio_processing.h>

// webrtc-audio-processing is loaded on first use (CLazyLibrary), not at every start of the CLI: its one
// function called by name is AudioProcessing::Create; everything else is a virtual call on what it returns.
static AGLazyLibrary webrtc_library = AG_LAZY_LIBRARY("libwebrtc_audio_processing.so.1");
typedef webrtc::AudioProcessing *(*AGAudioProcessingCreate)(const webrtc::Config &);

/// AudioProcessing::Create from the library, loading it first; nullptr with the reason in `error` when it
/// cannot be loaded (or $AG_LAZY_LIBRARY_MISSING names it, the tests' hook).
static AGAudioProcessingCreate ag_webrtc_create_function(char *error, size_t errorSize) {
    const char *missing = getenv("AG_LAZY_LIBRARY_MISSING");
    if (missing != nullptr && strstr(missing, webrtc_library.sonames[0]) != nullptr) {
        snprintf(error, errorSize, "cannot load webrtc-audio-processing: %s: cannot open shared object file (AG_LAZY_LIBRARY_MISSING)",
                 webrtc_library.sonames[0]);
        return nullptr;
    }
    if (!ag_lazy_library_load(&webrtc_library)) {
        snprintf(error, errorSize, "cannot load webrtc-audio-processing: %s", webrtc_library.error);
        return nullptr;
    }
    // webrtc::AudioProcessing::Create(webrtc::Config const&), a static member: an ordinary function.
    void *create = dlsym(webrtc_library.handle, "_ZN6webrtc15AudioProcessing6CreateERKNS_6ConfigE");
    if (create == nullptr) {
        snprintf(error, errorSize, "cannot load webrtc-audio-processing: %s has no webrtc::AudioProcessing::Create",
                 webrtc_library.sonames[0]);
        return nullptr;
    }
    return reinterpret_cast<AGAudioProcessingCreate>(create);
}

struct AGVoiceProcessor {
    webrtc::AudioProcessing *apm;
    webrtc::StreamConfig capture;
    webrtc::StreamConfig render;
    int frameCount;
};

extern "C" AGVoiceProcessor *ag_voice_processor_create(int sampleRate, int captureChannels, int renderChannels,
                                                       char *error, size_t errorSize) {
    if (sampleRate < 8000 || sampleRate > 384000 || sampleRate % 100 != 0) {
        snprintf(error, errorSize, "webrtc-audio-processing needs a rate that is a multiple of 100 Hz (8 to 384 kHz), not %d Hz",
                 sampleRate);
        return nullptr;
    }
    if (captureChannels < 1 || captureChannels > 8 || renderChannels < 1 || renderChannels > 2) {
        snprintf(error, errorSize, "webrtc-audio-processing takes 1 to 8 captured channels and 1 or 2 played ones, not %d and %d",
                 captureChannels, renderChannels);
        return nullptr;
    }
    AGAudioProcessingCreate create = ag_webrtc_create_function(error, errorSize);
    if (create == nullptr) return nullptr;
    webrtc::Config config;
    config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
    config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
    // The experimental AGC drives an analog microphone level; there is none here.
    config.Set<webrtc::ExperimentalAgc>(new webrtc::ExperimentalAgc(false));
    webrtc::AudioProcessing *apm = create(config);
    if (apm == nullptr) {
        snprintf(error, errorSize, "webrtc::AudioProcessing::Create failed");
        return nullptr;
    }
    AGVoiceProcessor *p = new (std::nothrow) AGVoiceProcessor;
    if (p == nullptr) {
        delete apm;
        snprintf(error, errorSize, "out of memory");
        return nullptr;
    }
    p->apm = apm;
    p->capture = webrtc::StreamConfig(sampleRate, captureChannels);
    p->render = webrtc::StreamConfig(sampleRate, renderChannels);
    p->frameCount = sampleRate / 100;
    webrtc::ProcessingConfig processing = {{p->capture, p->capture, p->render, p->render}};
    int status = apm->Initialize(processing);
    if (status != webrtc::AudioProcessing::kNoError) {
        snprintf(error, errorSize, "webrtc::AudioProcessing::Initialize failed (error %d)", status);
        delete apm;
        delete p;
        return nullptr;
    }
    apm->echo_cancellation()->set_suppression_level(webrtc::EchoCancellation::kModerateSuppression);
    apm->echo_cancellation()->enable_metrics(true);
    apm->echo_cancellation()->enable_delay_logging(true);
    apm->noise_suppression()->set_level(webrtc::NoiseSuppression::kModerate);
    apm->gain_control()->set_mode(webrtc::GainControl::kAdaptiveDigital);
    apm->gain_control()->set_target_level_dbfs(3);
    apm->gain_control()->set_compression_gain_db(9);
    apm->gain_control()->enable_limiter(true);
    apm->voice_detection()->Enable(true);
    return p;
}

extern "C" void ag_voice_processor_destroy(AGVoiceProcessor *p) {
    if (p == nullptr) return;
    delete p->apm;
    delete p;
}

extern "C" int ag_voice_processor_frame_count(const AGVoiceProcessor *p) { return p->frameCount; }

extern "C" int ag_voice_processor_configure(AGVoiceProcessor *p, int echoCancellation, int noiseSuppression,
                                            int gainControl, int highPassFilter) {
    int status;
    if ((status = p->apm->echo_cancellation()->Enable(echoCancellation != 0)) != 0) return status;
    if ((status = p->apm->noise_suppression()->Enable(noiseSuppression != 0)) != 0) return status;
    if ((status = p->apm->gain_control()->Enable(gainControl != 0)) != 0) return status;
    return p->apm->high_pass_filter()->Enable(highPassFilter != 0);
}

extern "C" int ag_voice_processor_process_render(AGVoiceProcessor *p, const float *const *channels) {
    // The reverse stream is only analysed here (no intelligibility enhancer): out = in.
    return p->apm->AnalyzeReverseStream(channels, (size_t)p->frameCount, p->render.sample_rate_hz(),
                                        p->render.num_channels() == 1 ? webrtc::AudioProcessing::kMono
                                                                       : webrtc::AudioProcessing::kStereo);
}

extern "C" int ag_voice_processor_process_capture(AGVoiceProcessor *p, float *const *channels, int delayMilliseconds) {
    p->apm->set_stream_delay_ms(delayMilliseconds);
    return p->apm->ProcessStream(channels, p->capture, p->capture, channels);
}

extern "C" int ag_voice_processor_capture_has_voice(const AGVoiceProcessor *p) {
    return p->apm->voice_detection()->stream_has_voice() ? 1 : 0;
}

extern "C" int ag_voice_processor_echo_metrics(AGVoiceProcessor *p, float *echoReturnLoss, float *echoReturnLossEnhancement) {
    webrtc::EchoCancellation::Metrics m;
    int status = p->apm->echo_cancellation()->GetMetrics(&m);
    if (status != 0) return status;
    *echoReturnLoss = (float)m.echo_return_loss.instant;
    *echoReturnLossEnhancement = (float)m.echo_return_loss_enhancement.instant;
    return 0;
}
