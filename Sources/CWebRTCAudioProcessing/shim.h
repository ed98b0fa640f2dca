// webrtc-audio-processing 0.3 (C++: webrtc::AudioProcessing); only CVoiceProcessing's C++ includes it.
#pragma once
#ifdef __cplusplus
#include <webrtc/modules/audio_processing/include/audio_processing.h>
#endif
