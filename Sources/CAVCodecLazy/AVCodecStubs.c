// The libav* functions AudioGraphKit calls, each resolved from FFmpeg with dlsym on first use (CLazyLibrary).
#include "CAVCodecLazy.h"
#include "CLazyLibrary.h"
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/channel_layout.h>
#include <stdio.h>

// libavformat's handle also answers for libavcodec and libavutil (its dependencies).
static AGLazyLibrary ffmpeg = AG_LAZY_LIBRARY("libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR));

int ag_avcodec_load(char *error, size_t size) {
    if (ag_lazy_library_load(&ffmpeg)) return 1;
    snprintf(error, size, "%s", ffmpeg.error);
    return 0;
}

// Each stub has the header's prototype (the compiler checks it) and jumps to FFmpeg's function.
#define AG_RESOLVE(name) \
    static __typeof__(&name) resolved; \
    __typeof__(&name) f = __atomic_load_n(&resolved, __ATOMIC_ACQUIRE); \
    if (f == NULL) { f = (__typeof__(&name))ag_lazy_symbol(&ffmpeg, #name); __atomic_store_n(&resolved, f, __ATOMIC_RELEASE); }
#define AG_STUB(ret, name, params, args) ret name params { AG_RESOLVE(name) return f args; }
#define AG_STUB_VOID(name, params, args) void name params { AG_RESOLVE(name) f args; }

AG_STUB(int, av_channel_layout_copy, (AVChannelLayout *dst, const AVChannelLayout *src), (dst, src))
AG_STUB_VOID(av_channel_layout_default, (AVChannelLayout *ch_layout, int nb_channels), (ch_layout, nb_channels))
AG_STUB(int, av_find_best_stream, (AVFormatContext *ic, enum AVMediaType type, int wanted_stream_nb, int related_stream,
                                   const AVCodec **decoder_ret, int flags),
        (ic, type, wanted_stream_nb, related_stream, decoder_ret, flags))
AG_STUB(AVFrame *, av_frame_alloc, (void), ())
AG_STUB_VOID(av_frame_free, (AVFrame **frame), (frame))
AG_STUB(int, av_frame_get_buffer, (AVFrame *frame, int align), (frame, align))
AG_STUB(int, av_frame_make_writable, (AVFrame *frame), (frame))
AG_STUB(int, av_interleaved_write_frame, (AVFormatContext *s, AVPacket *pkt), (s, pkt))
AG_STUB(AVPacket *, av_packet_alloc, (void), ())
AG_STUB_VOID(av_packet_free, (AVPacket **pkt), (pkt))
AG_STUB_VOID(av_packet_rescale_ts, (AVPacket *pkt, AVRational tb_src, AVRational tb_dst), (pkt, tb_src, tb_dst))
AG_STUB_VOID(av_packet_unref, (AVPacket *pkt), (pkt))
AG_STUB(int, av_read_frame, (AVFormatContext *s, AVPacket *pkt), (s, pkt))
AG_STUB(int, av_strerror, (int errnum, char *errbuf, size_t errbuf_size), (errnum, errbuf, errbuf_size))
AG_STUB(int, av_write_trailer, (AVFormatContext *s), (s))
AG_STUB(AVCodecContext *, avcodec_alloc_context3, (const AVCodec *codec), (codec))
AG_STUB(const AVCodec *, avcodec_find_encoder, (enum AVCodecID id), (id))
AG_STUB_VOID(avcodec_free_context, (AVCodecContext **avctx), (avctx))
AG_STUB(int, avcodec_open2, (AVCodecContext *avctx, const AVCodec *codec, AVDictionary **options), (avctx, codec, options))
AG_STUB(int, avcodec_parameters_from_context, (AVCodecParameters *par, const AVCodecContext *codec), (par, codec))
AG_STUB(int, avcodec_parameters_to_context, (AVCodecContext *codec, const AVCodecParameters *par), (codec, par))
AG_STUB(int, avcodec_receive_frame, (AVCodecContext *avctx, AVFrame *frame), (avctx, frame))
AG_STUB(int, avcodec_receive_packet, (AVCodecContext *avctx, AVPacket *avpkt), (avctx, avpkt))
AG_STUB(int, avcodec_send_frame, (AVCodecContext *avctx, const AVFrame *frame), (avctx, frame))
AG_STUB(int, avcodec_send_packet, (AVCodecContext *avctx, const AVPacket *avpkt), (avctx, avpkt))
AG_STUB(int, avformat_alloc_output_context2, (AVFormatContext **ctx, const AVOutputFormat *oformat, const char *format_name,
                                              const char *filename), (ctx, oformat, format_name, filename))
AG_STUB_VOID(avformat_close_input, (AVFormatContext **s), (s))
AG_STUB(int, avformat_find_stream_info, (AVFormatContext *ic, AVDictionary **options), (ic, options))
AG_STUB_VOID(avformat_free_context, (AVFormatContext *s), (s))
AG_STUB(AVStream *, avformat_new_stream, (AVFormatContext *s, const AVCodec *c), (s, c))
AG_STUB(int, avformat_open_input, (AVFormatContext **ps, const char *url, const AVInputFormat *fmt, AVDictionary **options),
        (ps, url, fmt, options))
AG_STUB(int, avformat_write_header, (AVFormatContext *s, AVDictionary **options), (s, options))
AG_STUB(int, avio_closep, (AVIOContext **s), (s))
AG_STUB(int, avio_open, (AVIOContext **s, const char *url, int flags), (s, url, flags))
