// Constants and helpers from libpulse that are C macros and so do not import into Swift.
#pragma once
#include <pulse/pulseaudio.h>

/// PA_VOLUME_NORM: the volume of 100 % (0 dB).
static inline pa_volume_t ag_pa_volume_norm(void) { return PA_VOLUME_NORM; }
/// PA_INVALID_INDEX: an index that names nothing.
static inline uint32_t ag_pa_invalid_index(void) { return PA_INVALID_INDEX; }
/// PA_SAMPLE_FLOAT32NE: native-endian 32-bit float samples.
static inline pa_sample_format_t ag_pa_sample_float32ne(void) { return PA_SAMPLE_FLOAT32NE; }
/// PA_CONTEXT_IS_GOOD(state)
static inline int ag_pa_context_is_good(pa_context_state_t s) { return PA_CONTEXT_IS_GOOD(s); }
/// PA_STREAM_IS_GOOD(state)
static inline int ag_pa_stream_is_good(pa_stream_state_t s) { return PA_STREAM_IS_GOOD(s); }
