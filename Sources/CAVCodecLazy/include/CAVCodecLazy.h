// FFmpeg (libavformat, libavcodec, libavutil) loaded on first use: the load call the AAC code makes first.
#ifndef AG_AVCODEC_LAZY_H
#define AG_AVCODEC_LAZY_H
#include <stddef.h>

/// Loads FFmpeg's libraries if they are not loaded yet (control threads). Returns 1 when they
/// are; 0 when they cannot be, with the reason in `error` (`size` bytes). Every libav* function
/// the project calls is defined in this target and resolved with `dlsym` on its first call, so
/// a run that reads and writes no AAC never loads FFmpeg (about 100 shared objects).
int ag_avcodec_load(char *error, size_t size);

#endif
